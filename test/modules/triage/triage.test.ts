// GET/PATCH /v1/triage: the TriageSettings shape and defaults, the engine this instance has,
// who may read and change them, validation (threshold 0.5 to 0.99, fields), triage.updated.
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

const DEFAULTS = {
  auto_triage: false,
  fields: ['priority', 'severity', 'labels'],
  assign_after_triage: false,
  threshold: 0.7,
  engine: { provider: 'none', model: '', connected: false },
  available: false,
};

async function auditOf(t: Tenant) {
  return svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('action', '=', 'triage.updated')
    .orderBy('created_at')
    .execute();
}

describe('GET and PATCH /v1/triage', () => {
  it('reads the defaults (no engine without AI) for any member and settings keys', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const read = await newApiKey(svc.api, t, ['settings:read']);
    for (const as of [t.as, viewer.as, { token: read.key }]) {
      const r = await svc.api.get('/v1/triage', as);
      expect(r.status).toBe(200);
      expect(r.body).toEqual(DEFAULTS);
    }
    const tickets = await newApiKey(svc.api, t, ['tickets:write']);
    expect((await svc.api.get('/v1/triage', { token: tickets.key })).status).toBe(403);
  });

  it('lets admins and settings:write keys change any subset; triage.updated records what changed', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const write = await newApiKey(svc.api, t, ['settings:write']);
    for (const as of [agent.as, viewer.as, { token: read.key }]) {
      const r = await svc.api.patch('/v1/triage', { auto_triage: true }, as);
      expect(r.status).toBe(403);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    expect(await auditOf(t)).toEqual([]);

    const r = await svc.api.patch(
      '/v1/triage',
      { auto_triage: true, fields: ['team', 'priority'], threshold: 0.85, assign_after_triage: true },
      admin.as,
    );
    expect(r.status).toBe(200);
    const expected = {
      ...DEFAULTS,
      auto_triage: true,
      fields: ['priority', 'team'],
      threshold: 0.85,
      assign_after_triage: true,
    };
    expect(r.body).toEqual(expected);
    expect((await svc.api.get('/v1/triage', viewer.as)).body).toEqual(expected);
    let audit = await auditOf(t);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_user_id).toBe(admin.userId);
    expect(audit[0]!.data).toEqual({
      changes: ['auto_triage', 'fields', 'assign_after_triage', 'threshold'],
      from: {
        auto_triage: false,
        fields: ['priority', 'severity', 'labels'],
        assign_after_triage: false,
        threshold: 0.7,
      },
      to: { auto_triage: true, fields: ['priority', 'team'], assign_after_triage: true, threshold: 0.85 },
    });

    // The bounds themselves are allowed; an empty list of fields too; the same values change nothing.
    const k = await svc.api.patch('/v1/triage', { threshold: 0.99, fields: [] }, { token: write.key });
    expect(k.status).toBe(200);
    expect(k.body).toMatchObject({ threshold: 0.99, fields: [], auto_triage: true });
    expect((await svc.api.patch('/v1/triage', { threshold: 0.5 }, t.as)).body.threshold).toBe(0.5);
    expect((await svc.api.patch('/v1/triage', { threshold: 0.5, auto_triage: true }, t.as)).status).toBe(200);
    audit = await auditOf(t);
    expect(audit.map((a) => (a.data as any).changes)).toEqual([
      ['auto_triage', 'fields', 'assign_after_triage', 'threshold'],
      ['fields', 'threshold'],
      ['threshold'],
    ]);
    expect(audit[1]!.actor_api_key_id).toBe(write.id);
  });

  it('refuses bad input (threshold 0.4 or 1.0, unknown fields) with 422 at its location and changes nothing', async () => {
    const t = await newTenant(svc.api);
    await svc.api.patch('/v1/triage', { threshold: 0.8 }, t.as);
    const before = (await svc.api.get('/v1/triage', t.as)).body;
    const audits = (await auditOf(t)).length;
    const cases: Array<[unknown, string]> = [
      [{ threshold: 0.4 }, 'body.threshold'],
      [{ threshold: 1.0 }, 'body.threshold'],
      [{ threshold: 0.995 }, 'body.threshold'],
      [{ threshold: '0.7' }, 'body.threshold'],
      [{ fields: ['priority', 'mood'] }, 'body.fields.1'],
      [{ fields: ['priority', 'priority'] }, 'body.fields'],
      [{ fields: 'priority' }, 'body.fields'],
      [{ auto_triage: 'yes' }, 'body.auto_triage'],
      [{ engine: { provider: 'llm' } }, 'body.engine'],
      [{ auto_triage: true, threshold: 0.4 }, 'body.threshold'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.patch('/v1/triage', body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(
        r.body.errors.map((e: any) => e.location),
        JSON.stringify(body),
      ).toContain(location);
    }
    expect((await svc.api.get('/v1/triage', t.as)).body).toEqual(before);
    expect(await auditOf(t)).toHaveLength(audits);
  });

  it('keeps each workspace’s settings apart', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await svc.api.patch('/v1/triage', { auto_triage: true, threshold: 0.9 }, a.as);
    expect((await svc.api.get('/v1/triage', b.as)).body).toEqual(DEFAULTS);
  });
});

describe('the engine', () => {
  it('reports a configured language model as the llm engine, not connected: nothing has reached it', async () => {
    // Nothing listens on port 9, and nothing in this instance contacts the provider: configured,
    // not verified. `connected` and `available` must not claim more.
    const ai = await startService(
      { AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:9/v1', AI_API_KEY: 'sk-test', AI_MODEL: 'gpt-test' },
      { jobs: false },
    );
    try {
      const t = await newTenant(ai.api);
      const r = await ai.api.get('/v1/triage', t.as);
      expect(r.status).toBe(200);
      expect(r.body.engine).toEqual({ provider: 'llm', model: 'gpt-test', connected: false });
      expect(r.body.available).toBe(false);
    } finally {
      await ai.stop();
    }
  });
});
