// /v1/mailboxes: the Mailbox shape with its generated forwarding address, write-only passwords
// sealed at rest (never in a response, an event, an audit entry or the log), config and kind
// rules, trusted_form_senders, sanitized HTML, status by hand, who may read and write,
// other workspaces' ids, mailbox.* events and audit entries, and POST /{id}/test against real
// servers on loopback: an SMTP server (smtp-server) with and without AUTH, a small IMAP server,
// and a closed port.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { isPublicEmailDomain } from '../../../src/modules/email/public-domains.js';
import { passwordContext, smtpPasswordContext } from '../../../src/modules/mailboxes/service.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';

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

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEYS = [
  'auto_reply_enabled',
  'auto_reply_html',
  'auto_reply_subject',
  'config',
  'created_at',
  'display_name',
  'email',
  'forwarding_address',
  'id',
  'inbound_kind',
  'last_error',
  'last_synced_at',
  'name',
  'outbound_kind',
  'signature_html',
  'status',
  'team_id',
  'trusted_form_senders',
  'updated_at',
];

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

describe('creating and reading mailboxes', () => {
  it('creates a forwarding mailbox with defaults, a generated forwarding address, mailbox.created and an audit entry', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/mailboxes', { name: '  Support  ', email: 'Support@Acme.TEST' }, t.as);
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/mailboxes/${r.body.id}`);
    expect(Object.keys(r.body).sort()).toEqual(KEYS);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Support',
      email: 'support@acme.test',
      display_name: 'Support',
      inbound_kind: 'forwarding',
      outbound_kind: 'system',
      forwarding_address: expect.stringMatching(/^support-[a-z2-7]{10}@in\.helpdesk\.test$/),
      config: {},
      team_id: null,
      signature_html: '',
      auto_reply_enabled: false,
      auto_reply_subject: '',
      auto_reply_html: '',
      status: 'active',
      last_error: null,
      last_synced_at: null,
      trusted_form_senders: [],
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.body.created_at,
    });
    // Another mailbox of the same name gets another address.
    const second = await create(t, { email: 'support@other.test' });
    expect(second.forwarding_address).not.toBe(r.body.forwarding_address);

    expect((await svc.api.get(`/v1/mailboxes/${r.body.id}`, t.as)).body).toEqual(r.body);
    expect((await svc.api.get(`/v1/mailboxes/${r.body.id.toUpperCase()}`, t.as)).body).toEqual(r.body);
    const list = await svc.api.get('/v1/mailboxes', t.as);
    expect(list.body).toEqual({ data: [second, r.body], next_cursor: null });
    const page = await svc.api.get('/v1/mailboxes?limit=1', t.as);
    expect(page.body.data).toEqual([second]);
    const next = await svc.api.get(`/v1/mailboxes?limit=1&cursor=${page.body.next_cursor}`, t.as);
    expect(next.body).toEqual({ data: [r.body], next_cursor: null });

    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['mailbox.created', 'mailbox.created']);
    expect(events[0].data).toEqual({ mailbox: r.body });
    expect(events[0].visibility).toBe('agents');
    const audit = await auditOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['mailbox.created']);

    // The forwarding address routes to the mailbox (what inbound mail will use), any case.
    const { mailboxForAddress } = await import('../../../src/modules/mailboxes/service.js');
    expect(await mailboxForAddress(svc.rt.deps.database.db, r.body.forwarding_address.toUpperCase())).toEqual({
      workspaceId: t.workspaceId,
      mailboxId: r.body.id,
    });
  });

  it('keeps passwords write-only: sealed in the database, never in a response, event, audit entry or log line', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/mailboxes', imapBody(), t.as);
    expect(r.status).toBe(201);
    expect(r.body.config).toEqual({
      imap_host: '127.0.0.1',
      imap_port: imap.port,
      imap_tls: 'none',
      smtp_host: '127.0.0.1',
      smtp_port: smtpAuth.port,
      smtp_username: SMTP_USER,
      smtp_tls: 'none',
    });
    const patched = await svc.api.patch(`/v1/mailboxes/${r.body.id}`, { smtp_password: `${SMTP_PASSWORD}-2` }, t.as);
    expect(patched.status).toBe(200);
    await svc.api.patch(`/v1/mailboxes/${r.body.id}`, { smtp_password: SMTP_PASSWORD }, t.as);

    const row = (await rowOf(t, r.body.id))!;
    for (const [column, plain, context] of [
      [row.password_enc, IMAP_PASSWORD, passwordContext(t.workspaceId, r.body.id)],
      [row.smtp_password_enc, SMTP_PASSWORD, smtpPasswordContext(t.workspaceId, r.body.id)],
    ] as const) {
      expect(column).toMatch(/^v1\./);
      expect(column).not.toContain(plain);
      expect(column).not.toContain(Buffer.from(plain).toString('base64'));
      expect(svc.rt.deps.secrets.open(column!, context)).toBe(plain);
      // Bound to this mailbox and field: another mailbox's context does not open it.
      expect(svc.rt.deps.secrets.open(column!, passwordContext(t.workspaceId, randomUUID()))).toBeNull();
    }
    expect(svc.rt.deps.secrets.open(row.password_enc!, smtpPasswordContext(t.workspaceId, r.body.id))).toBeNull();

    const everything = JSON.stringify([
      r.body,
      patched.body,
      (await svc.api.get(`/v1/mailboxes/${r.body.id}`, t.as)).body,
      (await svc.api.get('/v1/mailboxes', t.as)).body,
      await eventsAfterOf(svc, t, seq),
      await auditOf(t, r.body.id),
      (await svc.api.get('/v1/audit-logs', t.as)).body,
      svc.logs,
    ]);
    expect(everything).toContain(r.body.id);
    for (const secret of [IMAP_PASSWORD, SMTP_PASSWORD, `${SMTP_PASSWORD}-2`]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(everything).not.toContain('password_enc');
    const audit = await auditOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['mailbox.created', 'mailbox.updated', 'mailbox.updated']);
    expect(audit[1]!.data).toEqual({ smtp_password: 'set' });
  });

  it('sanitizes signature and auto-reply HTML and keeps subjects and From names on one line', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, {
      display_name: 'Acme\r\nBcc: victim@example.com',
      signature_html: '<p>Thanks, <b>Acme</b><script>alert(1)</script><img src=x onerror="alert(2)"></p>',
      auto_reply_enabled: true,
      auto_reply_subject: 'We got it\r\nBcc: victim@example.com',
      auto_reply_html: '<p onclick="steal()">We will answer soon.</p><iframe src="https://evil.test"></iframe>',
    });
    expect(m.signature_html).toContain('<b>Acme</b>');
    expect(m.signature_html).not.toMatch(/script|onerror|alert/);
    expect(m.auto_reply_html).toContain('We will answer soon.');
    expect(m.auto_reply_html).not.toMatch(/onclick|iframe|steal/);
    expect(m.display_name).toBe('Acme Bcc: victim@example.com');
    expect(m.auto_reply_subject).toBe('We got it Bcc: victim@example.com');
    expect(m.auto_reply_enabled).toBe(true);
    const p = await svc.api.patch(
      `/v1/mailboxes/${m.id}`,
      { signature_html: '<a href="javascript:alert(1)">x</a>' },
      t.as,
    );
    expect(p.status).toBe(200);
    expect(p.body.signature_html).not.toContain('javascript:');
  });

  it('assigns a team of the workspace; another workspace’s team is a 422; deleting the team clears it', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const team = await svc.api.post('/v1/teams', { name: 'Sales', private: false, member_ids: [] }, t.as);
    const foreign = await svc.api.post('/v1/teams', { name: 'Theirs', private: false, member_ids: [] }, other.as);
    const m = await create(t, { team_id: team.body.id });
    expect(m.team_id).toBe(team.body.id);
    const before = await stateOf(t);
    const r = await svc.api.post('/v1/mailboxes', { name: 'X', email: 'x@acme.test', team_id: foreign.body.id }, t.as);
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ location: 'body.team_id', message: 'no such team in this workspace' }]);
    expect(await stateOf(t)).toEqual(before);
    expect((await svc.api.delete(`/v1/teams/${team.body.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get(`/v1/mailboxes/${m.id}`, t.as)).body.team_id).toBeNull();
  });
});

describe('bad input', () => {
  it('answers 422 at the field for ports, TLS modes, hosts, missing settings and kinds, and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, imapBody());
    const before = await stateOf(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ config: { imap_host: 'mail.acme.test', imap_port: 0 } }, 'body.config.imap_port'],
      [{ config: { smtp_port: 65536 } }, 'body.config.smtp_port'],
      [{ config: { smtp_port: 25.5 } }, 'body.config.smtp_port'],
      [{ config: { imap_tls: 'ssl' } }, 'body.config.imap_tls'],
      [{ config: { smtp_host: 'bad host!' } }, 'body.config.smtp_host'],
      [{ config: { imap_host: 'exa_mple..com' } }, 'body.config.imap_host'],
      [{ config: { smtp_host: '' } }, 'body.config.smtp_host'],
      [{ config: { pop3_host: 'x' } }, 'body.config.pop3_host'],
      [{ inbound_kind: 'pop3' }, 'body.inbound_kind'],
      [{ inbound_kind: 'imap', config: { imap_host: 'imap.acme.test' } }, 'body.password'],
      [{ inbound_kind: 'imap', password: IMAP_PASSWORD }, 'body.config.imap_host'],
      [{ outbound_kind: 'smtp' }, 'body.config.smtp_host'],
      [{ inbound_kind: 'google' }, 'body.inbound_kind'],
      [{ outbound_kind: 'microsoft' }, 'body.outbound_kind'],
      [{ email: 'not an address' }, 'body.email'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'x'.repeat(101) }, 'body.name'],
      [{ password: '' }, 'body.password'],
      [{ status: 'active' }, 'body.status'],
      [{ signature_html: 'x'.repeat(100_001) }, 'body.signature_html'],
      [{ team_id: 'not-a-uuid' }, 'body.team_id'],
    ];
    for (const [extra, location] of cases) {
      const r = await svc.api.post('/v1/mailboxes', { name: 'New', email: 'new@acme.test', ...extra }, t.as);
      expect(r.status, JSON.stringify(extra)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed'), JSON.stringify(extra)).toBe(true);
      expect(r.body.errors?.[0]?.location, JSON.stringify(extra)).toBe(location);
    }
    const patches: Array<[Record<string, unknown>, string]> = [
      [{ config: { imap_port: -1 } }, 'body.config.imap_port'],
      [{ config: { smtp_tls: 'STARTTLS' } }, 'body.config.smtp_tls'],
      [{ config: { imap_host: null } }, 'body.config.imap_host'],
      [{ password: null }, 'body.password'],
      [{ status: 'error' }, 'body.status'],
      [{ inbound_kind: 'microsoft' }, 'body.inbound_kind'],
      [{ forwarding_address: 'mine@acme.test' }, 'body.forwarding_address'],
      [{ id: randomUUID() }, 'body.id'],
      [{ config: { smtp_host: 'localhost:25' } }, 'body.config.smtp_host'],
    ];
    for (const [body, location] of patches) {
      const r = await svc.api.patch(`/v1/mailboxes/${m.id}`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors?.[0]?.location, JSON.stringify(body)).toBe(location);
    }
    expect(await stateOf(t)).toEqual(before);
  });

  it('answers 409 for an address the workspace already has (any case), and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const a = await create(t, { email: 'help@acme.test' });
    const b = await create(t, { email: 'sales@acme.test' });
    const before = await stateOf(t);
    const dup = await svc.api.post('/v1/mailboxes', { name: 'Again', email: 'HELP@acme.test' }, t.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    const move = await svc.api.patch(`/v1/mailboxes/${b.id}`, { email: 'help@acme.test' }, t.as);
    expect(move.status).toBe(409);
    expect(await stateOf(t)).toEqual(before);
    // Another workspace may use the same address.
    const other = await newTenant(svc.api);
    expect((await create(other, { email: 'help@acme.test' })).id).not.toBe(a.id);
  });

  it('refuses loopback and private servers unless MAIL_ALLOW_PRIVATE is on', async () => {
    const t = await newTenant(svc.api);
    svc.rt.deps.config.mailAllowPrivate = false;
    try {
      // Other spellings of a loopback address, and a name that resolves to one (this machine's
      // own names in /etc/hosts): refused when saved, not only when the service connects.
      const loopbackName = readFileSync('/etc/hosts', 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim().split(/\s+/))
        .filter(([address]) => address?.startsWith('127.'))
        .flatMap(([, ...names]) => names)
        .find((n) => n && !/localhost/i.test(n));
      expect(loopbackName, 'a name for a loopback address in /etc/hosts').toBeDefined();
      const otherSpellings = ['2130706433', '127.1', '0x7f.1'];
      const spellings = [...otherSpellings, loopbackName!];
      for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '[::1]', ...spellings]) {
        const r = await svc.api.post(
          '/v1/mailboxes',
          { name: 'L', email: 'l@acme.test', outbound_kind: 'smtp', config: { smtp_host: host } },
          t.as,
        );
        expect(r.status, host).toBe(422);
        expect(r.body.errors[0].location, host).toBe('body.config.smtp_host');
        expect(r.body.errors[0].message, host).toMatch(
          otherSpellings.includes(host) ? /IP address written another way/ : /MAIL_ALLOW_PRIVATE/,
        );
      }
      const ok = await svc.api.post(
        '/v1/mailboxes',
        { name: 'L', email: 'l@acme.test', outbound_kind: 'smtp', config: { smtp_host: 'smtp.example.com' } },
        t.as,
      );
      expect(ok.status).toBe(201);
      // A change to such a host is refused the same way, and changes nothing.
      for (const host of spellings) {
        const r = await svc.api.patch(`/v1/mailboxes/${ok.body.id}`, { config: { smtp_host: host } }, t.as);
        expect(r.status, host).toBe(422);
        expect(r.body.errors[0].location, host).toBe('body.config.smtp_host');
      }
      const after = await svc.api.get(`/v1/mailboxes/${ok.body.id}`, t.as);
      expect(after.body.config.smtp_host).toBe('smtp.example.com');
    } finally {
      svc.rt.deps.config.mailAllowPrivate = true;
    }
  });
});

describe('trusted_form_senders', () => {
  it('replaces the stored list with addresses and @domains, lower-cased and without repeats', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, { trusted_form_senders: [' Forms@Acme.test ', '@Webflow.io', 'forms@acme.test'] });
    expect(m.trusted_form_senders).toEqual(['forms@acme.test', '@webflow.io']);
    const p = await svc.api.patch(`/v1/mailboxes/${m.id}`, { trusted_form_senders: ['@typeform.com'] }, t.as);
    expect(p.body.trusted_form_senders).toEqual(['@typeform.com']);
    // An exact address at a public provider is one account, not everyone there.
    const one = await svc.api.patch(
      `/v1/mailboxes/${m.id}`,
      { trusted_form_senders: ['contact.form@gmail.com'] },
      t.as,
    );
    expect(one.status).toBe(200);
    expect(one.body.trusted_form_senders).toEqual(['contact.form@gmail.com']);
    const cleared = await svc.api.patch(`/v1/mailboxes/${m.id}`, { trusted_form_senders: [] }, t.as);
    expect(cleared.body.trusted_form_senders).toEqual([]);
  });

  it('refuses public email provider domains, malformed entries and more than 50 entries, changing nothing', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, { trusted_form_senders: ['@acme.test'] });
    const before = await stateOf(t);
    const bad: Array<[string[], string]> = [
      [['@acme.test', '@gmail.com'], 'body.trusted_form_senders.1'],
      [['@GMX.de'], 'body.trusted_form_senders.0'],
      [['@yahoo.co.uk'], 'body.trusted_form_senders.0'],
      [['@outlook.com'], 'body.trusted_form_senders.0'],
      [['@proton.me'], 'body.trusted_form_senders.0'],
      [['@icloud.com'], 'body.trusted_form_senders.0'],
      [['acme.test'], 'body.trusted_form_senders.0'],
      [['@'], 'body.trusted_form_senders.0'],
      [['a b@acme.test'], 'body.trusted_form_senders.0'],
      [['@localhost'], 'body.trusted_form_senders.0'],
      [Array.from({ length: 51 }, (_, i) => `form${i}@acme.test`), 'body.trusted_form_senders'],
    ];
    for (const [list, location] of bad) {
      for (const r of [
        await svc.api.patch(`/v1/mailboxes/${m.id}`, { trusted_form_senders: list }, t.as),
        await svc.api.post('/v1/mailboxes', { name: 'N', email: 'n@acme.test', trusted_form_senders: list }, t.as),
      ]) {
        expect(r.status, list.join()).toBe(422);
        expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
        expect(r.body.errors[0].location, list.join()).toBe(location);
      }
    }
    const fifty = Array.from({ length: 50 }, (_, i) => `form${i}@acme.test`);
    expect((await svc.api.patch(`/v1/mailboxes/${m.id}`, { trusted_form_senders: fifty }, t.as)).status).toBe(200);
    const after = await stateOf(t);
    expect(after.rows[0]!.trusted_form_senders).toEqual(fifty);
    expect(before.rows[0]!.trusted_form_senders).toEqual(['@acme.test']);
  });

  it('knows public providers across country domains without refusing look-alike company domains', () => {
    for (const d of ['gmail.com', 'googlemail.com', 'hotmail.fr', 'outlook.de', 'yahoo.co.jp', 'gmx.net', 'aol.com']) {
      expect(isPublicEmailDomain(d), d).toBe(true);
    }
    for (const d of ['acme.com', 'gmx-partners.com', 'outlook.acme.com', 'mygmail.com', 'yahoo.example.com']) {
      expect(isPublicEmailDomain(d), d).toBe(false);
    }
  });
});

describe('changing and deleting mailboxes', () => {
  it('merges config key by key, lists the changes in mailbox.updated, and a repeat changes nothing', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, imapBody());
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      `/v1/mailboxes/${m.id}`,
      { name: 'Sales EU', config: { smtp_port: 2525, smtp_username: null } },
      t.as,
    );
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('Sales EU');
    expect(r.body.config).toEqual({ ...m.config, smtp_port: 2525, smtp_username: undefined });
    expect(r.body.config).not.toHaveProperty('smtp_username');
    expect(r.body.forwarding_address).toBe(m.forwarding_address);
    const again = await svc.api.patch(`/v1/mailboxes/${m.id}`, { name: 'Sales EU', config: { smtp_port: 2525 } }, t.as);
    expect(again.body).toEqual(r.body);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['mailbox.updated']);
    expect(events[0].data).toEqual({ mailbox: r.body, changes: ['name', 'config'] });
  });

  it('lets an admin disable and resume a mailbox; an error is cleared by `active` or new settings', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, imapBody());
    const off = await svc.api.patch(`/v1/mailboxes/${m.id}`, { status: 'disabled' }, t.as);
    expect(off.body.status).toBe('disabled');
    const on = await svc.api.patch(`/v1/mailboxes/${m.id}`, { status: 'active' }, t.as);
    expect(on.body.status).toBe('active');

    // The service sets `error` (IMAP polling); new connection settings try again.
    await svc.rt.deps.database.db
      .updateTable('mailboxes')
      .set({ status: 'error', last_error: 'LOGIN failed' })
      .where('id', '=', m.id)
      .execute();
    expect((await svc.api.get(`/v1/mailboxes/${m.id}`, t.as)).body).toMatchObject({
      status: 'error',
      last_error: 'LOGIN failed',
    });
    const renamed = await svc.api.patch(`/v1/mailboxes/${m.id}`, { name: 'Only a name' }, t.as);
    expect(renamed.body).toMatchObject({ status: 'error', last_error: 'LOGIN failed' });
    const fixed = await svc.api.patch(`/v1/mailboxes/${m.id}`, { password: `${IMAP_PASSWORD}` }, t.as);
    expect(fixed.body).toMatchObject({ status: 'active', last_error: null });
  });

  it('deletes a mailbox: 204, mailbox.deleted, its address stops routing, its audit entries stay', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t);
    const seq = await latestSeqOf(svc, t);
    const { mailboxForAddress } = await import('../../../src/modules/mailboxes/service.js');
    expect(await mailboxForAddress(svc.rt.deps.database.db, m.forwarding_address)).not.toBeNull();
    const r = await svc.api.delete(`/v1/mailboxes/${m.id}`, t.as);
    expect(r.status).toBe(204);
    expect((await svc.api.get(`/v1/mailboxes/${m.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/mailboxes/${m.id}`, t.as)).status).toBe(404);
    expect(await mailboxForAddress(svc.rt.deps.database.db, m.forwarding_address)).toBeNull();
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['mailbox.deleted']);
    expect(events[0].data).toEqual({ mailbox_id: m.id });
    expect((await auditOf(t, m.id)).map((a) => a.action)).toEqual(['mailbox.created', 'mailbox.deleted']);
  });
});

describe('who may use mailboxes', () => {
  it('admins and owners; keys with settings:read to read and settings:write to write; nobody else', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const readKey = await newApiKey(svc.api, t, ['settings:read']);
    const writeKey = await newApiKey(svc.api, t, ['settings:write']);
    const otherKey = await newApiKey(svc.api, t, ['tickets:write', 'contacts:write', 'kb:write', 'realtime']);
    const before = await stateOf(t);

    const writes = (as: object) => [
      () => svc.api.post('/v1/mailboxes', { name: 'N', email: `n-${randomUUID()}@acme.test` }, as),
      () => svc.api.patch(`/v1/mailboxes/${m.id}`, { name: 'Renamed' }, as),
      () => svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, as),
      () => svc.api.delete(`/v1/mailboxes/${m.id}`, as),
    ];
    const reads = (as: object) => [
      () => svc.api.get('/v1/mailboxes', as),
      () => svc.api.get(`/v1/mailboxes/${m.id}`, as),
    ];

    for (const as of [agent.as, viewer.as, { token: otherKey.key }]) {
      for (const call of [...reads(as), ...writes(as)]) {
        const r = await call();
        expect(r.status).toBe(403);
        expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
      }
    }
    for (const call of writes({ token: readKey.key })) expect((await call()).status).toBe(403);
    expect(await stateOf(t)).toEqual(before);
    for (const call of reads({ token: readKey.key })) expect((await call()).status).toBe(200);
    for (const call of reads({ token: writeKey.key })) expect((await call()).status).toBe(200);
    for (const call of reads(admin.as)) expect((await call()).status).toBe(200);
    expect((await svc.api.patch(`/v1/mailboxes/${m.id}`, { name: 'By key' }, { token: writeKey.key })).status).toBe(
      200,
    );
    expect((await svc.api.patch(`/v1/mailboxes/${m.id}`, { name: 'By admin' }, admin.as)).status).toBe(200);
    const byKey = await svc.api.post('/v1/mailboxes', { name: 'K', email: 'k@acme.test' }, { token: writeKey.key });
    expect(byKey.status).toBe(201);
    const audit = await auditOf(t, byKey.body.id);
    expect(audit[0]).toMatchObject({ actor_type: 'api_key', actor_api_key_id: writeKey.id });
    expect((await svc.api.delete(`/v1/mailboxes/${m.id}`, admin.as)).status).toBe(204);
    expect((await svc.api.get('/v1/mailboxes', {})).status).toBe(401);
  });

  it('answers another workspace’s mailbox with 404, exactly like a missing one, and changes nothing', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const m = await create(a);
    const before = await stateOf(a);
    const missing = randomUUID();
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { name: 'Mine now' }],
      ['POST', '/test', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const foreign = await svc.api.req(method, `/v1/mailboxes/${m.id}${path}`, { ...b.as, body });
      const none = await svc.api.req(method, `/v1/mailboxes/${missing}${path}`, { ...b.as, body });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(none.body);
    }
    expect((await svc.api.get('/v1/mailboxes', b.as)).body.data).toEqual([]);
    expect(await stateOf(a)).toEqual(before);
  });
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
