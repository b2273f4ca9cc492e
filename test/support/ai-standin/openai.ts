// The OpenAI-compatible stand-in's wire format: POST /v1/chat/completions (JSON, or SSE
// `data: {chunk}` lines ending `data: [DONE]`, a last chunk with `usage` when
// `stream_options.include_usage`), POST /v1/embeddings (float or base64), GET /v1/models, and
// OpenAI's error bodies. index.ts documents the API.
import { createHash, randomBytes } from 'node:crypto';
import {
  type CoreOptions,
  type Dialect,
  estimateTokens,
  type Play,
  type Recorded,
  type Reply,
  type StandInCore,
  startCore,
} from './core.js';

export interface OpenAiStandIn extends StandInCore {
  /** The base URL a client is given: `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** The ids GET /v1/models lists. */
  models: string[];
  /** Answers for the next embeddings requests, before they answer vectors again (e.g. a 500). */
  readonly embeddingFailures: Reply[];
}

const ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Not allowed.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached. Please try again later.' },
};
const SERVER_ERROR = {
  type: 'server_error',
  code: null,
  message: 'The server had an error while processing your request.',
};

export function openAiError(status: number, message?: string) {
  const e = ERRORS[status] ?? SERVER_ERROR;
  return { error: { message: message ?? e.message, type: e.type, param: null, code: e.code } };
}

/** A text's words hashed into `dims` dimensions and normalised: texts sharing words are near. */
export function embedText(text: string, dims = 256): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = createHash('sha1').update(word).digest();
    v[h.readUInt32BE(0) % dims]! += 1;
  }
  const norm = Math.hypot(...v);
  if (norm === 0) return v.map((_, i) => (i === 0 ? 1 : 0));
  return v.map((x) => x / norm);
}

const base64Floats = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');

function embeddings(req: Recorded): Reply {
  const input: unknown = req.body?.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : null;
  if (!texts?.every((t) => typeof t === 'string') || typeof req.body?.model !== 'string') {
    return { status: 400, body: openAiError(400, "'input' and 'model' are required.") };
  }
  const dims = typeof req.body.dimensions === 'number' ? req.body.dimensions : 256;
  const b64 = req.body.encoding_format === 'base64';
  const tokens = texts.reduce((n, t) => n + estimateTokens(t.length), 0);
  return {
    status: 200,
    body: {
      object: 'list',
      data: texts.map((t, index) => {
        const v = embedText(t, dims);
        return { object: 'embedding', index, embedding: b64 ? base64Floats(v) : v };
      }),
      model: req.body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}

/** Characters of the prompt: the messages (the calls' names and arguments included) and the tools offered. */
function messageChars(req: Recorded): number {
  const msgs: Array<{ content?: unknown; tool_calls?: unknown }> = Array.isArray(req.body?.messages)
    ? req.body.messages
    : [];
  const text = (c: unknown) => (c == null ? 0 : typeof c === 'string' ? c.length : JSON.stringify(c).length);
  const calls = (m: { tool_calls?: unknown }) =>
    Array.isArray(m.tool_calls)
      ? m.tool_calls.reduce(
          (n: number, c: { function?: { name?: unknown; arguments?: unknown } }) =>
            n + text(c.function?.name) + text(c.function?.arguments),
          0,
        )
      : 0;
  const tools = Array.isArray(req.body?.tools) ? JSON.stringify(req.body.tools).length : 0;
  return msgs.reduce((n, m) => n + text(m.content) + calls(m), tools);
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * What OpenAI refuses about tools (400): tools that are not well-formed functions, a `tool`
 * message that answers no call of the assistant message before it, and an assistant's call left
 * without its `tool` message before the next user or assistant message (or the end).
 */
function invalidTools(body: any): string | null {
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools) || body.tools.length === 0) return "[] is too short - 'tools'";
    for (const [i, t] of body.tools.entries()) {
      if (t?.type !== 'function') return `Invalid value for 'tools[${i}].type': expected 'function'.`;
      if (typeof t.function?.name !== 'string' || !TOOL_NAME.test(t.function.name))
        return `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
    }
  }
  let open = new Set<string>();
  const unanswered = () =>
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`;
  for (const m of body.messages as Array<{ role?: string; tool_call_id?: unknown; tool_calls?: unknown }>) {
    if (m?.role === 'tool') {
      if (typeof m.tool_call_id !== 'string' || !open.has(m.tool_call_id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      open.delete(m.tool_call_id);
      continue;
    }
    if (open.size > 0) return unanswered();
    if (m?.role === 'assistant' && Array.isArray(m.tool_calls)) {
      open = new Set(m.tool_calls.map((c: { id?: unknown }) => String(c?.id)));
    }
  }
  return open.size > 0 ? unanswered() : null;
}

/** A call in the wire format (arguments as text), whole or as a stream's first piece. */
const wireCall = (c: { id: string; name: string }, args: string) => ({
  id: c.id,
  type: 'function',
  function: { name: c.name, arguments: args },
});

const usageOf = (p: Play) =>
  p.usage && {
    prompt_tokens: p.usage.input_tokens,
    completion_tokens: p.usage.output_tokens,
    total_tokens: p.usage.input_tokens + p.usage.output_tokens,
  };

function dialect(s: { models: string[]; embeddingFailures: Reply[] }): Dialect {
  let n = 0;
  const created = () => Math.floor(Date.now() / 1000);
  return {
    key: (req) => /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null,
    errorBody: openAiError,
    other: (req) => {
      if (req.method === 'GET' && req.path === '/v1/models') {
        return {
          status: 200,
          body: {
            object: 'list',
            data: s.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'standin' })),
          },
        };
      }
      if (req.method !== 'POST') return undefined;
      if (req.path === '/v1/chat/completions') return 'scripted';
      if (req.path === '/v1/embeddings') return s.embeddingFailures.shift() ?? embeddings(req);
      return undefined;
    },
    invalid: (req) =>
      typeof req.body?.model !== 'string'
        ? "'model' is a required property"
        : !Array.isArray(req.body?.messages) || req.body.messages.length === 0
          ? "'messages' must be a non-empty array"
          : invalidTools(req.body),
    callId: () =>
      `call_${randomBytes(18)
        .toString('base64')
        .replace(/[^A-Za-z0-9]/g, '')
        .slice(0, 24)}`,
    streams: (req) => req.body?.stream === true,
    inputChars: messageChars,
    schema: (req) =>
      req.body?.response_format?.type === 'json_schema' ? (req.body.response_format.json_schema?.schema ?? {}) : null,
    body: (req, p) => ({
      id: `chatcmpl-${++n}`,
      object: 'chat.completion',
      created: created(),
      model: req.body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            // Calls without text: content null, as the vendor sends it.
            content: p.text === '' && p.calls.length ? null : p.text,
            refusal: null,
            ...(p.calls.length ? { tool_calls: p.calls.map((c) => wireCall(c, c.arguments)) } : {}),
          },
          logprobs: null,
          finish_reason: p.finish,
        },
      ],
      ...(p.usage ? { usage: usageOf(p) } : {}),
    }),
    frames: (req, p) => {
      const id = `chatcmpl-${++n}`;
      const withUsage = req.body?.stream_options?.include_usage === true;
      const chunk = (choices: unknown[], extra: object = {}) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: created(), model: req.body.model, choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`;
      const delta = (d: object, finish: string | null = null) =>
        chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
      const tail = [delta({}, p.finish)];
      if (withUsage && p.usage) tail.push(chunk([], { usage: usageOf(p) }));
      tail.push('data: [DONE]\n\n');
      // Each call: its id, type and name with empty arguments, then the arguments in pieces.
      const callPieces = p.calls.flatMap((c, index) => [
        delta({ tool_calls: [{ index, ...wireCall(c, '') }] }),
        ...c.pieces.map((a) => delta({ tool_calls: [{ index, function: { arguments: a } }] })),
      ]);
      return {
        head: [delta({ role: 'assistant', content: p.calls.length && p.text === '' ? null : '', refusal: null })],
        pieces: [...p.pieces.map((t) => delta({ content: t })), ...callPieces],
        tail,
      };
    },
    garbage: 'data: {"id": "chatcmpl-broken", "choices": [{"delta": \n\n',
  };
}

/** Starts an OpenAI-compatible stand-in on 127.0.0.1; give a client `url` as its base URL. */
export async function startOpenAiStandIn(options: CoreOptions & { models?: string[] } = {}): Promise<OpenAiStandIn> {
  const own = {
    url: '',
    models: options.models ?? ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'],
    embeddingFailures: [] as Reply[],
  };
  const { standIn, origin } = await startCore(own, dialect, options);
  standIn.url = `${origin}/v1`;
  return standIn;
}
