// The hosted offering (billing on, against no real payment provider: nothing here reaches it):
// 402 ai_balance_empty before anything is stored (no message, no model call, nothing held), and a
// model turn charged at 0.02 when the model's price is unknown.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAi } from '../../../src/modules/ai/run.js';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import { isErrorBody, type Service, startService, type Tenant } from '../../support/helpers.js';
import { assistantTenant, newSession, send, TEST_TOOLS } from './setup.js';

let ai: OpenAiStandIn;
let svc: Service;
beforeAll(async () => {
  ai = await startOpenAiStandIn({ keys: ['sk-instance-0000'] });
  svc = await startService(
    {
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'sk-instance-0000',
      AI_MODEL: 'gpt-4o',
      STRIPE_SECRET_KEY: 'sk_test_assistant',
      STRIPE_API_BASE: 'http://127.0.0.1:9',
    },
    { jobs: false, ai: { timeoutMs: 5000, maxRetries: 0 }, assistant: { tools: TEST_TOOLS } },
  );
});
afterAll(async () => {
  await svc?.stop();
  await ai?.stop();
});
beforeEach(() => ai.reset());

const db = () => svc.rt.deps.database.db;
const turns = (t: Tenant) =>
  db().selectFrom('assistant_turns').select('id').where('workspace_id', '=', t.workspaceId).execute();
const held = (t: Tenant) =>
  db().selectFrom('ai_reservations').select('id').where('workspace_id', '=', t.workspaceId).execute();

describe('the AI balance', () => {
  it('charges a model turn, then answers 402 ai_balance_empty before anything is stored once the balance is spent', async () => {
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    ai.answer({ text: 'Hello there.', usage: { input_tokens: 1000, output_tokens: 100 } });
    const ok = await send(svc, t.as, s, 'Hi');
    expect(ok.status, ok.text).toBe(200);
    const usage = await db().selectFrom('ai_usage').selectAll().where('workspace_id', '=', t.workspaceId).execute();
    expect(usage.map((u) => [u.feature, u.user_id])).toEqual([['assistant', t.owner.userId]]);
    expect(Number(usage[0]!.cost_usd)).toBeGreaterThan(0);

    // Spend the rest: 100,000 output tokens cost more than the free allowance left.
    ai.answer({ text: 'Very long.', usage: { input_tokens: 0, output_tokens: 100_000 } });
    await runAi(
      svc.rt.deps,
      { workspaceId: t.workspaceId, userId: t.owner.userId },
      {
        feature: 'draft_reply',
        tier: 'default',
        system: 'You draft replies.',
        messages: [{ role: 'user', content: 'Draft.' }],
        maxTokens: 500,
      },
    );
    expect((await svc.api.get('/v1/billing', t.as)).body.ai.remaining_usd).toBe(0);

    const before = { requests: ai.requests.length, turns: (await turns(t)).length };
    const r = await send(svc, t.as, s, 'Close all my tickets');
    expect(isErrorBody(r.body, 402, 'ai_balance_empty')).toBe(true);
    expect(ai.requests.length).toBe(before.requests);
    expect((await turns(t)).length).toBe(before.turns);
    expect(await held(t)).toEqual([]);
    const detail = (await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body;
    expect(detail.session.running).toBe(false);
    expect(detail.messages.map((m: { text: string }) => m.text)).toEqual(['Hi', 'Hello there.']);
  });

  it('reports 0.02 as the typical charge of a model turn where the price is unknown', async () => {
    const t = await assistantTenant(svc);
    const other = await startService(
      { AI_PROVIDER: 'openai', AI_BASE_URL: ai.url, AI_API_KEY: 'sk-instance-0000', AI_MODEL: 'house-model' },
      { jobs: false },
    );
    try {
      const t2 = await assistantTenant(other);
      expect((await other.api.get('/v1/ai/config', t2.as)).body.costs.assistant).toBe(0.02);
    } finally {
      await other.stop();
    }
    expect(typeof (await svc.api.get('/v1/ai/config', t.as)).body.costs.assistant).toBe('number');
  });
});
