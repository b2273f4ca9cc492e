// The Anthropic provider (src/modules/ai/providers/anthropic.ts) called directly against the
// stand-in (test/support/ai-standin): the official SDK's own requests, retries, timeouts and
// streams, JSON through a forced tool, and every failure as a ProviderError with the right failure.
// Tool use: tools with input_schema, tool_use blocks read whole and from input_json_delta pieces,
// the results sent back as one user turn of tool_result blocks.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProvider } from '../../../src/modules/ai/providers/index.js';
import { type ChatRequest, ProviderError } from '../../../src/modules/ai/providers/types.js';
import {
  type AnthropicStandIn,
  anthropicError,
  gate,
  offeredTools,
  startAnthropicStandIn,
  toolResults,
} from '../../support/ai-standin/index.js';

const KEY = 'sk-ant-standin-0123456789';
let ai: AnthropicStandIn;

beforeAll(async () => {
  ai = await startAnthropicStandIn({ keys: [KEY] });
});
afterAll(() => ai.stop());
beforeEach(() => {
  // Every answer a test queued was used.
  expect(ai.pending()).toBe(0);
  ai.reset();
});

const provider = (o: { maxRetries?: number; timeoutMs?: number; apiKey?: string } = {}) =>
  createProvider({ kind: 'anthropic', apiKey: KEY, baseUrl: ai.url, maxRetries: 0, ...o });

const PROMPT = 'Where is my parcel 7731?';
const SYSTEM = 'You help support agents.';
const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'claude-haiku-4-5',
  system: SYSTEM,
  messages: [{ role: 'user', content: PROMPT }],
  maxTokens: 200,
  ...extra,
});

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const pe = err as ProviderError;
  expect(pe.message).not.toContain(KEY);
  expect(pe.message).not.toContain('parcel');
  return pe;
}

describe('anthropic provider', () => {
  it('answers a plain request with the usage the server reported, on /v1/messages', async () => {
    ai.answer({ text: 'It left the depot today.', usage: { input_tokens: 31, output_tokens: 7 } });
    const r = await provider().chat(ask({ temperature: 0.2 }));
    expect(r).toEqual({
      text: 'It left the depot today.',
      usage: { input_tokens: 31, output_tokens: 7, estimated: false },
      model: 'claude-haiku-4-5',
      finish: 'stop',
      toolCalls: [],
    });
    const req = ai.requests[0]!;
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key'] ?? req.headers.authorization).toMatch(new RegExp(`^(Bearer )?${KEY}$`));
    expect(req.body).toMatchObject({
      model: 'claude-haiku-4-5',
      system: SYSTEM,
      max_tokens: 200,
      temperature: 0.2,
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(req.body.stream).toBeFalsy();
  });

  it('says length when max_tokens cut the answer', async () => {
    ai.answer({ text: 'It left', finish: 'length' });
    expect((await provider().chat(ask())).finish).toBe('length');
  });

  it('has no embeddings', () => {
    expect(provider().embed).toBeNull();
  });

  it('streams: onDelta gets each text_delta in order, then the text and the usage of message_start and message_delta', async () => {
    ai.answer({
      text: 'It left the depot.',
      chunks: ['It ', 'left the', ' depot.'],
      usage: { input_tokens: 20, output_tokens: 5 },
    });
    const pieces: string[] = [];
    const r = await provider().chat(ask({ onDelta: (t) => pieces.push(t) }));
    expect(pieces).toEqual(['It ', 'left the', ' depot.']);
    expect(r).toMatchObject({ text: 'It left the depot.', finish: 'stop' });
    expect(r.usage).toEqual({ input_tokens: 20, output_tokens: 5, estimated: false });
    expect(ai.requests[0]!.body.stream).toBe(true);
  });

  it('answers JSON through a forced tool, streamed or not', async () => {
    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] };
    ai.answer({ json: { summary: 'Parcel delayed.' } });
    const r = await provider().chat(ask({ json: { name: 'summary', schema } }));
    expect(JSON.parse(r.text)).toEqual({ summary: 'Parcel delayed.' });
    expect(ai.requests[0]!.body).toMatchObject({
      tools: [{ name: 'summary', input_schema: schema }],
      tool_choice: { type: 'tool', name: 'summary' },
    });
    ai.answer({ json: { summary: 'Parcel on its way.' }, chunks: ['{"summary": "Parcel', ' on its way."}'] });
    const pieces: string[] = [];
    const s = await provider().chat(ask({ json: { name: 'summary', schema }, onDelta: (t) => pieces.push(t) }));
    expect(pieces).toEqual(['{"summary": "Parcel', ' on its way."}']);
    expect(JSON.parse(s.text)).toEqual({ summary: 'Parcel on its way.' });
  });

  it('a streamed tool input that is not JSON is bad_response', async () => {
    ai.answer({ text: 'Sure! {"summary": ', chunks: ['Sure! ', '{"summary": '] });
    const err = await failure(
      provider().chat(ask({ json: { name: 'summary', schema: { type: 'object' } }, onDelta: () => {} })),
    );
    expect(err.failure).toBe('bad_response');
  });

  it('waits as long as a 429 retry-after says before the retry', async () => {
    ai.answer({ status: 429, headers: { 'retry-after': '1' } }, { text: 'Later answer.' });
    const r = await provider({ maxRetries: 1 }).chat(ask());
    expect(r.text).toBe('Later answer.');
    expect(ai.requests).toHaveLength(2);
    expect(ai.requests[1]!.at - ai.requests[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('retries a 500 (and a 529 overloaded) and succeeds', async () => {
    ai.answer(
      { status: 500, headers: { 'retry-after-ms': '10' } },
      { status: 529, headers: { 'retry-after-ms': '10' } },
    );
    ai.answer({ text: 'Fine now.' });
    expect((await provider({ maxRetries: 2 }).chat(ask())).text).toBe('Fine now.');
    expect(ai.requests).toHaveLength(3);
  });

  it('a 500 that lasts is unavailable after maxRetries + 1 requests', async () => {
    const busy = { status: 500, headers: { 'retry-after-ms': '10' } };
    ai.answer(busy, busy, busy);
    expect((await failure(provider({ maxRetries: 2 }).chat(ask()))).failure).toBe('unavailable');
    expect(ai.requests).toHaveLength(3);
  });

  it('a refused key is auth, not retried, and the message names neither key nor prompt', async () => {
    const err = await failure(provider({ apiKey: 'sk-ant-wrong-42', maxRetries: 2 }).chat(ask()));
    expect(err.failure).toBe('auth');
    expect(err.message).not.toContain('sk-ant-wrong-42');
    expect(ai.requests).toHaveLength(1);
  });

  it('a 400 (context too long) is refused', async () => {
    ai.answer({ status: 400 });
    expect((await failure(provider().chat(ask()))).failure).toBe('refused');
  });

  it('a server that does not answer is a timeout', async () => {
    ai.answer({ hang: true });
    expect((await failure(provider({ timeoutMs: 300 }).chat(ask()))).failure).toBe('timeout');
    await ai.requests[0]!.done;
    expect(ai.requests[0]!.closedEarly).toBe(true);
  });

  it('a stream that stalls after its first piece is a timeout with the partial text', async () => {
    const g = gate();
    ai.answer({ gate: g, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const err = await failure(provider({ timeoutMs: 300 }).chat(ask({ onDelta: () => {} })));
    g.release();
    expect(err.failure).toBe('timeout');
    expect(err.partial?.text).toBe('one ');
  });

  it('malformed JSON and a malformed stream are bad_response', async () => {
    ai.answer({ malformed: true, text: 'Hello there friend' });
    expect((await failure(provider().chat(ask()))).failure).toBe('bad_response');
    ai.answer({
      malformed: true,
      text: 'Hello there friend',
      chunks: ['Hello ', 'there friend'],
      usage: { input_tokens: 9 },
    });
    const err = await failure(provider().chat(ask({ onDelta: () => {} })));
    expect(err.failure).toBe('bad_response');
    expect(err.partial).toEqual({ text: 'Hello ', usage: { input_tokens: 9, output_tokens: 2, estimated: true } });
  });

  it('a cut stream is bad_response with the text so far', async () => {
    ai.answer({ cut: 2, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const pieces: string[] = [];
    const err = await failure(provider().chat(ask({ onDelta: (t) => pieces.push(t) })));
    expect(err.failure).toBe('bad_response');
    expect(pieces).toEqual(['one ', 'two ']);
    expect(err.partial?.text).toBe('one two ');
  });

  it('an abort after the first piece stops the request: aborted, with the partial, and the server sees it close', async () => {
    const g = gate();
    ai.answer({ gate: g, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const stop = new AbortController();
    const err = await failure(provider().chat(ask({ signal: stop.signal, onDelta: () => stop.abort() })));
    expect(err.failure).toBe('aborted');
    expect(err.partial?.text).toBe('one ');
    await ai.requests[0]!.done;
    expect(ai.requests[0]!.closedEarly).toBe(true);
    g.release();
  });

  it('an abort before the answer is aborted without a partial', async () => {
    ai.answer({ hang: true });
    const stop = new AbortController();
    const call = provider().chat(ask({ signal: stop.signal, onDelta: () => {} }));
    await ai.request(0);
    stop.abort();
    expect(await failure(call)).toMatchObject({ failure: 'aborted', partial: null });
    await ai.requests[0]!.done;
    expect(ai.requests[0]!.closedEarly).toBe(true);
  });
});

const TOOLS: ChatRequest['tools'] = [
  {
    name: 'search_tickets',
    description: 'Search tickets with the list filters.',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
  {
    name: 'get_ticket',
    description: 'Read a ticket with its messages.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  },
];

describe('anthropic provider: tool use', () => {
  it('offers the tools with input_schema and reads a tool_use alone: finish tool_calls, arguments its JSON', async () => {
    ai.answer({ toolCalls: [{ name: 'search_tickets', arguments: { q: 'parcel 7731' } }] });
    const r = await provider().chat(ask({ tools: TOOLS }));
    expect(r.finish).toBe('tool_calls');
    expect(r.text).toBe('');
    expect(r.toolCalls).toEqual([
      { id: expect.stringMatching(/^toolu_/), name: 'search_tickets', arguments: '{"q":"parcel 7731"}' },
    ]);
    const body = ai.requests[0]!.body;
    expect(body.tools).toEqual(
      TOOLS!.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
    );
    expect(body.tool_choice).toBeUndefined();
    expect(offeredTools(ai.requests[0]!)).toEqual(['search_tickets', 'get_ticket']);
  });

  it('reads text and several tool_use blocks of one turn, in order', async () => {
    ai.answer({
      text: 'Let me look.',
      toolCalls: [
        { id: 'toolu_a', name: 'search_tickets', arguments: { q: 'refund' } },
        { id: 'toolu_b', name: 'get_ticket', arguments: { id: 'T-1' } },
      ],
    });
    const r = await provider().chat(ask({ tools: TOOLS }));
    expect(r).toMatchObject({ text: 'Let me look.', finish: 'tool_calls' });
    expect(r.toolCalls).toEqual([
      { id: 'toolu_a', name: 'search_tickets', arguments: '{"q":"refund"}' },
      { id: 'toolu_b', name: 'get_ticket', arguments: '{"id":"T-1"}' },
    ]);
  });

  it('streams: text_delta pieces reach onDelta, each tool_use is put together from its input_json_delta pieces', async () => {
    ai.answer({
      text: 'Checking two things.',
      chunks: ['Checking ', 'two things.'],
      toolCalls: [
        { id: 'toolu_a', name: 'search_tickets', arguments: { q: 'a long query about a refund' } },
        { id: 'toolu_b', name: 'get_ticket', arguments: { id: 'T-77' } },
      ],
      usage: { input_tokens: 40, output_tokens: 30 },
    });
    const pieces: string[] = [];
    const r = await provider().chat(ask({ tools: TOOLS, onDelta: (t) => pieces.push(t) }));
    expect(pieces).toEqual(['Checking ', 'two things.']);
    expect(r).toMatchObject({
      text: 'Checking two things.',
      finish: 'tool_calls',
      usage: { input_tokens: 40, output_tokens: 30, estimated: false },
    });
    expect(r.toolCalls).toEqual([
      { id: 'toolu_a', name: 'search_tickets', arguments: '{"q":"a long query about a refund"}' },
      { id: 'toolu_b', name: 'get_ticket', arguments: '{"id":"T-77"}' },
    ]);
  });

  it('streams a tool_use without text: no delta, the call whole', async () => {
    ai.answer({ toolCalls: [{ name: 'get_ticket', arguments: { id: 'T-9' } }] });
    const pieces: string[] = [];
    const r = await provider().chat(ask({ tools: TOOLS, onDelta: (t) => pieces.push(t) }));
    expect(pieces).toEqual([]);
    expect(r).toMatchObject({ text: '', finish: 'tool_calls' });
    expect(r.toolCalls).toEqual([
      { id: expect.stringMatching(/^toolu_/), name: 'get_ticket', arguments: '{"id":"T-9"}' },
    ]);
  });

  it('passes streamed input that is not JSON through as the text the model wrote (the caller validates)', async () => {
    ai.answer({ toolCalls: [{ id: 'toolu_x', name: 'get_ticket', arguments: '{"id": "T-1", ' }] });
    const r = await provider().chat(ask({ tools: TOOLS, onDelta: () => {} }));
    expect(r.toolCalls).toEqual([{ id: 'toolu_x', name: 'get_ticket', arguments: '{"id": "T-1", ' }]);
    ai.answer({ toolCalls: [{ id: 'toolu_y', name: 'get_ticket', arguments: 'not json' }] });
    const s = await provider().chat(ask({ tools: TOOLS }));
    expect(s.toolCalls).toEqual([{ id: 'toolu_y', name: 'get_ticket', arguments: 'not json' }]);
  });

  it('a tool_use without a name is bad_response, streamed or not', async () => {
    ai.answer({ toolCalls: [{ name: '', arguments: {} }] });
    expect((await failure(provider().chat(ask({ tools: TOOLS })))).failure).toBe('bad_response');
    ai.answer({ toolCalls: [{ name: '', arguments: {} }] });
    expect((await failure(provider().chat(ask({ tools: TOOLS, onDelta: () => {} })))).failure).toBe('bad_response');
  });

  it('sends the calls back as tool_use blocks and their results as one user turn of tool_result blocks', async () => {
    ai.answer({ text: 'The parcel is in transit.' });
    const r = await provider().chat(
      ask({
        tools: TOOLS,
        messages: [
          { role: 'user', content: PROMPT },
          {
            role: 'assistant',
            content: 'Looking.',
            toolCalls: [
              { id: 'toolu_a', name: 'search_tickets', arguments: '{"q":"7731"}' },
              { id: 'toolu_b', name: 'get_ticket', arguments: '{"id":"T-1"}' },
            ],
          },
          { role: 'tool', callId: 'toolu_a', name: 'search_tickets', content: '{"tickets":[]}' },
          { role: 'tool', callId: 'toolu_b', name: 'get_ticket', content: '{"error":"not found"}', isError: true },
        ],
      }),
    );
    expect(r).toMatchObject({ text: 'The parcel is in transit.', finish: 'stop', toolCalls: [] });
    const req = ai.requests[0]!;
    expect(req.body.messages).toEqual([
      { role: 'user', content: PROMPT },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_a', name: 'search_tickets', input: { q: '7731' } },
          { type: 'tool_use', id: 'toolu_b', name: 'get_ticket', input: { id: 'T-1' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"tickets":[]}' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: '{"error":"not found"}', is_error: true },
        ],
      },
    ]);
    expect(toolResults(req)).toEqual([
      { callId: 'toolu_a', name: 'search_tickets', content: '{"tickets":[]}', isError: false },
      { callId: 'toolu_b', name: 'get_ticket', content: '{"error":"not found"}', isError: true },
    ]);
  });

  it('a tool_result without its tool_use, or a tool_use without its result, is refused as Anthropic refuses it (400: refused, not unsupported)', async () => {
    const err = await failure(
      provider().chat(
        ask({
          tools: TOOLS,
          messages: [
            { role: 'user', content: PROMPT },
            { role: 'assistant', content: 'Let me see.' },
            { role: 'tool', callId: 'toolu_nobody', name: 'get_ticket', content: '{}' },
          ],
        }),
      ),
    );
    expect(err.failure).toBe('refused');
    expect(ai.requests).toHaveLength(1);
    // And a tool_use left without its tool_result in the next message.
    const left = await failure(
      provider().chat(
        ask({
          tools: TOOLS,
          messages: [
            { role: 'user', content: PROMPT },
            { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_a', name: 'get_ticket', arguments: '{}' }] },
            { role: 'user', content: 'And?' },
          ],
        }),
      ),
    );
    expect(left.failure).toBe('refused');
  });

  it('a compatible server that refuses tools (400 naming them) is unsupported; without tools, refused', async () => {
    const refusal = { status: 400, body: anthropicError(400, 'tools: this model does not support tool use') };
    ai.answer(refusal);
    expect((await failure(provider().chat(ask({ tools: TOOLS })))).failure).toBe('unsupported');
    ai.answer(refusal);
    expect((await failure(provider().chat(ask()))).failure).toBe('refused');
  });
});
