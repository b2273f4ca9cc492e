// A real IMAP server for the tests: Dovecot, private to the test run (.ci/dovecot.sh).
//
// TEST_IMAP_URL set (CI starts one): that instance. Otherwise, when `dovecot` is installed, a
// private instance is started here on a free loopback port and stopped after the file. Without
// Dovecot the IMAP tests are skipped with a message on a developer's machine, and fail under
// CI=1 (an absent server must never pass quietly there).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';

const SCRIPT = join(import.meta.dirname, '..', '..', '.ci', 'dovecot.sh');

export interface TestImap {
  host: string;
  port: number;
  /** The shared password: every `<name>@imap.test` logs in with it (a new name, an empty INBOX). */
  password: string;
  /** RFC 7662 introspection URL Dovecot asks about XOAUTH2 tokens (null: no XOAUTH2). */
  introspectUrl: string | null;
  /** A new account of its own (empty INBOX). */
  newUser(prefix?: string): string;
  /**
   * Loses the account's UID list (as a server restored from a backup would): Dovecot numbers the
   * INBOX again with a new UIDVALIDITY. Needs the instance's directory (TEST_IMAP_DIR in CI).
   */
  forgetUids(user: string): void;
  /** The INBOX's UIDVALIDITY now. */
  uidValidity(user: string): Promise<number>;
  /** Appends a raw message to the account's INBOX; returns its UID. */
  append(user: string, raw: string, password?: string): Promise<number>;
  stop(): Promise<void>;
}

function dovecotInstalled(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v dovecot'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Two consecutive free loopback ports (IMAP, and introspection one above it). */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const s = createServer();
    s.listen(0, '127.0.0.1');
    await once(s, 'listening');
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const next = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      next.once('error', () => resolve(false));
      next.listen(port + 1, '127.0.0.1', () => resolve(true));
    });
    if (ok) {
      await new Promise((r) => next.close(r));
      if (port + 1 < 65536) return port;
    }
  }
  throw new Error('no two free consecutive ports on 127.0.0.1');
}

/** Why the IMAP tests cannot run here (null: they can). Under CI=1 this is never a reason to skip. */
export function imapUnavailable(): string | null {
  if (process.env.TEST_IMAP_URL) return null;
  if (dovecotInstalled()) return null;
  const why =
    'IMAP tests need Dovecot: install it (apt-get install dovecot-imapd) or set TEST_IMAP_URL to an instance ' +
    'started by .ci/dovecot.sh';
  if (process.env.CI) throw new Error(`${why} (CI=1: not skipping)`);
  return why;
}

export async function startTestImap(): Promise<TestImap> {
  let url = process.env.TEST_IMAP_URL ?? null;
  let introspectUrl = process.env.TEST_IMAP_INTROSPECT_URL ?? null;
  let dir: string | null = null;
  const ours = !url;
  let mailDir = process.env.TEST_IMAP_DIR ?? null;
  if (!url) {
    dir = mkdtempSync(join(tmpdir(), 'svc-dovecot-'));
    mailDir = dir;
    const port = await freePortPair();
    introspectUrl = `http://127.0.0.1:${port + 1}/introspect`;
    url = execFileSync(SCRIPT, ['start', dir, String(port), introspectUrl], { encoding: 'utf8' }).trim();
  }
  const u = new URL(url);
  const host = u.hostname;
  const port = Number(u.port || 143);
  const password = decodeURIComponent(u.password);
  const client = (user: string, pass: string) =>
    new ImapFlow({ host, port, secure: false, doSTARTTLS: false, auth: { user, pass }, logger: false });
  return {
    host,
    port,
    password,
    introspectUrl,
    newUser: (prefix = 'box') => `${prefix}-${randomUUID().slice(0, 8)}@imap.test`,
    forgetUids(user) {
      if (!mailDir) throw new Error('the Dovecot directory is unknown: set TEST_IMAP_DIR');
      const home = join(mailDir, 'mail', user);
      for (const f of readdirSync(home)) {
        if (f === 'dovecot-uidlist' || f.startsWith('dovecot.index')) rmSync(join(home, f), { force: true });
      }
    },
    async uidValidity(user) {
      const c = client(user, password);
      c.on('error', () => {});
      await c.connect();
      try {
        const st = await c.status('INBOX', { uidValidity: true });
        if (st === false || st.uidValidity === undefined) throw new Error('STATUS returned no UIDVALIDITY');
        return Number(st.uidValidity);
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async append(user, raw, pass = password) {
      const c = client(user, pass);
      c.on('error', () => {});
      await c.connect();
      try {
        const r = await c.append('INBOX', raw);
        if (r === false || !r.uid) throw new Error('APPEND returned no UID');
        return Number(r.uid);
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async stop() {
      if (!ours || !dir) return;
      try {
        execFileSync(SCRIPT, ['stop', dir], { stdio: 'ignore' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let seq = 0;
/** A plain RFC 822 message with a unique Message-ID. */
export function rawMail(o: { from?: string; to: string; subject: string; body?: string; messageId?: string }): string {
  const id = o.messageId ?? `<${Date.now()}.${++seq}.${randomUUID()}@sender.test>`;
  return [
    `From: ${o.from ?? 'Carla Customer <carla@customer.test>'}`,
    `To: ${o.to}`,
    `Subject: ${o.subject}`,
    `Message-ID: ${id}`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    o.body ?? `Hello, this is ${o.subject}.`,
    '',
  ].join('\r\n');
}
