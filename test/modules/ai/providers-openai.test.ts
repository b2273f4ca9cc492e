// The OpenAI-compatible provider (src/modules/ai/providers/openai.ts) called directly against the
// stand-in (test/support/ai-standin): the official SDK's own requests, retries, timeouts and
// streams, and every failure as a ProviderError with the right failure. Tool use: tools offered as
// functions, tool_calls read whole and from stream pieces, the results sent back as `tool`
// messages, and a server without tool use (Ollama's 400) as `unsupported`.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProvider } from '../../../src/modules/ai/providers/index.js';
import { type ChatRequest, ProviderError } from '../../../src/modules/ai/providers/types.js';
import {
  embedText,
  gate,
  type OpenAiStandIn,
  offeredTools,
  openAiError,
  startOpenAiStandIn,
  toolResults,
} from '../../support/ai-standin/index.js';

const KEY = 'sk-standin-0123456789';
let ai: OpenAiStandIn;

beforeAll(async () => {
  ai = await startOpenAiStandIn({ keys: [KEY] });
});
afterAll(() => ai.stop());
beforeEach(() => {
  // Every answer a test queued was used.
  expect(ai.pending()).toBe(0);
  ai.reset();
});

const provider = (o: { maxRetries?: number; timeoutMs?: number; apiKey?: string } = {}) =>
  createProvider({ kind: 'openai', apiKey: KEY, baseUrl: ai.url, maxRetries: 0, ...o });

const PROMPT = 'Where is my parcel 7731?';
const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'gpt-4o-mini',
  system: 'You help support agents.',
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

describe('openai provider', () => {
  it('answers a plain request with the usage the server reported, on /v1/chat/completions', async () => {
    ai.answer({ text: 'It left the depot today.', usage: { input_tokens: 31, output_tokens: 7 } });
    const r = await provider().chat(ask({ temperature: 0.2 }));
    expect(r).toEqual({
      text: 'It left the depot today.',
      usage: { input_tokens: 31, output_tokens: 7, estimated: false },
      model: 'gpt-4o-mini',
      finish: 'stop',
      toolCalls: [],
    });
    const req = ai.requests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 200,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'You help support agents.' },
        { role: 'user', content: PROMPT },
      ],
    });
    expect(req.body.stream).toBeFalsy();
  });

  it('talks to a server that takes no key (Ollama) without one', async () => {
    ai.keys = null;
    try {
      ai.answer({ text: 'Hi.' });
      const r = await provider({ apiKey: '' }).chat(ask());
      expect(r.text).toBe('Hi.');
    } finally {
      ai.keys = [KEY];
    }
  });

  it('says length when maxTokens cut the answer', async () => {
    ai.answer({ text: 'It left', finish: 'length' });
    expect((await provider().chat(ask())).finish).toBe('length');
  });

  it('streams: onDelta gets each piece in order, then the text and the usage of the last chunk', async () => {
    ai.answer({
      text: 'It left the depot.',
      chunks: ['It ', 'left the', ' depot.'],
      usage: { input_tokens: 20, output_tokens: 5 },
    });
    const pieces: string[] = [];
    const r = await provider().chat(ask({ onDelta: (t) => pieces.push(t) }));
    expect(pieces).toEqual(['It ', 'left the', ' depot.']);
    expect(r.text).toBe('It left the depot.');
    expect(r.usage).toEqual({ input_tokens: 20, output_tokens: 5, estimated: false });
    expect(ai.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('estimates the usage a server does not report', async () => {
    ai.answer({ text: 'x'.repeat(40), usage: null });
    const r = await provider().chat(ask({ onDelta: () => {} }));
    const promptChars = 'You help support agents.'.length + PROMPT.length;
    expect(r.usage).toEqual({ input_tokens: Math.ceil(promptChars / 4), output_tokens: 10, estimated: true });
  });

  it('asks for JSON with a strict json_schema and answers it as text', async () => {
    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] };
    ai.answer({ json: { summary: 'Parcel delayed.' } });
    const r = await provider().chat(ask({ json: { name: 'summary', schema } }));
    expect(JSON.parse(r.text)).toEqual({ summary: 'Parcel delayed.' });
    expect(ai.requests[0]!.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'summary', schema, strict: true },
    });
  });

  it('an answer to a JSON request that is not JSON is bad_response', async () => {
    ai.answer({ text: 'Sure! Here is the summary.' });
    const err = await failure(provider().chat(ask({ json: { name: 'summary', schema: { type: 'object' } } })));
    expect(err.failure).toBe('bad_response');
  });

  it('embeds on /v1/embeddings: one vector a text, in order, texts sharing words nearer', async () => {
    const p = provider();
    const texts = ['refund my order', 'refund the order please', 'the weather is sunny'];
    const r = await p.embed!(texts, 'text-embedding-3-small');
    expect(r.vectors).toHaveLength(3);
    expect(r.vectors[0]![0]).toBeCloseTo(embedText(texts[0]!)[0]!, 6);
    const dot = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * b[i]!, 0);
    expect(dot(r.vectors[0]!, r.vectors[1]!)).toBeGreaterThan(dot(r.vectors[0]!, r.vectors[2]!));
    expect(r.usage).toEqual({ input_tokens: 4 + 6 + 5, output_tokens: 0, estimated: false });
    expect(ai.requests[0]!.path).toBe('/v1/embeddings');
    expect(ai.requests[0]!.body).toMatchObject({
      model: 'text-embedding-3-small',
      input: texts,
      encoding_format: 'float',
    });
  });

  it('embeddings failures are ProviderErrors too', async () => {
    ai.embeddingFailures.push({ status: 500 });
    expect((await failure(provider().embed!(['hi'], 'text-embedding-3-small'))).failure).toBe('unavailable');
  });

  it('waits as long as a 429 retry-after says before the retry', async () => {
    ai.answer({ status: 429, headers: { 'retry-after': '1' } }, { text: 'Later answer.' });
    const r = await provider({ maxRetries: 1 }).chat(ask());
    expect(r.text).toBe('Later answer.');
    expect(ai.requests).toHaveLength(2);
    expect(ai.requests[1]!.at - ai.requests[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('retries a 500 and succeeds', async () => {
    ai.answer({ status: 500, headers: { 'retry-after-ms': '10' } }, { text: 'Fine now.' });
    expect((await provider({ maxRetries: 2 }).chat(ask())).text).toBe('Fine now.');
    expect(ai.requests).toHaveLength(2);
  });

  it('a 500 that lasts is unavailable after maxRetries + 1 requests', async () => {
    const busy = { status: 500, headers: { 'retry-after-ms': '10' } };
    ai.answer(busy, busy, busy);
    expect((await failure(provider({ maxRetries: 2 }).chat(ask()))).failure).toBe('unavailable');
    expect(ai.requests).toHaveLength(3);
  });

  it('a refused key is auth, not retried, and the message names neither key nor prompt', async () => {
    const err = await failure(provider({ apiKey: 'sk-wrong-key-42', maxRetries: 2 }).chat(ask()));
    expect(err.failure).toBe('auth');
    expect(err.message).not.toContain('sk-wrong-key-42');
    expect(ai.requests).toHaveLength(1);
  });

  it('a 429 that lasts is rate_limited; a bad model (404) is refused', async () => {
    ai.answer({ status: 429, headers: { 'retry-after-ms': '5' } });
    expect((await failure(provider().chat(ask()))).failure).toBe('rate_limited');
    ai.answer({ status: 404 });
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
    ai.answer({ malformed: true, text: 'Hello there friend', chunks: ['Hello ', 'there friend'] });
    const err = await failure(provider().chat(ask({ onDelta: () => {} })));
    expect(err.failure).toBe('bad_response');
    expect(err.partial).toMatchObject({ text: 'Hello ', usage: { estimated: true } });
  });

  it('a cut stream is bad_response with the text so far and its estimated usage', async () => {
    ai.answer({ cut: 2, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const pieces: string[] = [];
    const err = await failure(provider().chat(ask({ onDelta: (t) => pieces.push(t) })));
    expect(err.failure).toBe('bad_response');
    expect(pieces).toEqual(['one ', 'two ']);
    expect(err.partial).toEqual({ text: 'one two ', usage: { input_tokens: 12, output_tokens: 2, estimated: true } });
  });

  it('an abort after the first piece stops the request: aborted, with the partial, and the server sees it close', async () => {
    const g = gate();
    ai.answer({ gate: g, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const stop = new AbortController();
    const call = provider().chat(ask({ signal: stop.signal, onDelta: () => stop.abort() }));
    const err = await failure(call);
    expect(err.failure).toBe('aborted');
    expect(err.partial?.text).toBe('one ');
    await ai.requests[0]!.done;
    expect(ai.requests[0]!.closedEarly).toBe(true);
    g.release();
  });

  it('an abort before the answer is aborted without a partial', async () => {
    ai.answer({ hang: true });
    const stop = new AbortController();
    const call = provider().chat(ask({ signal: stop.signal }));
    await ai.request(0);
    stop.abort();
    const err = await failure(call);
    expect(err).toMatchObject({ failure: 'aborted', partial: null });
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

describe('openai provider: tool use', () => {
  it('offers the tools as functions and reads a call without text (content null): finish tool_calls', async () => {
    ai.answer({ toolCalls: [{ name: 'search_tickets', arguments: { q: 'parcel 7731' } }] });
    const r = await provider().chat(ask({ tools: TOOLS }));
    expect(r.finish).toBe('tool_calls');
    expect(r.text).toBe('');
    expect(r.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'search_tickets', arguments: '{"q":"parcel 7731"}' },
    ]);
    const body = ai.requests[0]!.body;
    expect(body.tools).toEqual(
      TOOLS!.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
    );
    expect(offeredTools(ai.requests[0]!)).toEqual(['search_tickets', 'get_ticket']);
    expect(body.response_format).toBeUndefined();
  });

  it('reads text and several calls of one turn, in order', async () => {
    ai.answer({
      text: 'Let me look.',
      toolCalls: [
        { id: 'call_a', name: 'search_tickets', arguments: { q: 'refund' } },
        { id: 'call_b', name: 'get_ticket', arguments: { id: 'T-1' } },
      ],
    });
    const r = await provider().chat(ask({ tools: TOOLS }));
    expect(r).toMatchObject({ text: 'Let me look.', finish: 'tool_calls' });
    expect(r.toolCalls).toEqual([
      { id: 'call_a', name: 'search_tickets', arguments: '{"q":"refund"}' },
      { id: 'call_b', name: 'get_ticket', arguments: '{"id":"T-1"}' },
    ]);
  });

  it('streams: text pieces reach onDelta, the calls are put together from their pieces by index', async () => {
    ai.answer({
      text: 'Checking two things.',
      chunks: ['Checking ', 'two things.'],
      toolCalls: [
        { id: 'call_a', name: 'search_tickets', arguments: { q: 'a long query about a refund' } },
        { id: 'call_b', name: 'get_ticket', arguments: { id: 'T-77' } },
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
      { id: 'call_a', name: 'search_tickets', arguments: '{"q":"a long query about a refund"}' },
      { id: 'call_b', name: 'get_ticket', arguments: '{"id":"T-77"}' },
    ]);
  });

  it('streams a call without text: no delta, the call whole', async () => {
    ai.answer({ toolCalls: [{ name: 'get_ticket', arguments: { id: 'T-9' } }] });
    const pieces: string[] = [];
    const r = await provider().chat(ask({ tools: TOOLS, onDelta: (t) => pieces.push(t) }));
    expect(pieces).toEqual([]);
    expect(r).toMatchObject({ text: '', finish: 'tool_calls' });
    expect(r.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'get_ticket', arguments: '{"id":"T-9"}' },
    ]);
  });

  it('passes malformed arguments through as the text the model wrote (the caller validates), streamed or not', async () => {
    ai.answer({ toolCalls: [{ id: 'call_x', name: 'get_ticket', arguments: '{"id": "T-1", ' }] });
    const r = await provider().chat(ask({ tools: TOOLS }));
    expect(r.toolCalls).toEqual([{ id: 'call_x', name: 'get_ticket', arguments: '{"id": "T-1", ' }]);
    ai.answer({ toolCalls: [{ id: 'call_y', name: 'get_ticket', arguments: 'not json at all' }] });
    const s = await provider().chat(ask({ tools: TOOLS, onDelta: () => {} }));
    expect(s.toolCalls).toEqual([{ id: 'call_y', name: 'get_ticket', arguments: 'not json at all' }]);
  });

  it('a call without a function name is bad_response, streamed or not', async () => {
    ai.answer({ toolCalls: [{ name: '', arguments: {} }] });
    expect((await failure(provider().chat(ask({ tools: TOOLS })))).failure).toBe('bad_response');
    ai.answer({ toolCalls: [{ name: '', arguments: {} }] });
    expect((await failure(provider().chat(ask({ tools: TOOLS, onDelta: () => {} })))).failure).toBe('bad_response');
  });

  it('calls a server reports with finish stop (older Ollama) are still tool_calls', async () => {
    ai.answer({ toolCalls: [{ name: 'search_tickets', arguments: { q: 'x' } }], finish: 'stop' });
    expect((await provider().chat(ask({ tools: TOOLS }))).finish).toBe('tool_calls');
  });

  it('sends the calls and their results back as tool_calls and tool messages the server accepts', async () => {
    ai.answer({ text: 'The parcel is in transit.' });
    const r = await provider().chat(
      ask({
        tools: TOOLS,
        messages: [
          { role: 'user', content: PROMPT },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'call_a', name: 'search_tickets', arguments: '{"q":"7731"}' },
              { id: 'call_b', name: 'get_ticket', arguments: '{"id":"T-1"}' },
            ],
          },
          { role: 'tool', callId: 'call_a', name: 'search_tickets', content: '{"tickets":[]}' },
          { role: 'tool', callId: 'call_b', name: 'get_ticket', content: '{"error":"not found"}', isError: true },
        ],
      }),
    );
    expect(r).toMatchObject({ text: 'The parcel is in transit.', finish: 'stop', toolCalls: [] });
    const req = ai.requests[0]!;
    expect(req.body.messages.slice(1)).toEqual([
      { role: 'user', content: PROMPT },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'search_tickets', arguments: '{"q":"7731"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_ticket', arguments: '{"id":"T-1"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"tickets":[]}' },
      { role: 'tool', tool_call_id: 'call_b', content: '{"error":"not found"}' },
    ]);
    expect(toolResults(req)).toEqual([
      { callId: 'call_a', name: 'search_tickets', content: '{"tickets":[]}', isError: false },
      { callId: 'call_b', name: 'get_ticket', content: '{"error":"not found"}', isError: false },
    ]);
  });

  it('a result answering no call is refused as OpenAI refuses it (400: refused, not unsupported)', async () => {
    const err = await failure(
      provider().chat(
        ask({
          tools: TOOLS,
          messages: [
            { role: 'user', content: PROMPT },
            { role: 'tool', callId: 'call_nobody', name: 'get_ticket', content: '{}' },
          ],
        }),
      ),
    );
    expect(err.failure).toBe('refused');
    expect(ai.requests).toHaveLength(1);
    // And a call left without its result.
    const left = await failure(
      provider().chat(
        ask({
          tools: TOOLS,
          messages: [
            { role: 'user', content: PROMPT },
            { role: 'assistant', content: '', toolCalls: [{ id: 'call_a', name: 'get_ticket', arguments: '{}' }] },
            { role: 'user', content: 'And?' },
          ],
        }),
      ),
    );
    expect(left.failure).toBe('refused');
  });

  it("a server without tool use (Ollama's 400 'does not support tools') is unsupported; without tools, refused", async () => {
    const ollama = {
      status: 400,
      body: openAiError(400, 'registry.ollama.ai/library/gemma:2b does not support tools'),
    };
    ai.answer(ollama);
    expect((await failure(provider().chat(ask({ tools: TOOLS })))).failure).toBe('unsupported');
    ai.answer(ollama);
    expect((await failure(provider().chat(ask({ tools: TOOLS, onDelta: () => {} })))).failure).toBe('unsupported');
    ai.answer({
      status: 400,
      body: openAiError(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
    });
    expect((await failure(provider().chat(ask({ tools: TOOLS })))).failure).toBe('unsupported');
    ai.answer(ollama);
    expect((await failure(provider().chat(ask()))).failure).toBe('refused');
  });

  it('estimates a usage not reported from the tools offered and the calls made', async () => {
    ai.answer({ toolCalls: [{ id: 'call_a', name: 'get_ticket', arguments: { id: 'T-1' } }], usage: null });
    const r = await provider().chat(ask({ tools: TOOLS }));
    const toolChars = TOOLS!.reduce(
      (n, t) => n + t.name.length + t.description.length + JSON.stringify(t.parameters).length,
      0,
    );
    const promptChars = 'You help support agents.'.length + PROMPT.length + toolChars;
    expect(r.usage).toEqual({
      input_tokens: Math.ceil(promptChars / 4),
      output_tokens: Math.ceil(('get_ticket'.length + '{"id":"T-1"}'.length) / 4),
      estimated: true,
    });
  });
});
