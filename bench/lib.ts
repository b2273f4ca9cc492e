// What the stand-alone benches share (bench:webhooks, bench:inbound): settings from the
// environment, the service as a child process running npm start's code, small HTTP calls, and
// the figures (CPU time of a process, percentiles).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const HOST = '127.0.0.1';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A whole number from the environment, `dflt` when unset; out of range is an error. */
export function envInt(name: string, dflt: number, min: number, max: number): number {
  const v = process.env[name];
  if (v === undefined || v.trim() === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

export async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, HOST, r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** One JSON request; the body parsed when it is JSON. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const r = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: r.status, body: parsed };
}

export function expectStatus(r: { status: number; body: unknown }, status: number, what: string): void {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
}

/** utime + stime of a process in seconds (Linux). */
export function cpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The service as a child process (src/main.ts), its last output lines, and how to stop it. */
export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  lines: string[];
  stop(): Promise<void>;
}

/**
 * Starts npm start's code with `env` on a free loopback port (NATS, Redis and PUBLIC_URL of the
 * caller's environment left out) and waits for /healthz, at most 60 s.
 */
export async function startServiceProcess(env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<ServiceProcess> {
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const full: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST, ...env };
  for (const k of ['NATS_URL', 'REDIS_URL', 'DATABASE_IN_MEMORY', 'PUBLIC_URL']) if (!(k in env)) delete full[k];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const s of [child.stdout, child.stderr]) {
    s?.setEncoding('utf8');
    s?.on('data', (c: string) => {
      lines.push(...c.split('\n').filter(Boolean));
      if (lines.length > 2000) lines.splice(0, lines.length - 2000);
    });
  }
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await Promise.race([new Promise((r) => child.once('exit', r)), sleep(15_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${lines.slice(-20).join('\n')}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not yet
    }
    if (i > 600) {
      await stop();
      throw new Error('the service did not start within 60 s');
    }
    await sleep(100);
  }
  return { child, base, lines, stop };
}
