// The real service in a child process (`node dist/main.js`, what `npm start` runs; the test run's
// global setup builds dist/ first when a source is newer), for tests that start it with no
// settings, stop it the hard way or need several processes: start it, wait until it answers, pick
// a port for it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { type ExpectStatic, expect as globalExpect } from 'vitest';

export interface ChildService {
  child: ReturnType<typeof spawn>;
  exited: Promise<number | null>;
  out(): string;
  err(): string;
}

/** `npm start` (main), `npm run migrate` (migrate) or `npm run gateway` (gateway-main), built. */
export function startProcess(
  env: Record<string, string>,
  entry: 'main' | 'migrate' | 'gateway-main' = 'main',
): ChildService {
  return spawnKept([`dist/${entry}.js`], env);
}

/** Node with `args` and LOG_LEVEL=warn plus `env`, its output kept. */
export function spawnKept(args: string[], env: Record<string, string>): ChildService {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return { child, exited, out: () => out, err: () => err };
}

/**
 * Waits until the process on this port answers /healthz (a fresh start migrates). The wait is long
 * because CI runs three test files beside the children on two cores; a start takes seconds.
 */
export const healthy = (port: number, expect: ExpectStatic = globalExpect) =>
  expect
    .poll(
      () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.status,
          () => 0,
        ),
      { timeout: 150_000, interval: 250 },
    )
    .toBe(200);

/**
 * A port free on 127.0.0.1, below the range the system hands out for port 0 (32768 and up on
 * Linux): the other test files' servers listen on such ports, and a port taken by one of them
 * would answer healthy() for the child (their /healthz says ok too) while the child cannot listen.
 */
const handedOut = new Set<number>();
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue; // tests of one file may run at the same time
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) {
      handedOut.add(port);
      return port;
    }
  }
}
