// Processes the fault tests (test/faults) kill: the service as a child process with shortened
// runtime options (test/support/fault-service.ts, run through tsx), a private PostgreSQL server (initdb + pg_ctl
// into a temp dir, its own port and socket dir, run as the postgres user when we are root) and a
// private redis-server (its own port, no persistence). Each start returns a handle whose stop()
// kills what it started and removes its directory; tests call them in afterAll, even on failure.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { type ChildService, spawnKept } from './child-process.js';

/** The service (`node --import tsx test/support/fault-service.ts`) with createRuntime options. */
export function startFaultService(env: Record<string, string>, runtimeOptions: object = {}): ChildService {
  return spawnKept(['--import', 'tsx', 'test/support/fault-service.ts'], {
    ...env,
    FAULT_RUNTIME_OPTIONS: JSON.stringify(runtimeOptions),
  });
}

/** Kills a child with -9 (if it still runs) and waits for it to be gone. */
export async function killHard(c: { child: ChildProcess; exited: Promise<unknown> } | null | undefined) {
  if (!c) return;
  if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await c.exited;
}

const PG_BIN = '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;

// initdb refuses root: run the server's tools as the postgres user then.
const pgCommand = (bin: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, bin), ...args]] : [join(PG_BIN, bin), args];
const runPgSync = (bin: string, args: string[]) =>
  void execFileSync(...pgCommand(bin, args), { stdio: ['ignore', 'pipe', 'pipe'] });
/** Asynchronous, so the test's clients keep running while the server starts or stops. */
const runPg = async (bin: string, args: string[]) => void (await promisify(execFile)(...pgCommand(bin, args)));

export interface PrivatePostgres {
  port: number;
  /** The URL of database `name` on this server. */
  url(name?: string): string;
  /** pg_ctl start (waits until it accepts connections). */
  start(): Promise<void>;
  /** pg_ctl stop -m fast (connections are closed, in-flight statements fail). */
  stop(): Promise<void>;
  /** Stops the server (immediate) and removes its directory. */
  destroy(): void;
}

/** A PostgreSQL 15 server of the test's own: initdb into a temp dir, listening on 127.0.0.1:port. */
export function privatePostgres(port: number): PrivatePostgres {
  const dir = mkdtempSync(join(tmpdir(), 'svc-private-pg-'));
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const data = join(dir, 'data');
  runPgSync('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const ctlArgs = (args: string[]) => ['-D', data, '-w', '-t', '60', ...args];
  const ctl = (...args: string[]) => runPg('pg_ctl', ctlArgs(args));
  return {
    port,
    url: (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`,
    start: () => ctl('-o', opts, '-l', join(dir, 'log'), 'start'),
    stop: () => ctl('-m', 'fast', 'stop'),
    destroy: () => {
      try {
        runPgSync('pg_ctl', ctlArgs(['-m', 'immediate', 'stop']));
      } catch {
        // not running
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates database `name` on a server (as its superuser). */
export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE "${name}"`);
  } finally {
    await c.end();
  }
}

export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  /** kill -9 and wait for the exit. */
  kill(): Promise<void>;
  destroy(): Promise<void>;
}

/** A redis-server of the test's own on 127.0.0.1:port, without persistence. */
export function privateRedis(port: number): PrivateRedis {
  const dir = mkdtempSync(join(tmpdir(), 'svc-private-redis-'));
  let proc: { child: ChildProcess; exited: Promise<unknown> } | null = null;
  const up = async () => {
    const until = Date.now() + 20_000;
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.write('PING\r\n');
        });
        s.once('data', (d: Buffer) => {
          s.destroy();
          resolve(d.toString().startsWith('+PONG'));
        });
        s.once('error', () => resolve(false));
      });
      if (ok) return;
      if (Date.now() > until) throw new Error(`redis on ${port} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const child = spawn(
        '/usr/bin/redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: 'ignore' },
      );
      proc = { child, exited: new Promise((r) => child.on('exit', r)) };
      await up();
    },
    async kill() {
      await killHard(proc);
      proc = null;
    },
    async destroy() {
      await killHard(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One Redis command over RESP (no client library): the raw reply. */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let reply = '';
    s.once('connect', () =>
      s.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`),
    );
    s.on('data', (d: Buffer) => {
      reply += d.toString();
      // A whole reply: an array header and its lines, or one line; enough for KEYS and PING.
      const m = /^\*(\d+)\r\n/.exec(reply);
      if (!m || reply.split('\r\n').length - 1 >= 1 + 2 * Number(m[1])) {
        s.destroy();
        resolve(reply);
      }
    });
    s.once('error', reject);
    s.setTimeout(5000, () => {
      s.destroy();
      reject(new Error(`redis on ${port}: no whole reply to ${args[0]}`));
    });
  });
}

export interface PrivateNats {
  port: number;
  url: string;
  start(): Promise<void>;
  /** kill -9 and wait for the exit. */
  kill(): Promise<void>;
}

/** A nats-server of the test's own on 127.0.0.1:port (`which nats-server`). */
export function privateNats(port: number, bin = '/usr/sbin/nats-server'): PrivateNats {
  let proc: { child: ChildProcess; exited: Promise<unknown> } | null = null;
  const up = async () => {
    const until = Date.now() + 20_000;
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('data', (d: Buffer) => {
          s.destroy();
          resolve(d.toString().startsWith('INFO'));
        });
        s.once('error', () => resolve(false));
      });
      if (ok) return;
      if (Date.now() > until) throw new Error(`nats on ${port} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    async start() {
      const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      proc = { child, exited: new Promise((r) => child.on('exit', r)) };
      await up();
    },
    async kill() {
      await killHard(proc);
      proc = null;
    },
  };
}
