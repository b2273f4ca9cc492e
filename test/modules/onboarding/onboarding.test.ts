// GET /v1/onboarding and POST /v1/onboarding/dismiss: the steps in the spec's order, each done as
// soon as its thing exists, steps above the caller's role not listed, dismissal per person, API
// keys refused (the checklist is a person's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const db = () => svc.rt.deps.database.db;

const ALL = [
  'connect_mailbox',
  'invite_teammate',
  'upload_photo',
  'install_widget',
  'publish_article',
  'setup_triage',
  'create_label',
  'try_ollie',
];

async function onboarding(as: object) {
  const r = await svc.api.get('/v1/onboarding', as);
  expect(r.status, r.text).toBe(200);
  return r.body as {
    steps: Array<{ id: string; title: string; description: string; done: boolean; href: string; requires: string }>;
    done_count: number;
    total: number;
    dismissed: boolean;
  };
}

const doneIds = (o: Awaited<ReturnType<typeof onboarding>>) => o.steps.filter((s) => s.done).map((s) => s.id);

describe('the checklist of a new workspace', () => {
  it('lists the eight steps in order for the owner, none done, not dismissed', async () => {
    const t = await newTenant(svc.api);
    const o = await onboarding(t.as);
    expect(o.steps.map((s) => s.id)).toEqual(ALL);
    expect(o).toMatchObject({ done_count: 0, total: 8, dismissed: false });
    for (const s of o.steps) {
      expect(s.title.length).toBeGreaterThan(0);
      expect(s.description.length).toBeGreaterThan(0);
      expect(s.href).toMatch(/^\//);
      expect(['admin', 'agent']).toContain(s.requires);
      expect(s.done).toBe(false);
    }
    expect(Object.fromEntries(o.steps.map((s) => [s.id, s.requires]))).toEqual({
      connect_mailbox: 'admin',
      invite_teammate: 'admin',
      upload_photo: 'agent',
      install_widget: 'admin',
      publish_article: 'admin',
      setup_triage: 'admin',
      create_label: 'agent',
      try_ollie: 'agent',
    });
  });
});

describe('steps turn done as soon as the thing exists', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant(svc.api);
  });

  it('connect_mailbox: a mailbox', async () => {
    expect((await svc.api.post('/v1/mailboxes', { name: 'Support', email: 'support@acme.test' }, t.as)).status).toBe(
      201,
    );
    expect(doneIds(await onboarding(t.as))).toEqual(['connect_mailbox']);
  });

  it('invite_teammate: a pending invitation (a revoked one does not count), or another member', async () => {
    const inv = await svc.api.post('/v1/invitations', { email: 'new.agent@example.com', role: 'agent' }, t.as);
    expect(inv.status).toBe(201);
    expect(doneIds(await onboarding(t.as))).toContain('invite_teammate');
    expect((await svc.api.delete(`/v1/invitations/${inv.body.id}`, t.as)).status).toBe(204);
    expect(doneIds(await onboarding(t.as))).not.toContain('invite_teammate');
    await addMember(svc, t, 'viewer');
    expect(doneIds(await onboarding(t.as))).toContain('invite_teammate');
  });

  it("upload_photo: the caller's own picture only", async () => {
    const agent = await addMember(svc, t, 'agent');
    await db()
      .updateTable('users')
      .set({ avatar_url: 'https://cdn.example.com/a.png', avatar_source: 'upload' })
      .where('id', '=', t.owner.userId)
      .execute();
    expect(doneIds(await onboarding(t.as))).toContain('upload_photo');
    expect(doneIds(await onboarding(agent.as))).not.toContain('upload_photo');
  });

  it('install_widget: a chat ticket (the widget in use)', async () => {
    const tk = await svc.api.post('/v1/tickets', { subject: 'From the site' }, t.as);
    expect(tk.status).toBe(201);
    expect(doneIds(await onboarding(t.as))).not.toContain('install_widget');
    await db().updateTable('tickets').set({ channel: 'chat' }).where('id', '=', tk.body.id).execute();
    expect(doneIds(await onboarding(t.as))).toContain('install_widget');
  });

  it('setup_triage: automatic triage on, or the triage settings changed from the defaults', async () => {
    const triage = async (body: Record<string, unknown>) => {
      const r = await svc.api.patch('/v1/triage', body, t.as);
      expect(r.status, r.text).toBe(200);
    };
    expect(doneIds(await onboarding(t.as))).not.toContain('setup_triage');
    // Saving the defaults configures nothing.
    await triage({ auto_triage: false, threshold: 0.7, fields: ['priority', 'severity', 'labels'] });
    expect(doneIds(await onboarding(t.as))).not.toContain('setup_triage');
    await triage({ threshold: 0.85 });
    expect(doneIds(await onboarding(t.as))).toContain('setup_triage');
    await triage({ threshold: 0.7 });
    expect(doneIds(await onboarding(t.as))).not.toContain('setup_triage');
    await triage({ fields: ['priority', 'team'] });
    expect(doneIds(await onboarding(t.as))).toContain('setup_triage');
    await triage({ fields: ['severity', 'labels', 'priority'] });
    expect(doneIds(await onboarding(t.as))).not.toContain('setup_triage');
    await triage({ auto_triage: true });
    expect(doneIds(await onboarding(t.as))).toContain('setup_triage');
  });

  it('create_label: a label; publish_article and try_ollie stay open (no knowledge base or assistant yet)', async () => {
    expect((await svc.api.post('/v1/tags', { name: 'Billing' }, t.as)).status).toBe(201);
    const o = await onboarding(t.as);
    expect(doneIds(o)).toEqual([
      'connect_mailbox',
      'invite_teammate',
      'upload_photo',
      'install_widget',
      'setup_triage',
      'create_label',
    ]);
    expect(o).toMatchObject({ done_count: 6, total: 8 });
  });

  it("another workspace's things do not count", async () => {
    const other = await newTenant(svc.api);
    expect(doneIds(await onboarding(other.as))).toEqual([]);
  });
});

describe('role gating', () => {
  it('agents see only their steps; workspace-wide steps are shared; viewers get an empty list', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const admin = await addMember(svc, t, 'admin');
    const viewer = await addMember(svc, t, 'viewer');
    const a = await onboarding(agent.as);
    expect(a.steps.map((s) => s.id)).toEqual(['upload_photo', 'create_label', 'try_ollie']);
    expect(a).toMatchObject({ done_count: 0, total: 3 });
    expect((await onboarding(admin.as)).steps.map((s) => s.id)).toEqual(ALL);
    expect(await onboarding(viewer.as)).toEqual({ steps: [], done_count: 0, total: 0, dismissed: false });

    // Agents create labels by naming them on a ticket (label_creation all).
    expect((await svc.api.post('/v1/tickets', { subject: 'Crash', tags: ['Bug'] }, agent.as)).status).toBe(201);
    expect(doneIds(await onboarding(agent.as))).toEqual(['create_label']);
    expect(doneIds(await onboarding(admin.as))).toEqual(['invite_teammate', 'create_label']);
  });

  it('with label creation limited to admins, create_label is an admin step', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    expect((await svc.api.patch('/v1/workspace', { settings: { label_creation: 'admins' } }, t.as)).status).toBe(200);
    expect((await onboarding(agent.as)).steps.map((s) => s.id)).toEqual(['upload_photo', 'try_ollie']);
    const owner = await onboarding(t.as);
    expect(owner.steps.find((s) => s.id === 'create_label')?.requires).toBe('admin');
  });
});

describe('dismissing', () => {
  it('hides the checklist for the caller only; again is fine', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const r = await svc.api.post('/v1/onboarding/dismiss', undefined, agent.as);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await onboarding(agent.as)).dismissed).toBe(true);
    expect((await onboarding(t.as)).dismissed).toBe(false);
    expect((await svc.api.post('/v1/onboarding/dismiss', undefined, agent.as)).status).toBe(204);
    expect((await onboarding(agent.as)).dismissed).toBe(true);
    // The same person in another workspace still has it.
    const other = await newTenant(svc.api);
    await addMember(svc, other, 'agent', agent);
    expect((await onboarding({ token: agent.token, workspace: other.workspaceId })).dismissed).toBe(false);
  });
});

describe('access', () => {
  it('API keys get 403 (the checklist is per person); no credentials 401', async () => {
    const t = await newTenant(svc.api);
    const key = await newApiKey(svc.api, t, ['settings:read', 'settings:write', 'tickets:read']);
    const g = await svc.api.get('/v1/onboarding', { token: key.key });
    expect(g.status).toBe(403);
    expect(isErrorBody(g.body, 403, 'forbidden')).toBe(true);
    const p = await svc.api.post('/v1/onboarding/dismiss', undefined, { token: key.key });
    expect(p.status).toBe(403);
    expect((await svc.api.get('/v1/onboarding')).status).toBe(401);
    expect((await svc.api.post('/v1/onboarding/dismiss')).status).toBe(401);
    const rows = await db()
      .selectFrom('onboarding_dismissals')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    expect(rows).toEqual([]);
  });
});
