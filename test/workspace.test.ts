// POST /v1/workspaces, GET/PATCH /v1/workspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Service, signUp, startService, unique } from './helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

describe('workspace', () => {
  it('creates a workspace with defaults, a widget key and a unique slug', async () => {
    const p = await signUp(svc.api);
    const slug = unique('acme').toLowerCase();
    const r = await svc.api.post('/v1/workspaces', { name: 'Acme', slug }, { token: p.token });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Acme',
      slug,
      widget_key: expect.stringMatching(/^wk_/),
      avatar_url: null,
      images: { help_center_logo: null, help_center_favicon: null, widget_avatar: null, widget_launcher: null },
      settings: { timezone: 'UTC', gravatar: false, domain_logos: true, auto_assign: 'none', label_creation: 'all' },
    });
    const taken = await svc.api.post('/v1/workspaces', { name: 'Acme 2', slug }, { token: p.token });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('conflict');
    const generated = await svc.api.post('/v1/workspaces', { name: 'Acme' }, { token: p.token });
    const generated2 = await svc.api.post('/v1/workspaces', { name: 'Acme' }, { token: p.token });
    expect(generated.body.slug).not.toBe(generated2.body.slug);
    const bad = await svc.api.post('/v1/workspaces', { name: 'x', slug: 'Not A Slug!' }, { token: p.token });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('body.slug');
    const blank = await svc.api.post('/v1/workspaces', { name: '   ' }, { token: p.token });
    expect(blank.status).toBe(422);
  });

  it('merges settings key by key, validates them, and publishes workspace.updated', async () => {
    const t = await newTenant(svc.api);
    await svc.api.patch('/v1/workspace', { settings: { timezone: 'America/New_York', ai: { assistant: true } } }, t.as);
    const r = await svc.api.patch('/v1/workspace', { settings: { csat_enabled: true, brand_color: '#112233' } }, t.as);
    expect(r.status).toBe(200);
    expect(r.body.settings).toMatchObject({
      timezone: 'America/New_York',
      csat_enabled: true,
      brand_color: '#112233',
      ai: { assistant: true },
    });
    const read = await svc.api.get('/v1/workspace', t.as);
    expect(read.body).toEqual(r.body);
    for (const settings of [
      { timezone: 'Mars/Base' },
      { brand_color: 'red' },
      { auto_close_days: -1 },
      { unknown_key: 1 },
      { ai: { nope: true } },
    ]) {
      const bad = await svc.api.patch('/v1/workspace', { settings }, t.as);
      expect(bad.status, JSON.stringify(settings)).toBe(422);
      expect(bad.body.errors[0].location).toMatch(/^body\.settings\./);
    }
    expect((await svc.api.get('/v1/workspace', t.as)).body).toEqual(r.body);
    const events = await svc.api.get('/v1/events?since=1', t.as);
    expect(events.body.data.map((e: any) => e.type)).toEqual(['workspace.updated', 'workspace.updated']);
    expect(events.body.data[1].data.workspace.settings.csat_enabled).toBe(true);
  });

  it('lets only admins change the workspace', async () => {
    const t = await newTenant(svc.api);
    const viewer = await signUp(svc.api, 'Vera Viewer');
    await svc.rt.deps.database.db
      .insertInto('members')
      .values({ workspace_id: t.workspaceId, user_id: viewer.userId, role: 'viewer' })
      .execute();
    const as = { token: viewer.token, workspace: t.workspaceId };
    expect((await svc.api.get('/v1/workspace', as)).status).toBe(200);
    const r = await svc.api.patch('/v1/workspace', { name: 'Mine now' }, as);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
  });
});
