// The route table, walked: every route that names a record by id answers another
// workspace's record with 404, exactly like a record that does not exist, and changes
// nothing. A new route with an id parameter must add its record factory here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/platform/crypto/random.js';
import { keepMail, outboxTransport } from '../src/platform/mail/outbox.js';
import { makeCompany, makeContact, makeTicket } from './support/builders.js';
import {
  ALL_SCOPES,
  type Api,
  addMember,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
  unique,
} from './support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

type Factory = (api: Api, owner: Tenant) => Promise<string>;

/** An assistant conversation of the tenant's owner. */
async function assistantSession(t: Tenant): Promise<string> {
  const id = newId();
  await svc.rt.deps.database.db
    .insertInto('assistant_sessions')
    .values({ workspace_id: t.workspaceId, id, user_id: t.owner.userId })
    .execute();
  return id;
}

/** How to make a record of each kind in a workspace; keyed by the route's URL pattern. */
const FACTORIES: Record<string, Factory> = {
  '/v1/api-keys/:id': async (api, t) => (await newApiKey(api, t, ['kb:read'])).id,
  '/v1/members/:user_id': async (_api, t) => (await addMember(svc, t, 'agent', 'Member Of A')).userId,
  '/v1/members/:user_id/availability': async (api, t) => FACTORIES['/v1/members/:user_id']!(api, t),
  '/v1/invitations/:id': async (api, t) => {
    const r = await api.post('/v1/invitations', { email: `${unique('inv')}@example.com`, role: 'agent' }, t.as);
    if (r.status !== 201) throw new Error(`invitation: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/teams/:id': async (api, t) => {
    const r = await api.post('/v1/teams', { name: unique('Team'), private: false, member_ids: [] }, t.as);
    if (r.status !== 201) throw new Error(`team: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/contacts/:id': async (api, t) => (await makeContact(api, t, { name: 'Cora' })).id,
  '/v1/contacts/:id/tickets': async (api, t) => FACTORIES['/v1/contacts/:id']!(api, t),
  '/v1/contacts/:id/avatar': async (api, t) => FACTORIES['/v1/contacts/:id']!(api, t),
  '/v1/contacts/:id/avatar/refresh': async (api, t) => FACTORIES['/v1/contacts/:id']!(api, t),
  '/v1/companies/:id/avatar': async (api, t) => FACTORIES['/v1/companies/:id']!(api, t),
  '/v1/companies/:id/avatar/refresh': async (api, t) => FACTORIES['/v1/companies/:id']!(api, t),
  '/v1/attachments/:id': async (api, t) => {
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'hello.txt');
    const headers = { authorization: `Bearer ${t.as.token}`, 'svc-workspace': t.workspaceId };
    const r = await fetch(`${api.url}/v1/attachments`, { method: 'POST', headers, body: form });
    if (r.status !== 201) throw new Error(`attachment: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { id: string }).id;
  },
  '/v1/companies/:id': async (api, t) => (await makeCompany(api, t, { domain: `${unique('co')}.example.com` })).id,
  '/v1/tickets/:id': async (api, t) => (await makeTicket(api, t, { subject: 'Hello', body_html: '<p>first</p>' })).id,
  '/v1/tickets/:id/messages': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/activities': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/merge': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/ai/draft': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/ai/summary': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/ai/ask': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/ai/triage': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  '/v1/tickets/:id/ai/suggestions/:field': async (api, t) => FACTORIES['/v1/tickets/:id']!(api, t),
  // The assistant's records, stored directly (this instance has no AI provider to start one).
  '/v1/assistant/sessions/:id': async (_api, t) => assistantSession(t),
  '/v1/assistant/sessions/:id/messages': async (_api, t) => assistantSession(t),
  '/v1/assistant/actions/:id/decision': async (_api, t) => {
    const session = await assistantSession(t);
    const id = newId();
    await svc.rt.deps.database.db
      .insertInto('assistant_actions')
      .values({
        workspace_id: t.workspaceId,
        id,
        session_id: session,
        step_id: newId(),
        user_id: t.owner.userId,
        sign_in_session_id: newId(),
        tool: 'update_ticket',
        args: '{}',
        plan: null,
        preview: JSON.stringify({ title: 'x', summary: 'x', changes: [], targets: [], external: false }),
        expires_at: new Date(Date.now() + 600_000),
      })
      .execute();
    return id;
  },
  '/v1/custom-fields/:id': async (api, t) => {
    const r = await api.post('/v1/custom-fields', { entity: 'ticket', type: 'text', name: unique('Field') }, t.as);
    if (r.status !== 201) throw new Error(`custom field: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/tags/:id': async (api, t) => {
    const r = await api.post('/v1/tags', { name: unique('Label') }, t.as);
    if (r.status !== 201) throw new Error(`tag: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/tags/:id/merge': async (api, t) => FACTORIES['/v1/tags/:id']!(api, t),
  '/v1/tag-groups/:id': async (api, t) => {
    const r = await api.post('/v1/tag-groups', { name: unique('Group') }, t.as);
    if (r.status !== 201) throw new Error(`tag group: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/messages/:id/original': async (api, t) => {
    const id = await FACTORIES['/v1/tickets/:id']!(api, t);
    const r = await api.get(`/v1/tickets/${id}/messages`, t.as);
    return r.body.data[0].id;
  },
  '/v1/messages/:id/resend': async (api, t) => FACTORIES['/v1/messages/:id/original']!(api, t),
  '/v1/mail/outbox/:id': async (_api, t) =>
    keepMail(
      svc.rt.deps,
      await outboxTransport(),
      { from: 'x@acme.test', to: 'someone@example.com', subject: 'Kept', text: 'A secret link' },
      { workspaceId: t.workspaceId, kind: 'notice' },
    ),
  '/v1/views/:id': async (api, t) => {
    const r = await api.post('/v1/views', { name: unique('View'), shared: true, filters: { status: ['open'] } }, t.as);
    if (r.status !== 201) throw new Error(`view: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/kb/collections/:id': async (api, t) => {
    const r = await api.post('/v1/kb/collections', { name: unique('Collection') }, t.as);
    if (r.status !== 201) throw new Error(`kb collection: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/kb/articles/:id': async (api, t) => {
    const r = await api.post('/v1/kb/articles', { title: unique('Article') }, t.as);
    if (r.status !== 201) throw new Error(`kb article: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/saved-replies/:id': async (api, t) => {
    const r = await api.post('/v1/saved-replies', { title: unique('Reply'), body_html: '<p>Thanks!</p>' }, t.as);
    if (r.status !== 201) throw new Error(`saved reply: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/automations/:id': async (api, t) => {
    const body = {
      name: unique('Auto'),
      trigger: 'ticket_created',
      actions: [{ type: 'set_priority', value: 'high' }],
    };
    const r = await api.post('/v1/automations', body, t.as);
    if (r.status !== 201) throw new Error(`automation: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/sla-policies/:id': async (api, t) => {
    const body = { name: unique('SLA'), first_response_minutes: 60, resolution_minutes: 480 };
    const r = await api.post('/v1/sla-policies', body, t.as);
    if (r.status !== 201) throw new Error(`sla policy: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/webhooks/:id': async (api, t) => {
    // Paused, at a name that never resolves: nothing is ever sent from this test.
    const body = { url: 'https://hooks.example.invalid/helpdesk', events: ['ticket.created'], enabled: false };
    const r = await api.post('/v1/webhooks', body, t.as);
    if (r.status !== 201) throw new Error(`webhook: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/webhooks/:id/test': async (api, t) => FACTORIES['/v1/webhooks/:id']!(api, t),
  '/v1/webhooks/:id/rotate-secret': async (api, t) => FACTORIES['/v1/webhooks/:id']!(api, t),
  '/v1/webhooks/:id/deliveries': async (api, t) => FACTORIES['/v1/webhooks/:id']!(api, t),
  // Only the endpoint id is replaced here; test/modules/webhooks/webhooks.test.ts checks foreign delivery ids.
  '/v1/webhooks/:id/deliveries/:delivery_id/redeliver': async (api, t) => FACTORIES['/v1/webhooks/:id']!(api, t),
  '/v1/webhooks/:id/deliveries/:delivery_id': async (api, t) => FACTORIES['/v1/webhooks/:id']!(api, t),
  '/v1/mailboxes/:id': async (api, t) => {
    const r = await api.post('/v1/mailboxes', { name: 'Support', email: `${unique('mbx')}@example.com` }, t.as);
    if (r.status !== 201) throw new Error(`mailbox: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/mailboxes/:id/test': async (api, t) => FACTORIES['/v1/mailboxes/:id']!(api, t),
};

/** A body that passes validation for each write, so the answer is about the record, not the input. */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/members/:user_id': { role: 'viewer' },
  'PATCH /v1/members/:user_id/availability': { availability: 'away' },
  'PATCH /v1/teams/:id': { name: 'Renamed' },
  'PATCH /v1/contacts/:id': { name: 'Renamed' },
  'PATCH /v1/companies/:id': { name: 'Renamed' },
  'PATCH /v1/tickets/:id': { priority: 'high' },
  'PATCH /v1/views/:id': { name: 'Renamed' },
  'PATCH /v1/saved-replies/:id': { title: 'Renamed' },
  'PATCH /v1/kb/collections/:id': { name: 'Renamed' },
  'PATCH /v1/kb/articles/:id': { title: 'Renamed' },
  'PATCH /v1/automations/:id': { name: 'Renamed' },
  'PATCH /v1/sla-policies/:id': { name: 'Renamed' },
  'PATCH /v1/custom-fields/:id': { name: 'Renamed' },
  'POST /v1/tickets/:id/messages': { kind: 'note', body_html: 'hello' },
  'POST /v1/tickets/:id/merge': { into_id: '1' },
  'POST /v1/tickets/:id/ai/draft': {},
  'POST /v1/tickets/:id/ai/ask': { question: 'Why?' },
  'POST /v1/tickets/:id/ai/triage': {},
  'PATCH /v1/tags/:id': { name: 'Renamed' },
  'POST /v1/tags/:id/merge': { into: '0193c6a0-0000-7000-8000-00000000beef' },
  'PATCH /v1/tag-groups/:id': { name: 'Renamed' },
  'PATCH /v1/webhooks/:id': { description: 'Renamed' },
  'POST /v1/webhooks/:id/rotate-secret': {},
  'PATCH /v1/mailboxes/:id': { name: 'Renamed' },
  'PATCH /v1/assistant/sessions/:id': { title: 'Renamed' },
  'POST /v1/assistant/sessions/:id/messages': { text: 'Hello' },
  'POST /v1/assistant/actions/:id/decision': { decision: 'approve', token: 'x' },
};

describe('records of another workspace', () => {
  it('answer 404 on every route with an id, identical to a missing record', async () => {
    // `:provider` (mailbox OAuth) names google or microsoft, not a record: its mailbox_id is
    // checked in test/modules/mailboxes/oauth.test.ts. `:slot` (the workspace's images) names a slot of
    // the caller's own workspace.
    const routes = svc.rt.app.routeTable.filter(
      (r) =>
        r.access.kind === 'workspace' &&
        /\/:[a-z_]+/.test(r.url) &&
        !r.url.includes('/:provider/') &&
        !r.url.endsWith('/:slot'),
    );
    expect(routes.length).toBeGreaterThan(0);
    const missingFactories = [...new Set(routes.map((r) => r.url))].filter((u) => !FACTORIES[u]);
    expect(missingFactories, 'add a factory for each new route with an id').toEqual([]);

    const a = await newTenant(svc.api, 'Alpha');
    const b = await newTenant(svc.api, 'Beta');
    const keyB = await newApiKey(
      svc.api,
      b,
      ALL_SCOPES.filter((s) => s !== 'realtime'),
    );
    for (const route of routes) {
      const id = await FACTORIES[route.url]!(svc.api, a);
      const param = /:([a-z_]+)/.exec(route.url)![1]!;
      const url = route.url.replace(`:${param}`, id);
      const missingUrl = route.url.replace(`:${param}`, '0193c6a0-0000-7000-8000-00000000dead');
      const body = BODIES[`${route.method} ${route.url}`];
      // A route for people only refuses every key (403) before looking at the record.
      const callers =
        route.access.kind === 'workspace' && route.access.scopes === null ? [b.as] : [b.as, { token: keyB.key }];
      for (const as of callers) {
        const foreign = await svc.api.req(route.method, url, { ...as, body });
        const missing = await svc.api.req(route.method, missingUrl, { ...as, body });
        const label = `${route.method} ${route.url} as ${as.workspace ? 'member' : 'key'}`;
        expect(foreign.status, label).toBe(404);
        expect(foreign.body, label).toEqual(missing.body);
      }
      // Still there for its own workspace (where the id was the only parameter).
      const own = svc.rt.app.routeTable.find((r) => r.url === route.url && r.method === 'GET');
      // (The assistant is off on this instance, so its own conversation answers 403 assistant_off:
      // test/modules/assistant/sessions.test.ts.)
      if (own && !url.includes('/:') && !url.startsWith('/v1/assistant/'))
        expect((await svc.api.get(url, a.as)).status, `GET ${route.url} by its owner`).toBe(200);
    }
  });
});
