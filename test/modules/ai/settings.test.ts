// PATCH /v1/ai/settings: any subset of the features at the top level, the models (only "" or an
// id of GET /v1/ai/models), the widget cap rounded to cents; every bad input of the issue answers
// 422 with its location and changes nothing; admins and settings:write keys only; one audit
// entry; `assistant` and `auto_triage` are one value with the workspace setting and GET /v1/triage.
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
  svc = await startService(
    { AI_PROVIDER: 'openai', AI_API_KEY: 'sk-test-0000', AI_MODEL: 'house-model' },
    { jobs: false },
  );
});
afterAll(async () => svc?.stop());

async function auditOf(t: Tenant) {
  return svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('action', '=', 'ai_settings.updated')
    .execute();
}

const settingsOf = async (t: Tenant) => {
  const r = await svc.api.get('/v1/ai/config', t.as);
  return { features: r.body.features, models: r.body.models };
};

describe('PATCH /v1/ai/settings', () => {
  it('changes any subset and answers the settings; the cap is rounded to cents', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.patch(
      '/v1/ai/settings',
      {
        tone: 'professional',
        instructions: 'Sign off as the Acme team.',
        reply_language: 'pt-br',
        auto_summarize: true,
        widget_answers: true,
        model: 'gpt-4o',
        fast_model: 'gpt-4o-mini',
        widget_model: 'house-model',
        widget_monthly_cap_usd: 12.345,
      },
      t.as,
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      features: {
        enabled: true,
        auto_triage: false,
        auto_summarize: true,
        widget_answers: true,
        assistant: false,
        tone: 'professional',
        reply_language: 'pt-BR',
        instructions: 'Sign off as the Acme team.',
      },
      model: 'gpt-4o',
      fast_model: 'gpt-4o-mini',
      widget_model: 'house-model',
      widget_monthly_cap_usd: 12.35,
    });
    const config = await settingsOf(t);
    expect(config.features).toEqual(r.body.features);
    expect(config.models).toEqual({ default: 'gpt-4o', fast: 'gpt-4o-mini' });
    const audit = await auditOf(t);
    expect(audit).toHaveLength(1);
    expect((audit[0]!.data as any).changes.sort()).toEqual(
      [
        'tone',
        'instructions',
        'reply_language',
        'auto_summarize',
        'widget_answers',
        'model',
        'fast_model',
        'widget_model',
        'widget_monthly_cap_usd',
      ].sort(),
    );
    // GET /v1/ai/settings answers the stored choices, to any member.
    const viewer = await addMember(svc, t, 'viewer');
    const stored = await svc.api.get('/v1/ai/settings', viewer.as);
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual(r.body);
    // "" goes back to the instance's default; free-text tone up to 200.
    const back = await svc.api.patch('/v1/ai/settings', { model: '', tone: 'warm, like a neighbour' }, t.as);
    expect(back.body).toMatchObject({ model: '', features: { tone: 'warm, like a neighbour' } });
    expect((await settingsOf(t)).models.default).toBe('house-model');
    // The same values again change nothing and log nothing.
    await svc.api.patch('/v1/ai/settings', { model: '', tone: 'warm, like a neighbour' }, t.as);
    expect(await auditOf(t)).toHaveLength(2);
  });

  it('assistant and auto_triage are the workspace setting and the triage setting', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.patch('/v1/ai/settings', { assistant: true, auto_triage: true }, t.as);
    expect(r.body.features).toMatchObject({ assistant: true, auto_triage: true });
    expect((await svc.api.get('/v1/workspace', t.as)).body.settings.ai.assistant).toBe(true);
    expect((await svc.api.get('/v1/triage', t.as)).body.auto_triage).toBe(true);
    await svc.api.patch('/v1/triage', { auto_triage: false }, t.as);
    expect((await settingsOf(t)).features.auto_triage).toBe(false);
  });

  it('refuses each bad input with its location and changes nothing', async () => {
    const t = await newTenant(svc.api);
    await svc.api.patch('/v1/ai/settings', { tone: 'concise', instructions: 'Be brief.' }, t.as);
    const before = await settingsOf(t);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ tone: 'x'.repeat(201) }, 'body.tone'],
      [{ tone: '   ' }, 'body.tone'],
      [{ instructions: 'y'.repeat(2001) }, 'body.instructions'],
      [{ model: 'gpt-9-imaginary' }, 'body.model'],
      [{ fast_model: 'claude-sonnet-5-5' }, 'body.fast_model'],
      [{ widget_model: 'nope' }, 'body.widget_model'],
      [{ reply_language: 'english please' }, 'body.reply_language'],
      [{ reply_language: 'e' }, 'body.reply_language'],
      [{ widget_monthly_cap_usd: -1 }, 'body.widget_monthly_cap_usd'],
      [{ widget_monthly_cap_usd: 10000.01 }, 'body.widget_monthly_cap_usd'],
      [{ enabled: 'yes' }, 'body.enabled'],
      // A valid change beside a bad one is not applied either.
      [{ assistant: true, auto_triage: true, model: 'gpt-9-imaginary' }, 'body.model'],
    ];
    for (const [body, location] of bad) {
      const r = await svc.api.patch('/v1/ai/settings', body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(isErrorBody(r.body, 422)).toBe(true);
      expect(
        r.body.errors.map((e: any) => e.location),
        JSON.stringify(body),
      ).toContain(location);
    }
    const unknown = await svc.api.patch('/v1/ai/settings', { features: { tone: 'concise' } }, t.as);
    expect(unknown.status).toBe(422);
    expect(await settingsOf(t)).toEqual(before);
    expect((await svc.api.get('/v1/workspace', t.as)).body.settings.ai.assistant).toBe(false);
    expect(await auditOf(t)).toHaveLength(1);
  });

  it('takes the boundaries: tone of 200, instructions of 2,000, cap 0 and 10,000', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.patch(
      '/v1/ai/settings',
      { tone: 't'.repeat(200), instructions: 'i'.repeat(2000), widget_monthly_cap_usd: 10000 },
      t.as,
    );
    expect(r.status).toBe(200);
    expect(r.body.widget_monthly_cap_usd).toBe(10000);
    const zero = await svc.api.patch('/v1/ai/settings', { widget_monthly_cap_usd: 0 }, t.as);
    expect(zero.body.widget_monthly_cap_usd).toBe(0);
  });

  it('is for admins and settings:write keys: viewers, agents and read keys get 403', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const admin = await addMember(svc, t, 'admin');
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const write = await newApiKey(svc.api, t, ['settings:write']);
    for (const as of [viewer.as, agent.as, { token: read.key }]) {
      const r = await svc.api.patch('/v1/ai/settings', { tone: 'concise' }, as);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    expect((await settingsOf(t)).features.tone).toBe('friendly');
    expect((await svc.api.patch('/v1/ai/settings', { tone: 'concise' }, admin.as)).status).toBe(200);
    expect((await svc.api.patch('/v1/ai/settings', { tone: 'friendly' }, { token: write.key })).status).toBe(200);
  });

  it("never shows or changes another workspace's settings", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await svc.api.patch('/v1/ai/settings', { tone: 'concise', model: 'gpt-4o' }, a.as);
    expect((await svc.api.get('/v1/ai/settings', b.as)).body).toMatchObject({
      model: '',
      features: { tone: 'friendly' },
    });
    expect(await settingsOf(b)).toEqual({
      features: expect.objectContaining({ tone: 'friendly' }),
      models: { default: 'house-model', fast: 'house-model' },
    });
  });
});
