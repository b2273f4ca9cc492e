import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Once per run: the migrated database each test database is copied from.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Three files at a time on CI's two cores: the files wait a good part of their time (for job
    // workers, retry schedules, child processes, mail and IMAP servers), and a third file uses
    // the CPU meanwhile. Measured (embedded, PostgreSQL): 2 workers 227 s, 164 s; 3 workers
    // 184 s, 144 s.
    maxWorkers: 3,
    fileParallelism: true,
    // The files of a worker share its process and modules: importing the service's ~200 modules
    // and their dependencies in a new process cost ~3.5 s of CPU per file (~200 s of the suite).
    // So a file must leave nothing behind: test/support/setup.ts stops (and fails) what it left running,
    // and whatever a file plugs into a service's Deps stays with that service.
    isolate: false,
    setupFiles: ['test/support/setup.ts'],
    // expect.poll waits up to 10 s (vitest's default is 1 s): what it waits for in a browser test
    // (a list after a page load, a live update) can take more than a second on CI's two busy cores.
    // Only a failing poll waits that long.
    expect: { poll: { timeout: 10_000 } },
  },
});
