// The setup of the /v1/mailboxes tests (mailboxes.test.ts, mailboxes-changes.test.ts,
// mailboxes-connection.test.ts): stand-in SMTP and IMAP servers on loopback, and a service whose
// mail goes to them. Each test file calls mailboxesSuite() at its top level and gets its own
// servers and service (the files share worker processes, so nothing here lives at module level).

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll } from 'vitest';
import { latestSeqOf, type Service, startService, type Tenant } from '../../support/helpers.js';

export const IMAP_PASSWORD = 'imap-Secret-Pa55word-7f3a';
export const SMTP_PASSWORD = 'smtp-Secret-Pa55word-9c2e';
export const SMTP_USER = 'mailer@acme.test';

// ---------------------------------------------------------------------------------------------
// Servers on loopback.

export interface Smtp {
  server: SMTPServer;
  port: number;
  logins: Array<{ username: string; password: string }>;
}

export async function smtpServer(requireAuth: boolean): Promise<Smtp> {
  const logins: Smtp['logins'] = [];
  const server = new SMTPServer({
    authOptional: !requireAuth,
    allowInsecureAuth: true,
    disabledCommands: requireAuth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: auth.username });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, _session, cb) {
      stream.resume();
      stream.on('end', () => cb());
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  return { server, port: (server.server.address() as AddressInfo).port, logins };
}

/**
 * An IMAP4rev1 server speaking just what a login check needs (greeting, CAPABILITY, LOGIN,
 * NOOP, LOGOUT), with one account; anything else is BAD. Dovecot takes its place in CI for the
 * polling tests.
 */
export interface Imap {
  server: Server;
  port: number;
  logins: string[];
  commands: string[];
  /** The commands of each connection, in connection order. */
  sessions: string[][];
}
export async function imapServer(user: string, password: string): Promise<Imap> {
  const logins: string[] = [];
  const commands: string[] = [];
  const sessions: string[][] = [];
  const sockets = new Set<Socket>();
  const quote = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.write('* OK [CAPABILITY IMAP4rev1] test server ready\r\n');
    const session: string[] = [];
    sessions.push(session);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (let i = buffer.indexOf('\r\n'); i >= 0; i = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const [tag, command = ''] = line.split(' ', 2);
        const rest = line.slice((tag?.length ?? 0) + command.length + 2);
        commands.push(command.toUpperCase());
        session.push(command.toUpperCase());
        switch (command.toUpperCase()) {
          case 'CAPABILITY':
            socket.write(`* CAPABILITY IMAP4rev1\r\n${tag} OK done\r\n`);
            break;
          case 'LOGIN': {
            logins.push(rest);
            const ok = rest === `${quote(user)} ${quote(password)}` || rest === `${user} ${password}`;
            socket.write(
              ok
                ? `${tag} OK [CAPABILITY IMAP4rev1] logged in\r\n`
                : `${tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n`,
            );
            break;
          }
          case 'LOGOUT':
            socket.write(`* BYE logging out\r\n${tag} OK done\r\n`);
            socket.end();
            break;
          case 'NOOP':
            socket.write(`${tag} OK done\r\n`);
            break;
          default:
            socket.write(`${tag} BAD unknown command\r\n`);
        }
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const close = server.close.bind(server);
  server.close = (cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  };
  return { server, port: (server.address() as AddressInfo).port, logins, commands, sessions };
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** What requests change: not the columns an IMAP poller writes as it runs (lease, position, sync, errors). */
const POLLER_COLUMNS = [
  'imap_lease_owner',
  'imap_lease_until',
  'imap_last_uid',
  'imap_uidvalidity',
  'last_synced_at',
  'last_error',
  'status',
] as const;

/** One file's servers, service and the helpers that use them; registers the file's hooks. */
export function mailboxesSuite() {
  let svc: Service;
  let smtpOpen: Smtp;
  let smtpAuth: Smtp;
  let imap: Imap;
  beforeAll(async () => {
    [smtpOpen, smtpAuth, imap] = await Promise.all([
      smtpServer(false),
      smtpServer(true),
      imapServer('agent@acme.test', IMAP_PASSWORD),
    ]);
    svc = await startService(
      {
        INBOUND_DOMAIN: 'in.helpdesk.test',
        MAIL_ALLOW_PRIVATE: 'true',
        SMTP_URL: `smtp://127.0.0.1:${smtpOpen.port}?from=Help%20desk%20%3Chelp%40helpdesk.test%3E`,
      },
      // No IMAP polling here: this file checks logins to its fake IMAP server, and a poller of its
      // mailboxes (which point at that server) would log in and LIST between the checks.
      { jobs: false, imap: { maxPerProcess: 0 } },
    );
  });
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([
      new Promise((r) => smtpOpen?.server.close(() => r(null))),
      new Promise((r) => smtpAuth?.server.close(() => r(null))),
      new Promise((r) => (imap ? imap.server.close(() => r(null)) : r(null))),
    ]);
  });

  async function create(t: Tenant, body: Record<string, unknown> = {}) {
    const r = await svc.api.post(
      '/v1/mailboxes',
      { name: 'Support', email: `support-${randomUUID()}@acme.test`, ...body },
      t.as,
    );
    if (r.status !== 201) throw new Error(`mailbox: ${r.status} ${r.text}`);
    return r.body as Record<string, any> & { id: string };
  }

  const imapBody = (extra: Record<string, unknown> = {}) => ({
    name: 'Sales',
    email: 'agent@acme.test',
    inbound_kind: 'imap',
    outbound_kind: 'smtp',
    config: {
      imap_host: '127.0.0.1',
      imap_port: imap.port,
      imap_tls: 'none',
      smtp_host: '127.0.0.1',
      smtp_port: smtpAuth.port,
      smtp_tls: 'none',
      smtp_username: SMTP_USER,
    },
    password: IMAP_PASSWORD,
    smtp_password: SMTP_PASSWORD,
    ...extra,
  });

  async function rowOf(t: Tenant, id: string) {
    return svc.rt.deps.database.db
      .selectFrom('mailboxes')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async function auditOf(t: Tenant, entityId: string) {
    return svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('entity_id', '=', entityId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** The workspace's mailboxes and events, to show a refused write changed nothing. */
  async function stateOf(t: Tenant) {
    const rows = (
      await svc.rt.deps.database.db
        .selectFrom('mailboxes')
        .selectAll()
        .where('workspace_id', '=', t.workspaceId)
        .orderBy('id')
        .execute()
    ).map((r) =>
      Object.fromEntries(Object.entries(r).filter(([k]) => !(POLLER_COLUMNS as readonly string[]).includes(k))),
    );
    const addresses = await svc.rt.deps.database.db
      .selectFrom('mailbox_addresses')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    return { rows, addresses: addresses.length, seq: await latestSeqOf(svc, t) };
  }

  return {
    get svc() {
      return svc;
    },
    get smtpOpen() {
      return smtpOpen;
    },
    get smtpAuth() {
      return smtpAuth;
    },
    get imap() {
      return imap;
    },
    create,
    imapBody,
    rowOf,
    auditOf,
    stateOf,
  };
}
