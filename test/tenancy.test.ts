// Tenant isolation: another workspace's record answers 404, exactly like a missing one,
// and nothing of it can be read or changed through any credential of another workspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiKey, newTenant, type Service, startService } from './support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

describe('tenant isolation', () => {
  it('answers 404 for another workspace’s API key, identical to a missing one, and changes nothing', async () => {
    const a = await newTenant(svc.api, 'Alpha');
    const b = await newTenant(svc.api, 'Beta');
    const keyA = await newApiKey(svc.api, a, ['settings:read']);
    const adminKeyB = await newApiKey(svc.api, b, ['settings:write']);

    const viaUser = await svc.api.delete(`/v1/api-keys/${keyA.id}`, b.as);
    const viaKey = await svc.api.delete(`/v1/api-keys/${keyA.id}`, { token: adminKeyB.key });
    const missing = await svc.api.delete('/v1/api-keys/0193c6a0-0000-7000-8000-000000000000', b.as);
    const garbage = await svc.api.delete("/v1/api-keys/1'%20OR%20'1'='1", b.as);
    for (const r of [viaUser, viaKey, missing, garbage]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual(missing.body);
    }
    expect((await svc.api.get('/v1/workspace', { token: keyA.key })).status).toBe(200);
    const listB = await svc.api.get('/v1/api-keys', b.as);
    expect(listB.body.data.map((k: any) => k.id)).toEqual([adminKeyB.id]);
  });

  it('lets a person use only the workspaces they belong to, whatever the header says', async () => {
    const a = await newTenant(svc.api, 'Alpha');
    const b = await newTenant(svc.api, 'Beta');
    for (const [method, path, body] of [
      ['GET', '/v1/workspace', undefined],
      ['PATCH', '/v1/workspace', { name: 'Hijacked' }],
      ['GET', '/v1/api-keys', undefined],
      ['POST', '/v1/api-keys', { name: 'x', scopes: ['realtime'] }],
      ['GET', '/v1/events?since=0', undefined],
    ] as const) {
      const r = await svc.api.req(method, path, { token: b.owner.token, workspace: a.workspaceId, body });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    const me = await svc.api.get('/v1/me', { token: b.owner.token, workspace: a.workspaceId });
    expect(me.body.workspaces.map((w: any) => w.id)).toEqual([b.workspaceId]);
    expect((await svc.api.get('/v1/workspace', a.as)).body.name).toBe('Alpha');
  });
});
