// Test harness: a real service (real database, real bus, real job queue) listening on a
// free port, and a small HTTP client. DATABASE_URL set → that PostgreSQL; unset → an
// in-memory embedded database per test file.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { SCOPES } from '../../src/platform/http/context.js';
import type { ResponseViolation } from '../../src/platform/http/response-check.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { embeddedTemplate } from './database-template.js';

export const onPostgres = Boolean(process.env.DATABASE_URL);

/**
 * Answers that did not match their route's response schema, from every service this test file
 * started; test/support/setup.ts fails the test during which one arrived. Pass `recordResponseViolation`
 * as createRuntime's `checkResponses` where a test builds its runtime itself.
 */
export const responseViolations: ResponseViolation[] = [];
export const recordResponseViolation = (v: ResponseViolation): void => void responseViolations.push(v);

/** Fastify's words when a handler answers and something answers again. */
const ANSWERED_TWICE = /ERR_HTTP_HEADERS_SENT|FST_ERR_REP_ALREADY_SENT|Reply was already sent/;

/**
 * The service's logger in tests: every line kept in `logs`, and a line saying the request was
 * answered twice reported like a response that does not match its schema.
 */
export function testLogger(logs: string[]): pino.Logger {
  return pino(
    { level: 'info' },
    {
      write: (line: string) => {
        logs.push(line);
        if (ANSWERED_TWICE.test(line)) {
          const { req, reqId } = JSON.parse(line) as { req?: { method?: string; url?: string }; reqId?: string };
          responseViolations.push({
            route: req ? `${req.method} ${req.url}` : `request ${reqId ?? '?'}`,
            status: 0,
            problems: ['answered twice (the handler sent, and something sent again)'],
            body: line.slice(0, 500),
          });
        }
      },
    },
  );
}
export const TEST_SECRET_KEY = 'test-secret-key-0123456789-abcdefghijklmnop';

export interface Service {
  rt: Runtime;
  url: string;
  api: Api;
  logs: string[];
  stop(): Promise<void>;
  /**
   * Starts the service again after stop() (or stops it first), on the same port and the same
   * database, with `env` and `opts` on top of the first start's: a server that went away and came
   * back. Only for a service started with `{ restartable: true }` (the embedded database is then
   * kept in its data directory instead of memory).
   */
  restart(env?: Record<string, string>, opts?: RuntimeOptions): Promise<void>;
}

export type RuntimeOptions = Omit<NonNullable<Parameters<typeof createRuntime>[1]>, 'logger'>;

export async function startService(
  env: Record<string, string> = {},
  opts: RuntimeOptions = {},
  how: { restartable?: boolean } = {},
): Promise<Service> {
  const first = {
    DATABASE_URL: process.env.DATABASE_URL,
    DATABASE_IN_MEMORY: how.restartable ? 'false' : 'true',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-test-')),
    SECRET_KEY: TEST_SECRET_KEY,
    INBOUND_SECRET: 'test-inbound-secret-0123456789',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
    ...env,
  };
  const logs: string[] = [];
  const logger = testLogger(logs);
  // On a shared PostgreSQL each service has a job queue of its own (a pg-boss schema): another
  // test file's service would otherwise take this one's jobs and run them with its own settings
  // (an AI triage job run by a service without this test's AI stand-in, and dropped).
  // A test's own database (ownDatabase) keeps the default queue, shared by its services.
  const shared = Boolean(process.env.DATABASE_URL) && first.DATABASE_URL === process.env.DATABASE_URL;
  const jobsSchema = opts.jobsSchema ?? (shared ? `pgboss_t_${randomBytes(6).toString('hex')}` : undefined);
  const boot = async (env: Record<string, string | undefined>, opts: RuntimeOptions): Promise<Runtime> => {
    const config = loadConfig(env);
    // On a shared PostgreSQL every test file's service would otherwise poll every IMAP mailbox of
    // the database, other files' included: one that may not reach loopback servers took another
    // file's Dovecot mailbox and set it to status error. A service polls only when it may reach
    // the test servers (MAIL_ALLOW_PRIVATE) or its test says how.
    const imap = opts.imap ?? (env.MAIL_ALLOW_PRIVATE === 'true' ? undefined : { maxPerProcess: 0 });
    // Likewise the outbound email queue is one for the whole database: a service sends mail only
    // when its test says how (another file's service once took the outbound test's retries and
    // rescheduled them by its own, minutes-long, schedule).
    const email = opts.email ?? { workers: 0 };
    // A new embedded database starts as a copy of the run's migrated one (test/support/global-setup.ts).
    const databaseTemplate = embeddedTemplate();
    return createRuntime(config, {
      databaseTemplate,
      logger,
      checkResponses: recordResponseViolation,
      ...opts,
      ...(imap ? { imap } : {}),
      ...(jobsSchema ? { jobsSchema } : {}),
      // Semantic search's backfill reads every workspace of the database: on a shared one, other
      // files' too (each service would embed them all).
      ...(shared ? { embeddingBackfill: opts.embeddingBackfill ?? false } : {}),
      email,
    });
  };
  const rt = await boot(first, opts);
  const url = (await rt.listen()).replace('[::1]', '127.0.0.1');
  let stopped = false;
  const stop = async () => {
    running.delete(svc);
    if (stopped) return;
    stopped = true;
    await svc.rt.stop();
  };
  const stopForGood = async () => {
    const was = stopped;
    await stop();
    if (was || !jobsSchema || opts.jobsSchema) return;
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    try {
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${jobsSchema} CASCADE`);
    } catch {
      // Best effort: the run's database is dropped at its end anyway.
    } finally {
      await client.end().catch(() => {});
    }
  };
  const restart = async (more: Record<string, string> = {}, moreOpts: RuntimeOptions = {}) => {
    if (!how.restartable) throw new Error('restart() needs startService(env, opts, { restartable: true })');
    await stop();
    svc.rt = await boot({ ...first, ...more, PORT: new URL(url).port }, { ...opts, ...moreOpts });
    await svc.rt.listen();
    stopped = false;
    running.add(svc);
  };
  const svc: Service = { rt, url, api: new Api(url), logs, stop: stopForGood, restart };
  running.add(svc);
  return svc;
}

/** Services started and not stopped yet (test/support/setup.ts stops what a file left running). */
export const running = new Set<Service>();

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface ReqOpts {
  token?: string;
  workspace?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export class Api {
  constructor(readonly url: string) {}

  async req<T = any>(method: string, path: string, o: ReqOpts = {}): Promise<Res<T>> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.workspace) headers['svc-workspace'] = o.workspace;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const r = await fetch(this.url + path, { method, headers, body });
    const text = await r.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: r.status, body: parsed, headers: r.headers, text };
  }

  get = <T = any>(path: string, o?: ReqOpts) => this.req<T>('GET', path, o);
  post = <T = any>(path: string, body?: unknown, o: ReqOpts = {}) => this.req<T>('POST', path, { ...o, body });
  patch = <T = any>(path: string, body?: unknown, o: ReqOpts = {}) => this.req<T>('PATCH', path, { ...o, body });
  delete = <T = any>(path: string, o?: ReqOpts) => this.req<T>('DELETE', path, o);
}

let counter = 0;
export const unique = (prefix = 'x') => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

export interface Person {
  token: string;
  userId: string;
  email: string;
  password: string;
}

export async function signUp(api: Api, name = 'Agent Smith'): Promise<Person> {
  const email = `${unique('user')}@example.com`;
  const password = 'correct horse battery';
  const r = await api.post('/v1/auth/register', { email, password, name });
  if (r.status !== 201) throw new Error(`register failed: ${r.status} ${r.text}`);
  return { token: r.body.access_token, userId: r.body.user.id, email, password };
}

export interface Tenant {
  owner: Person;
  workspaceId: string;
  /** Request options for the owner in this workspace. */
  as: ReqOpts;
}

export async function newTenant(api: Api, name = 'Acme Support'): Promise<Tenant> {
  const owner = await signUp(api, 'Olivia Owner');
  const r = await api.post('/v1/workspaces', { name }, { token: owner.token });
  if (r.status !== 201) throw new Error(`workspace failed: ${r.status} ${r.text}`);
  return { owner, workspaceId: r.body.id, as: { token: owner.token, workspace: r.body.id } };
}

export async function newApiKey(api: Api, t: Tenant, scopes: string[], extra: Record<string, unknown> = {}) {
  const r = await api.post('/v1/api-keys', { name: unique('key'), scopes, ...extra }, t.as);
  if (r.status !== 201) throw new Error(`api key failed: ${r.status} ${r.text}`);
  return r.body as { id: string; key: string; prefix: string };
}

export type Member = Person & { as: ReqOpts };

/**
 * A member of the tenant's workspace with this role (the membership inserted directly): a new
 * person with this name, or a person who already exists (a member elsewhere, say).
 */
export async function addMember(
  svc: Service,
  t: Tenant,
  role: 'owner' | 'admin' | 'agent' | 'viewer',
  who: string | Person = `Pat ${role}`,
): Promise<Member> {
  const p = typeof who === 'string' ? await signUp(svc.api, who) : who;
  await svc.rt.deps.database.db
    .insertInto('members')
    .values({ workspace_id: t.workspaceId, user_id: p.userId, role })
    .execute();
  return { ...p, as: { token: p.token, workspace: t.workspaceId } };
}

/** The workspace's newest event seq, as its owner sees it. */
export async function latestSeqOf(svc: Service, t: Tenant): Promise<number> {
  return (await svc.api.get('/v1/events?since=0', t.as)).body.latest_seq;
}

/** Events after `since`, as the owner sees them (up to 1000). */
export async function eventsAfterOf(svc: Service, t: Tenant, since: number): Promise<any[]> {
  const r = await svc.api.get(`/v1/events?since=${since}&limit=1000`, t.as);
  if (r.status !== 200) throw new Error(`events: ${r.status} ${r.text}`);
  return r.body.data;
}

/** Every scope of the scope table. */
export const ALL_SCOPES: string[] = [...SCOPES];

/** Expect the spec's error body. */
export function isErrorBody(b: any, status: number, code?: string): boolean {
  return (
    b !== null &&
    typeof b === 'object' &&
    b.status === status &&
    typeof b.code === 'string' &&
    (code === undefined || b.code === code) &&
    typeof b.detail === 'string'
  );
}
