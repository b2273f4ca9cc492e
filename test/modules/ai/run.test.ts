// runAi (src/modules/ai/run.ts), the one path of every AI call, against the OpenAI stand-in with
// the production SDK: the model of each tier, one ai_usage row per call with its cost (catalog
// price; rule 1's typical charge for an unpriced model; 0 on an own key), streamed deltas, a
// failed call (0, failed, 502 ai_unavailable), a timeout, an aborted call (cancelled, charged for
// what was generated), a workspace with AI off (404 ai_disabled), and tenants kept apart. Tool
// use: the tools reach the provider and the calls come back, metered; a model without tool use
// answers 501 ai_unsupported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/modules/ai/providers/types.js';
import { runAi } from '../../../src/modules/ai/run.js';
import {
  gate,
  type OpenAiStandIn,
  offeredTools,
  openAiError,
  startOpenAiStandIn,
  toolResults,
} from '../../support/ai-standin/index.js';
import { newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

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
      AI_FAST_MODEL: 'house-fast',
    },
    { jobs: false, ai: { timeoutMs: 1500, maxRetries: 0 } },
  );
});
afterAll(async () => {
  await svc?.stop();
  await ai?.stop();
});

const usageOf = (t: Tenant) =>
  svc.rt.deps.database.db
    .selectFrom('ai_usage')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

const call = (over: Partial<Parameters<typeof runAi>[2]> = {}): Parameters<typeof runAi>[2] => ({
  feature: 'draft_reply',
  tier: 'default',
  system: 'You draft replies.',
  messages: [{ role: 'user', content: 'The customer asks where their parcel is.' }],
  maxTokens: 500,
  ...over,
});

const caller = (t: Tenant) => ({ workspaceId: t.workspaceId, userId: t.owner.userId });

describe('runAi', () => {
  it('calls the tier model and charges the catalog price for the tokens used', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ text: 'Your parcel ships today.', usage: { input_tokens: 1000, output_tokens: 200 } });
    const before = ai.requests.length;
    const r = await runAi(svc.rt.deps, caller(t), call());
    expect(r).toMatchObject({ text: 'Your parcel ships today.', source: 'instance', finish: 'stop' });
    // gpt-4o: 1,000 in at 2.50 and 200 out at 10 per million.
    expect(r.cost_usd).toBeCloseTo(0.0045, 6);
    expect(ai.requests[before]!.body.model).toBe('gpt-4o');
    expect(ai.requests[before]!.headers.authorization).toBe('Bearer sk-instance-0000');
    const rows = await usageOf(t);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      feature: 'draft_reply',
      model: 'gpt-4o',
      source: 'instance',
      input_tokens: 1000,
      output_tokens: 200,
      user_id: t.owner.userId,
      outcome: 'ok',
      ticket_id: null,
    });
    expect(Number(rows[0]!.cost_usd)).toBeCloseTo(0.0045, 6);
  });

  it('charges the typical charge of rule 1 on a model without a price, and streams deltas in order', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ text: 'one two three four five six', chunks: ['one two ', 'three four ', 'five six'] });
    const deltas: string[] = [];
    const before = ai.requests.length;
    const r = await runAi(
      svc.rt.deps,
      { workspaceId: t.workspaceId, userId: null },
      call({ feature: 'summarize', tier: 'fast', onDelta: (d) => deltas.push(d) }),
    );
    expect(ai.requests[before]!.body.model).toBe('house-fast');
    expect(deltas).toEqual(['one two ', 'three four ', 'five six']);
    expect(r.text).toBe('one two three four five six');
    expect(r.cost_usd).toBe(0.01);
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ feature: 'summarize', model: 'house-fast', outcome: 'ok', user_id: null });
    expect(Number(row!.cost_usd)).toBe(0.01);
  });

  it('a failed call costs nothing, is recorded failed, and answers 502 ai_unavailable without secrets', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ status: 500 });
    const err = await runAi(svc.rt.deps, caller(t), call({ feature: 'rewrite', tier: 'fast' })).catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: 'ai_unavailable' });
    expect(err.detail).not.toContain('sk-instance');
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ feature: 'rewrite', outcome: 'failed' });
    expect(Number(row!.cost_usd)).toBe(0);
  });

  it('a provider that does not answer in time: 502 ai_unavailable saying so, failed, 0', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ hang: true });
    const err = await runAi(svc.rt.deps, caller(t), call()).catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: 'ai_unavailable' });
    expect(err.detail).toMatch(/in time/);
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ outcome: 'failed' });
    expect(Number(row!.cost_usd)).toBe(0);
  });

  it('an aborted call rethrows the ProviderError, stops the request, and is charged for what was generated', async () => {
    const t = await newTenant(svc.api);
    const g = gate();
    ai.answer({
      gate: g,
      text: 'First words, then much more that never comes.',
      chunks: ['First words, ', 'then more'],
    });
    const stop = new AbortController();
    const before = ai.requests.length;
    const running = runAi(
      svc.rt.deps,
      caller(t),
      call({ signal: stop.signal, onDelta: () => stop.abort(), ticketId: null }),
    ).catch((e) => e);
    const err = await running;
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.failure).toBe('aborted');
    const req = ai.requests[before]!;
    await req.done;
    expect(req.closedEarly).toBe(true);
    g.release();
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ outcome: 'cancelled', model: 'gpt-4o' });
    expect(row!.output_tokens).toBeGreaterThan(0);
    expect(Number(row!.cost_usd)).toBeGreaterThan(0);
  });

  it('an instance key the provider refuses: 502, logged as an error without the key', async () => {
    const t = await newTenant(svc.api);
    ai.keys = ['sk-some-other-key'];
    try {
      const err = await runAi(svc.rt.deps, caller(t), call()).catch((e) => e);
      expect(err).toMatchObject({ status: 502, code: 'ai_unavailable' });
      expect(err.detail).toMatch(/instance/);
    } finally {
      ai.keys = ['sk-instance-0000'];
    }
    const logged = svc.logs.filter((l) => l.includes('refused the instance key'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(t.workspaceId);
    expect(svc.logs.join('\n')).not.toContain('sk-instance-0000');
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ outcome: 'failed', source: 'instance' });
  });

  it('answers 404 ai_disabled in a workspace that turned AI off, and calls nothing', async () => {
    const t = await newTenant(svc.api);
    await svc.api.patch('/v1/ai/settings', { enabled: false }, t.as);
    const before = ai.requests.length;
    const err = await runAi(svc.rt.deps, caller(t), call()).catch((e) => e);
    expect(err).toMatchObject({ status: 404, code: 'ai_disabled' });
    expect(ai.requests.length).toBe(before);
    expect(await usageOf(t)).toEqual([]);
  });

  it("uses the workspace's model choice, and counts each workspace's calls apart", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await svc.api.patch('/v1/ai/settings', { model: 'gpt-4o-mini' }, a.as);
    const before = ai.requests.length;
    ai.answer({ text: 'A', usage: { input_tokens: 10, output_tokens: 1 } });
    await runAi(svc.rt.deps, caller(a), call());
    ai.answer({ text: 'B', usage: { input_tokens: 10, output_tokens: 1 } });
    await runAi(svc.rt.deps, caller(b), call());
    expect(ai.requests[before]!.body.model).toBe('gpt-4o-mini');
    expect(ai.requests[before + 1]!.body.model).toBe('gpt-4o');
    expect((await usageOf(a)).map((r) => r.model)).toEqual(['gpt-4o-mini']);
    expect((await usageOf(b)).map((r) => r.model)).toEqual(['gpt-4o']);
  });

  const TOOLS = [
    {
      name: 'search_tickets',
      description: 'Search tickets with the list filters.',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    },
  ];

  it('passes the tools, returns the calls, and sends the results back; each turn metered', async () => {
    const t = await newTenant(svc.api);
    ai.answer({
      toolCalls: [{ id: 'call_1', name: 'search_tickets', arguments: { q: 'parcel' } }],
      usage: { input_tokens: 300, output_tokens: 20 },
    });
    const before = ai.requests.length;
    const first = await runAi(svc.rt.deps, caller(t), call({ feature: 'assistant', tools: TOOLS }));
    expect(first).toMatchObject({ finish: 'tool_calls', text: '', source: 'instance' });
    expect(first.toolCalls).toEqual([{ id: 'call_1', name: 'search_tickets', arguments: '{"q":"parcel"}' }]);
    expect(offeredTools(ai.requests[before]!)).toEqual(['search_tickets']);
    ai.answer({ text: 'Two tickets mention the parcel.', usage: { input_tokens: 350, output_tokens: 10 } });
    const second = await runAi(
      svc.rt.deps,
      caller(t),
      call({
        feature: 'assistant',
        tools: TOOLS,
        messages: [
          ...call().messages,
          { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
          { role: 'tool', callId: 'call_1', name: 'search_tickets', content: '{"tickets":["T-1","T-2"]}' },
        ],
      }),
    );
    expect(second).toMatchObject({ finish: 'stop', text: 'Two tickets mention the parcel.', toolCalls: [] });
    expect(toolResults(ai.requests[before + 1]!)).toEqual([
      { callId: 'call_1', name: 'search_tickets', content: '{"tickets":["T-1","T-2"]}', isError: false },
    ]);
    const rows = await usageOf(t);
    expect(rows.map((r) => [r.feature, r.outcome, r.input_tokens, r.output_tokens])).toEqual([
      ['assistant', 'ok', 300, 20],
      ['assistant', 'ok', 350, 10],
    ]);
  });

  it('a model without tool use answers 501 ai_unsupported; the failed call costs nothing', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ status: 400, body: openAiError(400, 'registry.ollama.ai/library/gemma:2b does not support tools') });
    const err = await runAi(svc.rt.deps, caller(t), call({ feature: 'assistant', tools: TOOLS })).catch((e) => e);
    expect(err).toMatchObject({ status: 501, code: 'ai_unsupported' });
    expect(err.detail).not.toContain('gemma');
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ feature: 'assistant', outcome: 'failed' });
    expect(Number(row!.cost_usd)).toBe(0);
    // Streamed too.
    ai.answer({ status: 400, body: openAiError(400, 'registry.ollama.ai/library/gemma:2b does not support tools') });
    const streamed = await runAi(
      svc.rt.deps,
      caller(t),
      call({ feature: 'assistant', tools: TOOLS, onDelta: () => {} }),
    ).catch((e) => e);
    expect(streamed).toMatchObject({ status: 501, code: 'ai_unsupported' });
  });
});
