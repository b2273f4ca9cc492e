// GET /v1/ai/config `costs` say what a typical call of each feature will cost the workspace: on the
// hosted offering what its AI balance is charged (the model's list price × the 1.5 markup, Billing
// rule 4), self-hosted the list price. A real call of a feature's typical size is charged exactly
// what config showed (docs/billing.md "The markup and the spend gate").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TYPICAL_CALL } from '../../../src/modules/ai/catalog.js';
import { runAi } from '../../../src/modules/ai/run.js';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import { newTenant, type Service, startService } from '../../support/helpers.js';

const KEY = 'sk-instance-costs-0000';
let ai: OpenAiStandIn;
beforeAll(async () => {
  ai = await startOpenAiStandIn({ keys: [KEY] });
});
afterAll(async () => ai?.stop());

const AI = { AI_PROVIDER: 'openai', AI_API_KEY: KEY, AI_MODEL: 'gpt-4o', AI_FAST_MODEL: 'gpt-4o' };

/** A draft of the typical size (4,000 tokens in, 500 out): what it was charged. */
async function typicalDraft(svc: Service, t: { workspaceId: string; owner: { userId: string } }) {
  const { input, output } = TYPICAL_CALL.draft_reply;
  ai.answer({ text: 'It ships today.', usage: { input_tokens: input, output_tokens: output } });
  const r = await runAi(
    svc.rt.deps,
    { workspaceId: t.workspaceId, userId: t.owner.userId },
    {
      feature: 'draft_reply',
      tier: 'default',
      system: 'You draft replies.',
      messages: [{ role: 'user', content: 'Where is my parcel?' }],
      maxTokens: 500,
    },
  );
  return r.cost_usd;
}

describe.each([
  // gpt-4o: 4,000 in at 2.50 and 500 out at 10 per million = 0.015 list price.
  { name: 'the hosted offering: the list price × 1.5', hosted: true, draft: 0.0225, kb: 0.03675 },
  { name: 'self-hosted: the list price', hosted: false, draft: 0.015, kb: 0.0245 },
])('GET /v1/ai/config costs on $name', ({ hosted, draft, kb }) => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(
      {
        ...AI,
        AI_BASE_URL: ai.url,
        ...(hosted ? { STRIPE_SECRET_KEY: 'sk_test_costs', STRIPE_API_BASE: 'http://127.0.0.1:9' } : {}),
      },
      { jobs: false, ai: { timeoutMs: 5000, maxRetries: 0 } },
    );
  });
  afterAll(async () => svc?.stop());

  it('are what a call of the typical size is charged', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.get('/v1/ai/config', t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.metered).toBe(true);
    expect(r.body.costs.draft_reply).toBe(draft);
    // kb_draft: 5,000 in and 1,200 out.
    expect(r.body.costs.kb_draft).toBe(kb);
    // decide: 1,500 in and 100 out.
    expect(r.body.costs.decide).toBe(hosted ? 0.007125 : 0.00475);
    // The model list keeps the list price either way (usd_per_mtok, typical_reply_usd).
    const models = await svc.api.get('/v1/ai/models', t.as);
    expect(models.body.data.find((m: { id: string }) => m.id === 'gpt-4o')?.typical_reply_usd).toBe(0.015);
    // A call of that size is charged exactly what config said.
    expect(await typicalDraft(svc, t)).toBe(r.body.costs.draft_reply);
  });
});
