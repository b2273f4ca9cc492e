// /v1/webhooks without WEBHOOK_ALLOW_PRIVATE: the endpoint object and its rules (events of the
// catalog or `*`, private teams, the secret shown once and stored sealed, who may do what,
// webhook.* events and audit entries, other workspaces' ids), the address checks at creation
// (loopback, private, link-local, `localhost`, a name resolving to loopback) and again at
// delivery time (DNS rebinding included), the address table itself, and the published
// signature test vectors of docs/webhooks.md.
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/modules/webhooks/catalog.js';
import { secretContext } from '../../../src/modules/webhooks/service.js';
import { refusedAddress } from '../../../src/platform/net/address.js';
import { safePost } from '../../../src/platform/net/http.js';
import { signWebhook, verifyWebhook, webhookSignature } from '../../../src/webhooks.js';
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
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

// Names the tests resolve: `flip.test` answers a public address to its first query and loopback
// to the next ones (DNS rebinding).
const NAMES: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'loopback.test': ['127.0.0.1'],
  'mixed.test': ['93.184.215.14', '10.1.2.3'],
  'v6loop.test': ['::1'],
};
let flipCalls = 0;
async function resolve(host: string): Promise<LookupAddress[]> {
  if (host === 'flip.test') return [{ address: flipCalls++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }];
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  const list = NAMES[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

interface Started {
  svc: Service;
  own: OwnDatabase;
}

/** A service on a database of its own (on PostgreSQL: no other file's job worker takes its jobs). */
async function start(tag: string, jobs: boolean): Promise<Started> {
  const own = await ownDatabase(tag);
  const webhooks = { retryDelaysMs: [200, 200, 200, 200, 200, 200, 200], jitter: 0, timeoutMs: 2000, resolve };
  // With jobs, every background worker as in production (IMAP pollers, email senders).
  return { svc: await startService(own.env, { jobs, webhooks, imap: {}, email: {} }), own };
}

// The endpoints' API: no job worker, so nothing is ever sent from these tests (their URLs are
// made up); deliveries are tested against a real receiver in webhooks-delivery.test.ts.
let main: Started;
let svc: Service;
beforeAll(async () => {
  main = await start('webhooks', false);
  svc = main.svc;
});
afterAll(async () => {
  await main?.svc.stop();
  await main?.own.drop();
});

const HOOK = 'https://hooks.example.com/hooks/helpdesk';

async function createHook(t: Tenant, body: Record<string, unknown> = {}) {
  const r = await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'], ...body }, t.as);
  if (r.status !== 201) throw new Error(`webhook: ${r.status} ${r.text}`);
  return r.body as Record<string, any> & { id: string; secret: string };
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

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook endpoints', () => {
  it('creates an endpoint: the documented object, the secret only in this response and stored sealed', async () => {
    const t = await newTenant(svc.api);
    const since = await latestSeqOf(svc, t);
    const r = await svc.api.post(
      '/v1/webhooks',
      { url: HOOK, events: ['ticket.created', 'ticket.updated'], description: ' CRM sync ' },
      t.as,
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/webhooks/${r.body.id}`);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(r.body).sort()).toEqual(
      [
        'created_at',
        'description',
        'enabled',
        'events',
        'id',
        'previous_secret_expires_at',
        'secret',
        'team_ids',
        'updated_at',
        'url',
      ].sort(),
    );
    expect(r.body).toMatchObject({
      url: HOOK,
      events: ['ticket.created', 'ticket.updated'],
      description: 'CRM sync',
      enabled: true,
      team_ids: [],
      previous_secret_expires_at: null,
    });
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(r.body.secret.slice(6), 'base64url')).toHaveLength(32);

    const { secret, ...shown } = r.body;
    const got = await svc.api.get(`/v1/webhooks/${r.body.id}`, t.as);
    expect(got.body).toEqual(shown);
    const list = await svc.api.get('/v1/webhooks', t.as);
    expect(list.body).toEqual({ data: [shown], next_cursor: null });
    expect(JSON.stringify([got.body, list.body])).not.toContain('whsec_');

    // Stored sealed with SECRET_KEY and bound to this endpoint: the column is not the secret.
    const row = await svc.rt.deps.database.db
      .selectFrom('webhook_endpoints')
      .select('secret_enc')
      .where('id', '=', r.body.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_enc).not.toContain(secret.slice(6, 20));
    expect(row.secret_enc).toMatch(/^v1\./);
    expect(svc.rt.deps.secrets.open(row.secret_enc, secretContext(t.workspaceId, r.body.id))).toBe(secret);
    expect(svc.rt.deps.secrets.open(row.secret_enc, secretContext(t.workspaceId, randomUUID()))).toBeNull();

    const events = await eventsAfterOf(svc, t, since);
    expect(events.map((e) => e.type)).toEqual(['webhook.created']);
    expect(events[0].data).toEqual({ webhook: shown });
    const audit = await auditOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['webhook.created']);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('takes catalog types or `*` (alone); an unknown type is a 422 at its position', async () => {
    const t = await newTenant(svc.api);
    const star = await createHook(t, { events: ['ticket.created', '*'] });
    expect(star.events).toEqual(['*']);
    for (const events of [['ticket.exploded'], ['ticket.created', 'event.hidden'], ['webhook.test'], ['ticket.*']]) {
      const r = await svc.api.post('/v1/webhooks', { url: HOOK, events }, t.as);
      expect(r.status, JSON.stringify(events)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location).toMatch(/^body\.events/);
    }
    for (const events of [[], ['ticket.created', 'ticket.created']]) {
      expect((await svc.api.post('/v1/webhooks', { url: HOOK, events }, t.as)).status).toBe(422);
    }
    // Every catalog type is accepted.
    const all = await svc.api.post('/v1/webhooks', { url: HOOK, events: [...EVENT_TYPES] }, t.as);
    expect(all.status).toBe(201);
    expect(all.body.events).toEqual([...EVENT_TYPES]);
  });

  it('grants private teams of the workspace only', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const team = async (tt: Tenant, isPrivate: boolean) =>
      (await svc.api.post('/v1/teams', { name: unique('Team'), private: isPrivate }, tt.as)).body.id as string;
    const secretTeam = await team(t, true);
    const openTeam = await team(t, false);
    const foreign = await team(other, true);
    const ok = await createHook(t, { team_ids: [secretTeam.toUpperCase()] });
    expect(ok.team_ids).toEqual([secretTeam]);
    for (const ids of [[openTeam], [foreign], [randomUUID()]]) {
      const r = await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'], team_ids: ids }, t.as);
      expect(r.status).toBe(422);
      expect(r.body.errors[0].location).toBe('body.team_ids');
    }
  });

  it('changes an endpoint with webhook.updated (changed fields) and an audit entry; deletes it', async () => {
    const t = await newTenant(svc.api);
    const hook = await createHook(t);
    const since = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      `/v1/webhooks/${hook.id}`,
      { url: 'https://hooks.example.com/v2', events: ['contact.created'], description: null, enabled: false },
      t.as,
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      url: 'https://hooks.example.com/v2',
      events: ['contact.created'],
      description: null,
      enabled: false,
    });
    expect(r.body).not.toHaveProperty('secret');
    // Nothing changed: no event.
    expect((await svc.api.patch(`/v1/webhooks/${hook.id}`, { enabled: false }, t.as)).status).toBe(200);
    const events = await eventsAfterOf(svc, t, since);
    expect(events.map((e) => e.type)).toEqual(['webhook.updated']);
    expect(events[0].data.changes.sort()).toEqual(['enabled', 'events', 'url']);
    expect(events[0].data.webhook).toEqual(r.body);

    const del = await svc.api.delete(`/v1/webhooks/${hook.id}`, t.as);
    expect(del.status).toBe(204);
    expect((await svc.api.get(`/v1/webhooks/${hook.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/webhooks/${hook.id}`, t.as)).status).toBe(404);
    const after = await eventsAfterOf(svc, t, since);
    expect(after.at(-1)).toMatchObject({ type: 'webhook.deleted', data: { webhook_id: hook.id } });
    expect((await auditOf(t, hook.id)).map((a) => a.action)).toEqual([
      'webhook.created',
      'webhook.updated',
      'webhook.deleted',
    ]);
  });

  it('pages the list newest first and keeps at most 20 endpoints per workspace', async () => {
    const t = await newTenant(svc.api);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await createHook(t, { description: `n${i}` })).id);
    const over = await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'] }, t.as);
    expect(over.status).toBe(422);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await svc.api.get(`/v1/webhooks?limit=7${cursor ? `&cursor=${cursor}` : ''}`, t.as);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((w: any) => w.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });
});

describe('one delivery record', () => {
  it('carries the body it sends (the envelope without topics); admins only', async () => {
    const t = await newTenant(svc.api);
    const hook = await createHook(t);
    const test = await svc.api.post(`/v1/webhooks/${hook.id}/test`, undefined, t.as);
    expect(test.status).toBe(202);
    const r = await svc.api.get(`/v1/webhooks/${hook.id}/deliveries/${test.body.id}`, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: test.body.id, event_id: test.body.event_id, event_type: 'webhook.test' });
    const sent = JSON.parse(r.body.body);
    expect(sent).toMatchObject({ id: test.body.event_id, seq: 0, type: 'webhook.test', workspace_id: t.workspaceId });
    expect(sent).not.toHaveProperty('topics');
    expect((await svc.api.get(`/v1/webhooks/${hook.id}/deliveries/${randomUUID()}`, t.as)).status).toBe(404);
    const agent = await addMember(svc, t, 'agent');
    expect((await svc.api.get(`/v1/webhooks/${hook.id}/deliveries/${test.body.id}`, agent.as)).status).toBe(403);
  });
});

describe('who may manage webhooks', () => {
  it('admins and owners; keys read with settings:read and write with settings:write', async () => {
    const t = await newTenant(svc.api);
    const hook = await createHook(t);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    expect((await svc.api.get('/v1/webhooks', admin.as)).status).toBe(200);
    expect((await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'] }, admin.as)).status).toBe(201);
    for (const p of [agent, viewer]) {
      expect((await svc.api.get('/v1/webhooks', p.as)).status).toBe(403);
      expect((await svc.api.get(`/v1/webhooks/${hook.id}/deliveries`, p.as)).status).toBe(403);
      expect((await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'] }, p.as)).status).toBe(403);
      expect((await svc.api.post(`/v1/webhooks/${hook.id}/test`, undefined, p.as)).status).toBe(403);
    }
    const reader = await newApiKey(svc.api, t, ['settings:read']);
    const r = await svc.api.get(`/v1/webhooks/${hook.id}`, { token: reader.key });
    expect(r.status).toBe(200);
    expect(r.body).not.toHaveProperty('secret');
    const denied = await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'] }, { token: reader.key });
    expect(denied.status).toBe(403);
    expect(isErrorBody(denied.body, 403, 'forbidden')).toBe(true);
    const other = await newApiKey(svc.api, t, ['tickets:read']);
    expect((await svc.api.get('/v1/webhooks', { token: other.key })).status).toBe(403);
  });

  it('a key subscribes only to events its scopes read, and never grants private teams', async () => {
    const t = await newTenant(svc.api);
    const team = (await svc.api.post('/v1/teams', { name: unique('Secret'), private: true }, t.as)).body.id;
    const settingsOnly = { token: (await newApiKey(svc.api, t, ['settings:write'])).key };
    const withTickets = { token: (await newApiKey(svc.api, t, ['settings:write', 'tickets:read'])).key };
    const everything = { token: (await newApiKey(svc.api, t, ['settings:write', 'realtime'])).key };

    expect((await svc.api.post('/v1/webhooks', { url: HOOK, events: ['team.created'] }, settingsOnly)).status).toBe(
      201,
    );
    for (const events of [['ticket.created'], ['*']]) {
      const r = await svc.api.post('/v1/webhooks', { url: HOOK, events }, settingsOnly);
      expect(r.status, JSON.stringify(events)).toBe(403);
    }
    expect((await svc.api.post('/v1/webhooks', { url: HOOK, events: ['ticket.created'] }, withTickets)).status).toBe(
      201,
    );
    expect((await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'] }, everything)).status).toBe(201);
    const granted = await svc.api.post('/v1/webhooks', { url: HOOK, events: ['*'], team_ids: [team] }, everything);
    expect(granted.status).toBe(403);

    // A key may not redirect an admin's endpoint that is granted a private team.
    const adminHook = await createHook(t, { team_ids: [team] });
    const moved = await svc.api.patch(
      `/v1/webhooks/${adminHook.id}`,
      { url: 'https://hooks.example.com/x' },
      everything,
    );
    expect(moved.status).toBe(403);
    // Pausing it is fine.
    expect((await svc.api.patch(`/v1/webhooks/${adminHook.id}`, { enabled: false }, everything)).status).toBe(200);
  });

  it('answers 404 for another workspace’s endpoints and deliveries, exactly like missing ones', async () => {
    const a = await newTenant(svc.api, 'Alpha');
    const b = await newTenant(svc.api, 'Beta');
    const hook = await createHook(a);
    const test = await svc.api.post(`/v1/webhooks/${hook.id}/test`, undefined, a.as);
    expect(test.status).toBe(202);
    const delivery = test.body.id;
    const missing = randomUUID();
    const key = { token: (await newApiKey(svc.api, b, ['settings:write', 'settings:read'])).key };
    for (const as of [b.as, key]) {
      for (const [method, path, body] of [
        ['GET', `/v1/webhooks/${hook.id}`, undefined],
        ['PATCH', `/v1/webhooks/${hook.id}`, { description: 'mine now' }],
        ['DELETE', `/v1/webhooks/${hook.id}`, undefined],
        ['POST', `/v1/webhooks/${hook.id}/test`, undefined],
        ['GET', `/v1/webhooks/${hook.id}/deliveries`, undefined],
        ['GET', `/v1/webhooks/${hook.id}/deliveries/${delivery}`, undefined],
        ['POST', `/v1/webhooks/${hook.id}/deliveries/${delivery}/redeliver`, undefined],
      ] as Array<[string, string, unknown]>) {
        const foreign = await svc.api.req(method, path, { ...as, body });
        const absent = await svc.api.req(method, path.replace(hook.id, missing), { ...as, body });
        expect(foreign.status, `${method} ${path}`).toBe(404);
        expect(foreign.body).toEqual(absent.body);
      }
    }
    // A delivery id of another endpoint (even in the same workspace) is not found either.
    const second = await createHook(a);
    const r = await svc.api.post(`/v1/webhooks/${second.id}/deliveries/${delivery}/redeliver`, undefined, a.as);
    expect(r.status).toBe(404);
    expect((await svc.api.get(`/v1/webhooks/${hook.id}`, a.as)).status).toBe(200);
  });
});

describe('addresses an endpoint may not point at (WEBHOOK_ALLOW_PRIVATE unset)', () => {
  const REFUSED = [
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://[::1]/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://localhost/hook',
    'https://api.localhost:8443/hook',
    'https://0.0.0.0/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a00:1]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://192.168.1.10/hook',
    'https://172.16.5.4/hook',
    'https://100.64.0.1/hook',
    'https://224.0.0.1/hook',
    'https://2130706433/hook', // 127.0.0.1 as one number
    'https://0x7f.1/hook',
    'https://loopback.test/hook', // a name resolving to loopback
    'https://v6loop.test/hook',
    'https://mixed.test/hook', // one of its addresses is private
    'http://hooks.example.com/hook', // plain http
    'ftp://hooks.example.com/hook',
    'https://user:secret@hooks.example.com/hook',
    'not a url',
  ];

  it('refuses them with 422 at body.url, on create and on change', async () => {
    const t = await newTenant(svc.api);
    const hook = await createHook(t);
    for (const url of REFUSED) {
      const r = await svc.api.post('/v1/webhooks', { url, events: ['*'] }, t.as);
      expect(r.status, url).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed'), url).toBe(true);
      expect(r.body.errors[0].location, url).toBe('body.url');
      const p = await svc.api.patch(`/v1/webhooks/${hook.id}`, { url }, t.as);
      expect(p.status, url).toBe(422);
    }
    expect((await svc.api.get(`/v1/webhooks/${hook.id}`, t.as)).body.url).toBe(HOOK);
    // A public address, and a name that does not resolve (yet), are accepted.
    for (const url of ['https://93.184.215.14/hook', 'https://[2606:4700::1111]/hook', 'https://nowhere.invalid/']) {
      expect((await svc.api.post('/v1/webhooks', { url, events: ['*'] }, t.as)).status, url).toBe(201);
    }
  });

  it('refuses them again at delivery time: a stored private URL and a name that rebinds to loopback', async () => {
    const hits: string[] = [];
    const receiver: Server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    // A service that delivers (still without WEBHOOK_ALLOW_PRIVATE), on a database of its own.
    const sender = await start('webhooks_refusal', true);
    const api = sender.svc.api;
    try {
      const t = await newTenant(api);
      const make = async (url: string) => {
        const r = await api.post('/v1/webhooks', { url, events: ['team.created'] }, t.as);
        if (r.status !== 201) throw new Error(`webhook: ${r.status} ${r.text}`);
        return r.body.id as string;
      };
      // An endpoint that slipped past the create check (stored before the rule, or written directly).
      const direct = await make('https://nowhere.invalid/direct');
      await sender.svc.rt.deps.database.db
        .updateTable('webhook_endpoints')
        .set({ url: `https://127.0.0.1:${port}/direct` })
        .where('id', '=', direct)
        .execute();
      // A name that answered a public address when the endpoint was created, loopback afterwards.
      flipCalls = 0;
      const rebinding = await make(`https://flip.test:${port}/rebind`);
      expect(flipCalls).toBe(1);

      await api.post('/v1/teams', { name: unique('Team') }, t.as);
      const errors: Record<string, string> = {};
      for (const id of [direct, rebinding]) {
        const d = await waitFor('a refused attempt', async () => {
          const r = await api.get(`/v1/webhooks/${id}/deliveries`, t.as);
          return r.body.data.find((x: any) => x.attempts >= 1);
        });
        expect(d).toMatchObject({ event_type: 'team.created', response_status: null, status: 'pending' });
        errors[id] = d.error;
      }
      expect(errors[direct]).toMatch(/^refused: .*127\.0\.0\.1, a loopback address/);
      expect(errors[rebinding]).toMatch(/^refused: flip\.test resolves to 127\.0\.0\.1, a loopback address/);
      expect(flipCalls).toBeGreaterThan(1);
      expect(hits).toEqual([]);
    } finally {
      receiver.close();
      await sender.svc.stop();
      await sender.own.drop();
    }
  });

  it('checks the address the connection uses (the lookup hook), not an earlier answer', async () => {
    const receiver: Server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    try {
      // Private addresses allowed: the same request reaches the receiver (so the refusal below
      // is the address check and nothing else).
      const allowed = await safePost(
        `http://loopback.test:${port}/`,
        '{}',
        {},
        {
          allowPrivate: true,
          timeoutMs: 2000,
          resolve,
        },
      );
      expect(allowed.status).toBe(200);
      flipCalls = 1; // the next answer is loopback
      const refused = await safePost(
        `https://flip.test:${port}/`,
        '{}',
        {},
        {
          allowPrivate: false,
          timeoutMs: 2000,
          resolve,
        },
      );
      expect(refused).toMatchObject({ status: null, timedOut: false });
      expect(refused.error).toMatch(/^refused: flip\.test resolves to 127\.0\.0\.1/);
    } finally {
      receiver.close();
    }
  });

  it('classifies addresses', () => {
    const table: Array<[string, string | null]> = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.0.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['224.0.0.251', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['::ffff:127.0.0.1', 'ipv4-mapped'],
      ['::ffff:8.8.8.8', 'ipv4-mapped'],
      ['fd12:3456::1', 'unique-local'],
      ['fe80::1%eth0', 'link-local'],
      ['ff02::1', 'multicast'],
      ['64:ff9b::a00:1', 'nat64'],
      ['2002:7f00:1::', '6to4'],
      ['8.8.8.8', null],
      ['93.184.215.14', null],
      ['172.32.0.1', null],
      ['2606:4700::1111', null],
      ['[2a00:1450:4001::200e]', null],
      ['example.com', 'invalid'],
    ];
    for (const [ip, want] of table) expect(refusedAddress(ip), ip).toBe(want);
  });
});

describe('signatures', () => {
  it('match the test vectors published in docs/webhooks.md', () => {
    const doc = readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');
    const block = /<!-- test-vectors -->\s*```text\n([\s\S]*?)```/.exec(doc);
    expect(block, 'docs/webhooks.md has a test-vectors block').not.toBeNull();
    const fields = Object.fromEntries(
      block![1]!
        .trim()
        .split('\n')
        .map((line) => {
          const i = line.indexOf(':');
          return [line.slice(0, i).trim(), line.slice(i + 1).trim()];
        }),
    );
    const t = Number(fields.timestamp);
    expect(webhookSignature(fields.secret!, t, fields.body!)).toBe(fields.signature);
    expect(signWebhook(fields.secret!, t, fields.body!)).toBe(fields.header);
    expect(verifyWebhook(fields.secret!, fields.header, fields.body!, { now: t * 1000 })).toBe(true);
    expect(verifyWebhook(fields.secret!, fields.header, Buffer.from(fields.body!), { now: t * 1000 })).toBe(true);
    // Tampered body, other secret, outside the 5-minute tolerance, malformed headers: false.
    expect(verifyWebhook(fields.secret!, fields.header, `${fields.body} `, { now: t * 1000 })).toBe(false);
    expect(verifyWebhook(`${fields.secret}x`, fields.header, fields.body!, { now: t * 1000 })).toBe(false);
    expect(verifyWebhook(fields.secret!, fields.header, fields.body!, { now: (t + 301) * 1000 })).toBe(false);
    expect(verifyWebhook(fields.secret!, fields.header, fields.body!, { now: (t - 301) * 1000 })).toBe(false);
    expect(verifyWebhook(fields.secret!, fields.header, fields.body!, { now: (t + 300) * 1000 })).toBe(true);
    for (const bad of [undefined, '', 'garbage', `t=${t}`, `v1=${fields.signature}`, `t=abc,v1=${fields.signature}`]) {
      expect(verifyWebhook(fields.secret!, bad, fields.body!, { now: t * 1000 }), String(bad)).toBe(false);
    }
    // Another v1 next to the right one (a rotated secret) still verifies; spaces are tolerated.
    const two = `t=${t}, v1=${'0'.repeat(64)}, v1=${fields.signature}`;
    expect(verifyWebhook(fields.secret!, two, fields.body!, { now: t * 1000 })).toBe(true);
  });
});
