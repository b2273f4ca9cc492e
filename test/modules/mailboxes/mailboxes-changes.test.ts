// /v1/mailboxes, part 2 (part 1, creating, reading and bad input: mailboxes.test.ts; the shared
// setup: setup.ts): trusted_form_senders, changing and deleting mailboxes, who may use them.

import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { isPublicEmailDomain } from '../../../src/modules/email/public-domains.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
} from '../../support/helpers.js';
import { IMAP_PASSWORD, mailboxesSuite } from './setup.js';

const suite = mailboxesSuite();
const { create, imapBody, auditOf, stateOf } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
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
