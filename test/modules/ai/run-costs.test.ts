// What runAi charges and estimates (metering.ts costOf, spend.ts estimateUsd), case by case: the
// catalog price to 0.000001, rule 1's typical charge for an unpriced model, 0 on an own key and
// for a failed call, a cancelled call charged for what was generated; the estimate's minimum of
// 0.01 and its output counted up to 4,000 tokens, the tools offered counted as prompt. And the
// catalog's lookups.
import { describe, expect, it } from 'vitest';
import { catalogFor, findModel, TYPICAL_CHARGE_USD, typicalReplyUsd } from '../../../src/modules/ai/catalog.js';
import { costOf } from '../../../src/modules/ai/metering.js';
import { estimateUsd } from '../../../src/modules/ai/spend.js';

const GPT_4O = { input: 2.5, output: 10 };
const used = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens });

describe('costOf', () => {
  it('charges the catalog price for the tokens, to 0.000001', () => {
    const c = { feature: 'draft_reply' as const, source: 'instance' as const, price: GPT_4O, outcome: 'ok' as const };
    expect(costOf({ ...c, usage: used(1000, 200) })).toBe(0.0045);
    expect(costOf({ ...c, usage: used(1, 1) })).toBe(0.000013);
    expect(costOf({ ...c, usage: used(1000, 200), outcome: 'cancelled' })).toBe(0.0045);
  });

  it('charges rule 1 when the price is unknown; a cancelled call only when something was generated', () => {
    const c = { source: 'instance' as const, price: null, usage: used(500, 50), outcome: 'ok' as const };
    expect(costOf({ ...c, feature: 'draft_reply' })).toBe(0.03);
    expect(costOf({ ...c, feature: 'kb_draft' })).toBe(0.05);
    expect(costOf({ ...c, feature: 'copilot' })).toBe(0.02);
    expect(costOf({ ...c, feature: 'answer' })).toBe(0);
    expect(costOf({ ...c, feature: 'summarize', outcome: 'cancelled' })).toBe(0.01);
    expect(costOf({ ...c, feature: 'summarize', outcome: 'cancelled', usage: used(500, 0) })).toBe(0);
  });

  it('costs nothing on an own key or when the call failed', () => {
    const c = { feature: 'draft_reply' as const, price: GPT_4O, usage: used(1000, 200) };
    expect(costOf({ ...c, source: 'own_key', outcome: 'ok' })).toBe(0);
    expect(costOf({ ...c, source: 'instance', outcome: 'failed' })).toBe(0);
    expect(costOf({ ...c, price: null, source: 'instance', outcome: 'failed' })).toBe(0);
  });
});

describe('estimateUsd', () => {
  const base = { feature: 'draft_reply' as const, source: 'instance' as const, system: '', messages: [] };
  it('counts the prompt at ~4 characters a token and at most 4,000 output tokens, at least 0.01', () => {
    // 40,000 characters = 10,000 tokens at 2.50, 4,000 (of 100,000) output tokens at 10.
    const long = { role: 'user' as const, content: 'x'.repeat(40_000) };
    expect(estimateUsd({ ...base, price: GPT_4O, messages: [long], maxTokens: 100_000 })).toBe(0.065);
    expect(estimateUsd({ ...base, price: GPT_4O, messages: [long], maxTokens: 500 })).toBe(0.03);
    expect(estimateUsd({ ...base, price: GPT_4O, system: 'short', maxTokens: 10 })).toBe(0.01);
  });

  it("counts the tools offered (names, descriptions, schemas) and the calls' arguments as prompt text", () => {
    // The same 10,000 prompt tokens as above, as a tool's text and a call's arguments.
    const schema = { type: 'object', properties: {} };
    const description = 'x'.repeat(20_000 - 'search'.length - JSON.stringify(schema).length);
    const tools = [{ name: 'search', description, parameters: schema }];
    const args = 'y'.repeat(20_000 - 'search'.length);
    const messages = [
      { role: 'assistant' as const, content: '', toolCalls: [{ id: 'c', name: 'search', arguments: args }] },
    ];
    expect(estimateUsd({ ...base, price: GPT_4O, tools, messages, maxTokens: 100_000 })).toBe(0.065);
    expect(estimateUsd({ ...base, price: GPT_4O, tools, maxTokens: 100_000 })).toBe(0.0525);
  });

  it('is the typical charge (at least 0.01) without a price, and 0 on an own key', () => {
    expect(estimateUsd({ ...base, price: null, maxTokens: 500 })).toBe(0.03);
    expect(estimateUsd({ ...base, feature: 'answer', price: null, maxTokens: 500 })).toBe(0.01);
    expect(estimateUsd({ ...base, source: 'own_key', price: GPT_4O, maxTokens: 500 })).toBe(0);
  });
});

describe('the catalog', () => {
  it('finds dated snapshots of a model, not other models that share its prefix', () => {
    expect(findModel('gpt-4o-2024-08-06')?.id).toBe('gpt-4o');
    expect(findModel('gpt-4o-mini-2024-07-18')?.id).toBe('gpt-4o-mini');
    expect(findModel('claude-haiku-4-5-20251001')?.id).toBe('claude-haiku-4-5');
    expect(findModel('gpt-4o-audio-preview')).toBeNull();
    expect(findModel('nope')).toBeNull();
  });

  it('prices a typical reply at 4,000 input and 500 output tokens, null when unknown', () => {
    expect(typicalReplyUsd(GPT_4O)).toBe(0.015);
    expect(typicalReplyUsd(null)).toBeNull();
  });

  it('lists a provider its vendor’s models; an unknown OpenAI-compatible server the open models', () => {
    expect(catalogFor('anthropic', null).every((m) => m.vendor === 'anthropic')).toBe(true);
    expect(catalogFor('openai', 'https://acme.openai.azure.com/openai').every((m) => m.vendor === 'openai')).toBe(true);
    const ollama = catalogFor('openai', 'http://localhost:11434/v1');
    expect(ollama.length).toBeGreaterThan(0);
    expect(ollama.every((m) => m.usd_per_mtok === null)).toBe(true);
    expect(catalogFor('openai', 'https://gateway.example.com/v1', ['gpt-4o']).every((m) => m.vendor === 'openai')).toBe(
      true,
    );
    expect(Object.keys(TYPICAL_CHARGE_USD)).toHaveLength(13);
  });
});
