// GET /v1/ai/config and GET /v1/ai/models: with no provider (enabled false, models 404
// ai_disabled), with the instance's OpenAI provider (catalog prices, AI_MODEL not in the catalog
// unpriced, typical costs from the model's price), with an Anthropic provider, and an open-model
// server (Ollama: unpriced, so rule 1's typical charges). Who may read them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, isErrorBody, newApiKey, newTenant, type Service, startService } from '../../support/helpers.js';

const COST_KEYS = [
  'summarize',
  'rewrite',
  'translate',
  'triage',
  'decide',
  'answer_check',
  'copilot',
  'draft_reply',
  'answer',
  'answer_email',
  'playground',
  'kb_draft',
  'assistant',
];
const RULE_1 = {
  draft_reply: 0.03,
  summarize: 0.01,
  copilot: 0.02,
  triage: 0.01,
  rewrite: 0.01,
  translate: 0.01,
  kb_draft: 0.05,
};

describe('without a provider', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  it('reports enabled false, and /v1/ai/models and PATCH /v1/ai/settings answer 404 ai_disabled', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const r = await svc.api.get('/v1/ai/config', viewer.as);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      enabled: false,
      provider: null,
      models: { default: null, fast: null },
      embeddings: false,
      metered: false,
      assistant_name: 'Ollie',
      decisions: { provider: 'none', model: '', connected: false },
      own_key: null,
      features: {
        enabled: true,
        auto_triage: false,
        auto_summarize: false,
        widget_answers: false,
        assistant: false,
        tone: 'friendly',
        reply_language: 'auto',
        instructions: '',
      },
    });
    expect(Object.keys(r.body.costs).sort()).toEqual([...COST_KEYS].sort());
    const models = await svc.api.get('/v1/ai/models', viewer.as);
    expect(models.status).toBe(404);
    expect(isErrorBody(models.body, 404, 'ai_disabled')).toBe(true);
    const patch = await svc.api.patch('/v1/ai/settings', { tone: 'concise' }, t.as);
    expect(isErrorBody(patch.body, 404, 'ai_disabled')).toBe(true);
  });
});

describe('with the instance provider', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(
      { AI_PROVIDER: 'openai', AI_API_KEY: 'sk-instance-secret-0000', AI_MODEL: 'gpt-4o', AI_FAST_MODEL: 'house-mini' },
      { jobs: false },
    );
  });
  afterAll(async () => svc?.stop());

  it('reports the provider, models, metered costs at the model price, rule 1 where unpriced', async () => {
    const t = await newTenant(svc.api);
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const r = await svc.api.get('/v1/ai/config', { token: read.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      enabled: true,
      provider: 'openai',
      models: { default: 'gpt-4o', fast: 'house-mini' },
      embeddings: true,
      metered: true,
      decisions: { provider: 'llm' },
      own_key: null,
    });
    // draft_reply on gpt-4o: 4,000 in at 2.50 and 500 out at 10 per million.
    expect(r.body.costs.draft_reply).toBeCloseTo(0.015, 6);
    // kb_draft: 5,000 in and 1,200 out at gpt-4o's price.
    expect(r.body.costs.kb_draft).toBeCloseTo(0.0245, 6);
    // The fast tier's house-mini has no price: rule 1's typical charges.
    expect(r.body.costs.summarize).toBe(RULE_1.summarize);
    expect(r.body.costs.rewrite).toBe(RULE_1.rewrite);
    expect(r.body.costs.decide).toBe(0);
    expect(JSON.stringify(r.body)).not.toContain('sk-instance-secret');
  });

  it("lists OpenAI's catalog models with prices and AI_FAST_MODEL unpriced", async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const r = await svc.api.get('/v1/ai/models', viewer.as);
    expect(r.status).toBe(200);
    expect(r.body.default).toBe('gpt-4o');
    expect(r.body.fast).toBe('house-mini');
    const byId = new Map<string, any>(r.body.data.map((m: any) => [m.id, m]));
    expect(byId.get('gpt-4o')).toEqual({
      id: 'gpt-4o',
      name: 'GPT-4o',
      vendor: 'openai',
      context_length: 128000,
      usd_per_mtok: { input: 2.5, output: 10 },
      typical_reply_usd: 0.015,
    });
    expect(byId.get('house-mini')).toMatchObject({ usd_per_mtok: null, typical_reply_usd: null, context_length: null });
    expect([...byId.values()].every((m) => m.vendor === 'openai')).toBe(true);
    expect(byId.has('claude-sonnet-5-5')).toBe(false);
  });

  it('shows enabled false once the workspace turns AI off; the models stay readable to switch it on', async () => {
    const t = await newTenant(svc.api);
    expect((await svc.api.patch('/v1/ai/settings', { enabled: false }, t.as)).status).toBe(200);
    const r = await svc.api.get('/v1/ai/config', t.as);
    expect(r.body.enabled).toBe(false);
    expect(r.body.features.enabled).toBe(false);
    expect((await svc.api.get('/v1/ai/models', t.as)).status).toBe(200);
    expect((await svc.api.patch('/v1/ai/settings', { enabled: true }, t.as)).body.features.enabled).toBe(true);
    expect((await svc.api.get('/v1/ai/config', t.as)).body.enabled).toBe(true);
  });

  it('refuses keys without a settings scope', async () => {
    const t = await newTenant(svc.api);
    const tickets = await newApiKey(svc.api, t, ['tickets:read']);
    for (const path of ['/v1/ai/config', '/v1/ai/models']) {
      const r = await svc.api.get(path, { token: tickets.key });
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
  });
});

describe('other providers', () => {
  it("Anthropic: Anthropic's models, the vendor defaults, semantic search by the embedded model", async () => {
    const svc = await startService({ AI_PROVIDER: 'anthropic', AI_API_KEY: 'sk-ant-test-0000' }, { jobs: false });
    try {
      const t = await newTenant(svc.api);
      const config = (await svc.api.get('/v1/ai/config', t.as)).body;
      expect(config).toMatchObject({
        provider: 'anthropic',
        embeddings: true,
        models: { default: 'claude-sonnet-5-5', fast: 'claude-haiku-5-5' },
      });
      // Haiku 5.5 at 0.10 / 0.50 per million: 3,000 in and 300 out.
      expect(config.costs.summarize).toBeCloseTo(0.00045, 6);
      const models = (await svc.api.get('/v1/ai/models', t.as)).body;
      expect(models.data.length).toBeGreaterThan(0);
      expect(models.data.every((m: any) => m.vendor === 'anthropic' && m.usd_per_mtok !== null)).toBe(true);
    } finally {
      await svc.stop();
    }
  });

  it('an open-model server (Ollama): open models unpriced, typical charges as costs', async () => {
    const svc = await startService(
      { AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:11434/v1', AI_MODEL: 'llama3.1:8b' },
      { jobs: false },
    );
    try {
      const t = await newTenant(svc.api);
      const config = (await svc.api.get('/v1/ai/config', t.as)).body;
      expect(config.models).toEqual({ default: 'llama3.1:8b', fast: 'llama3.1:8b' });
      for (const [key, usd] of Object.entries(RULE_1)) expect(config.costs[key]).toBe(usd);
      expect(config.metered).toBe(true);
      const models = (await svc.api.get('/v1/ai/models', t.as)).body;
      expect(models.data.some((m: any) => m.id === 'llama3.1:8b' && m.vendor === 'meta')).toBe(true);
      expect(models.data.every((m: any) => m.usd_per_mtok === null && m.vendor !== 'openai')).toBe(true);
    } finally {
      await svc.stop();
    }
  });
});
