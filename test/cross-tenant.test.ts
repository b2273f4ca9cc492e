// The route table, walked: every route that names a record by id answers another
// workspace's record with 404, exactly like a record that does not exist, and changes
// nothing. A new route with an id parameter must add its record factory here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_SCOPES,
  type Api,
  newApiKey,
  newTenant,
  type Service,
  signUp,
  startService,
  type Tenant,
  unique,
} from './helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

type Factory = (api: Api, owner: Tenant) => Promise<string>;

/** How to make a record of each kind in a workspace; keyed by the route's URL pattern. */
const FACTORIES: Record<string, Factory> = {
  '/v1/api-keys/:id': async (api, t) => (await newApiKey(api, t, ['kb:read'])).id,
  '/v1/members/:user_id': async (_api, t) => {
    const p = await signUp(svc.api, 'Member Of A');
    await svc.rt.deps.database.db
      .insertInto('members')
      .values({ workspace_id: t.workspaceId, user_id: p.userId, role: 'agent' })
      .execute();
    return p.userId;
  },
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
  '/v1/contacts/:id': async (api, t) => {
    const r = await api.post('/v1/contacts', { email: `${unique('contact')}@example.com`, name: 'Cora' }, t.as);
    if (r.status !== 201) throw new Error(`contact: ${r.status} ${r.text}`);
    return r.body.id;
  },
  '/v1/contacts/:id/tickets': async (api, t) => FACTORIES['/v1/contacts/:id']!(api, t),
  '/v1/companies/:id': async (api, t) => {
    const r = await api.post('/v1/companies', { name: 'Initech', domain: `${unique('co')}.example.com` }, t.as);
    if (r.status !== 201) throw new Error(`company: ${r.status} ${r.text}`);
    return r.body.id;
  },
};

/** A body that passes validation for each write, so the answer is about the record, not the input. */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/members/:user_id': { role: 'viewer' },
  'PATCH /v1/teams/:id': { name: 'Renamed' },
  'PATCH /v1/contacts/:id': { name: 'Renamed' },
  'PATCH /v1/companies/:id': { name: 'Renamed' },
};

describe('records of another workspace', () => {
  it('answer 404 on every route with an id, identical to a missing record', async () => {
    const routes = svc.rt.app.routeTable.filter((r) => r.access.kind === 'workspace' && /\/:[a-z_]+/.test(r.url));
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
      for (const as of [b.as, { token: keyB.key }]) {
        const foreign = await svc.api.req(route.method, url, { ...as, body });
        const missing = await svc.api.req(route.method, missingUrl, { ...as, body });
        const label = `${route.method} ${route.url} as ${as.workspace ? 'member' : 'key'}`;
        expect(foreign.status, label).toBe(404);
        expect(foreign.body, label).toEqual(missing.body);
      }
      // Still there for its own workspace.
      const own = svc.rt.app.routeTable.find((r) => r.url === route.url && r.method === 'GET');
      if (own) expect((await svc.api.get(url, a.as)).status, `GET ${route.url} by its owner`).toBe(200);
    }
  });
});
