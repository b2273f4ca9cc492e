import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Once per run: the migrated database each test database is copied from.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two files at a time keeps each file's embedded database responsive.
    maxWorkers: 2,
    fileParallelism: true,
    // The files of a worker share its process and modules: importing the service's ~200 modules
    // and their dependencies in a new process cost ~3.5 s of CPU per file (~200 s of the suite).
    // So a file must leave nothing behind: test/setup.ts stops (and fails) what it left running,
    // and module-level settings a file changes (setDecisionEngine, …) it puts back itself.
    isolate: false,
    setupFiles: ['test/setup.ts'],
  },
});
