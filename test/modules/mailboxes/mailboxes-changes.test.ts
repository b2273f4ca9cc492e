// /v1/mailboxes, part 2 (part 1, creating, reading and bad input: mailboxes.test.ts, whose setup
// this file repeats): trusted_form_senders, changing and deleting mailboxes, who may use them.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicEmailDomain } from '../../../src/modules/email/public-domains.js';
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
