// /v1/mailboxes, part 3 (part 1: mailboxes.test.ts, whose setup this file repeats): the
// connection test (POST /v1/mailboxes/{id}/test) against stand-in SMTP and IMAP servers, and
// INBOUND_DOMAIN.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { newTenant, type Service, startService, type Tenant, unique } from '../../support/helpers.js';

const IMAP_PASSWORD = 'imap-Secret-Pa55word-7f3a';
const SMTP_PASSWORD = 'smtp-Secret-Pa55word-9c2e';
const SMTP_USER = 'mailer@acme.test';

// ---------------------------------------------------------------------------------------------
// Servers on loopback.

interface Smtp {
  server: SMTPServer;
  port: number;
  logins: Array<{ username: string; password: string }>;
}

async function smtpServer(requireAuth: boolean): Promise<Smtp> {
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
interface Imap {
  server: Server;
  port: number;
  logins: string[];
  commands: string[];
  /** The commands of each connection, in connection order. */
  sessions: string[][];
}
async function imapServer(user: string, password: string): Promise<Imap> {
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
async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

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

describe('POST /v1/mailboxes/{id}/test', () => {
  it('logs in to a real SMTP server with AUTH and to an IMAP server, and reports ok', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, imapBody());
    const loginsBefore = smtpAuth.logins.length;
    const sessionsBefore = imap.sessions.length;
    const r = await svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, t.as);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ inbound: { ok: true, error: null }, outbound: { ok: true, error: null } });
    expect(smtpAuth.logins.slice(loginsBefore)).toEqual([{ username: SMTP_USER, password: SMTP_PASSWORD }]);
    expect(imap.logins.at(-1), imap.commands.join()).toContain(IMAP_PASSWORD);
    // The check's own connection ends with LOGOUT. (Other test files' services on a shared
    // PostgreSQL may poll this file's mailboxes meanwhile, so the server's last command overall
    // can be theirs.)
    const since = imap.sessions.slice(sessionsBefore);
    expect(
      since.some((c) => c.includes('LOGIN') && c.at(-1) === 'LOGOUT'),
      since.map((c) => c.join()).join(' | '),
    ).toBe(true);
    // A test only reports: the mailbox is unchanged.
    expect((await svc.api.get(`/v1/mailboxes/${m.id}`, t.as)).body).toEqual(m);
  });

  it('reports wrong passwords and refused connections as errors without the password', async () => {
    const t = await newTenant(svc.api);
    const port = await closedPort();
    const wrong = 'Wrong-Pa55word-31415';
    const m = await create(
      t,
      imapBody({ password: wrong, smtp_password: wrong, config: { ...imapBody().config, imap_port: imap.port } }),
    );
    const r = await svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, t.as);
    expect(r.status).toBe(200);
    expect(r.body.inbound.ok).toBe(false);
    expect(r.body.outbound.ok).toBe(false);
    expect(r.body.inbound.error).toMatch(/auth|credentials|login/i);
    expect(r.body.outbound.error).toMatch(/auth|invalid|535/i);
    expect(smtpAuth.logins.at(-1)).toEqual({ username: SMTP_USER, password: wrong });
    expect(JSON.stringify(r.body)).not.toContain(wrong);
    expect(svc.logs.join('\n')).not.toContain(wrong);

    const closed = await create(
      t,
      imapBody({
        email: 'closed@acme.test',
        config: { ...imapBody().config, imap_port: port, smtp_port: port },
      }),
    );
    const c = await svc.api.post(`/v1/mailboxes/${closed.id}/test`, undefined, t.as);
    expect(c.status).toBe(200);
    expect(c.body.inbound).toEqual({ ok: false, error: expect.stringMatching(/ECONNREFUSED/) });
    expect(c.body.outbound).toEqual({ ok: false, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('forwarding mailboxes: inbound ok; SMTP without AUTH; the system mailer (SMTP_URL)', async () => {
    const t = await newTenant(svc.api);
    const plain = await create(t, {
      outbound_kind: 'smtp',
      config: { smtp_host: '127.0.0.1', smtp_port: smtpOpen.port, smtp_tls: 'none' },
    });
    const r = await svc.api.post(`/v1/mailboxes/${plain.id}/test`, undefined, t.as);
    expect(r.body).toEqual({ inbound: { ok: true, error: null }, outbound: { ok: true, error: null } });

    const system = await create(t, { email: 'system@acme.test' });
    const s = await svc.api.post(`/v1/mailboxes/${system.id}/test`, undefined, t.as);
    expect(s.body).toEqual({ inbound: { ok: true, error: null }, outbound: { ok: true, error: null } });

    // STARTTLS demanded from a server that does not offer it: a failure, never a plain-text fallback.
    const tls = await svc.api.patch(`/v1/mailboxes/${plain.id}`, { config: { smtp_tls: 'starttls' } }, t.as);
    expect(tls.status).toBe(200);
    const t2 = await svc.api.post(`/v1/mailboxes/${plain.id}/test`, undefined, t.as);
    expect(t2.body.outbound.ok).toBe(false);
    expect(t2.body.outbound.error).toMatch(/STARTTLS/i);
  });

  it('checks the address again when connecting: without MAIL_ALLOW_PRIVATE a loopback server is never reached', async () => {
    const t = await newTenant(svc.api);
    // Its own IMAP user, and paused at once, so that a login of another file's poller (shared
    // PostgreSQL) cannot be taken for one of this check.
    const user = `${unique('nobody')}@acme.test`;
    const m = await create(t, imapBody({ config: { ...imapBody().config, imap_username: user } }));
    expect((await svc.api.patch(`/v1/mailboxes/${m.id}`, { status: 'disabled' }, t.as)).status).toBe(200);
    const logins = smtpAuth.logins.length;
    const imapLogins = imap.logins.length;
    svc.rt.deps.config.mailAllowPrivate = false;
    try {
      const r = await svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, t.as);
      expect(r.status).toBe(200);
      expect(r.body.inbound).toEqual({ ok: false, error: expect.stringContaining('loopback') });
      expect(r.body.outbound).toEqual({ ok: false, error: expect.stringContaining('loopback') });
    } finally {
      svc.rt.deps.config.mailAllowPrivate = true;
    }
    expect(smtpAuth.logins.length).toBe(logins);
    expect(imap.logins.slice(imapLogins).filter((l) => l.includes(user))).toEqual([]);
  });
});

describe('INBOUND_DOMAIN', () => {
  const base = { DATABASE_IN_MEMORY: 'true', SECRET_KEY: 'k'.repeat(40), INBOUND_SECRET: 's'.repeat(20) };
  it('defaults to the host of PUBLIC_URL (localhost for an IP address) and refuses what is not a domain', () => {
    expect(loadConfig({ ...base, PUBLIC_URL: 'https://help.example.com:8443' }).inboundDomain).toBe('help.example.com');
    expect(loadConfig({ ...base, PUBLIC_URL: 'http://127.0.0.1:3000' }).inboundDomain).toBe('localhost');
    expect(loadConfig({ ...base }).inboundDomain).toBe('localhost');
    expect(loadConfig({ ...base, INBOUND_DOMAIN: 'In.Example.com.' }).inboundDomain).toBe('in.example.com');
    for (const bad of ['not a domain', 'a@b.com', '-x.com', 'x'.repeat(64) + '.com']) {
      expect(() => loadConfig({ ...base, INBOUND_DOMAIN: bad }), bad).toThrow(ConfigError);
    }
    expect(loadConfig({ ...base }).mailAllowPrivate).toBe(false);
  });
});
