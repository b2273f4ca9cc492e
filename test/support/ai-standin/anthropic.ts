// The Anthropic stand-in's wire format: POST /v1/messages (JSON, or SSE message_start,
// content_block_start, content_block_delta (text_delta, or input_json_delta for a forced tool),
// content_block_stop, message_delta, message_stop), GET /v1/models, and Anthropic's error bodies
// `{type:'error', error:{type, message}}`. A JSON answer is the input of the tool the request
// forces (`tool_choice: {type:'tool', name}`). index.ts documents the API.
import { type CoreOptions, type Dialect, type Play, type Recorded, type StandInCore, startCore } from './core.js';

export interface AnthropicStandIn extends StandInCore {
  /** The API's origin a client is given as its base URL: `http://127.0.0.1:<port>`. */
  url: string;
  /** The ids GET /v1/models lists. */
  models: string[];
}

const TYPES: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  529: ['overloaded_error', 'Overloaded'],
};

export function anthropicError(status: number, message?: string) {
  const [type, text] = TYPES[status] ?? ['api_error', 'Internal server error'];
  return { type: 'error', error: { type, message: message ?? text }, request_id: `req_standin${status}` };
}

/** The forced tool's name, when the request forces one (its input is then the answer). */
const forcedTool = (req: Recorded): string | null =>
  req.body?.tool_choice?.type === 'tool' ? String(req.body.tool_choice.name) : null;

function inputChars(req: Recorded): number {
  const system = req.body?.system;
  const msgs: Array<{ content?: unknown }> = Array.isArray(req.body?.messages) ? req.body.messages : [];
  const text = (c: unknown) => (typeof c === 'string' ? c.length : JSON.stringify(c ?? '').length);
  return text(system ?? '') + msgs.reduce((n, m) => n + text(m.content), 0);
}

function invalid(req: Recorded): string | null {
  if (!req.headers['anthropic-version']) return 'anthropic-version: header is required';
  const b = req.body;
  if (typeof b?.model !== 'string') return 'model: Field required';
  if (typeof b.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: at least one message is required';
  const tool = forcedTool(req);
  if (tool && !(b.tools ?? []).some((t: { name?: string }) => t.name === tool))
    return `tool_choice: no tool named ${tool}`;
  return null;
}

const stopReason = (req: Recorded, p: Play) =>
  p.finish === 'length' ? 'max_tokens' : forcedTool(req) ? 'tool_use' : 'end_turn';

const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function dialect(s: { models: string[] }): Dialect {
  let n = 0;
  const message = (req: Recorded, content: unknown[], usage: object) => ({
    id: `msg_standin${++n}`,
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content,
    stop_reason: null as string | null,
    stop_sequence: null,
    usage,
  });
  return {
    // The API takes the key as x-api-key or, as the SDK 1.x sends it, Authorization: Bearer.
    key: (req) => {
      const header = req.headers['x-api-key'];
      if (typeof header === 'string') return header;
      return /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
    },
    errorBody: anthropicError,
    other: (req) => {
      if (req.method === 'GET' && req.path === '/v1/models') {
        const data = s.models.map((id) => ({
          type: 'model',
          id,
          display_name: id,
          created_at: '2025-01-01T00:00:00Z',
        }));
        return {
          status: 200,
          body: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
        };
      }
      return req.method === 'POST' && req.path === '/v1/messages' ? 'scripted' : undefined;
    },
    invalid,
    streams: (req) => req.body?.stream === true,
    inputChars,
    schema: (req) => {
      const tool = forcedTool(req);
      return tool ? ((req.body.tools ?? []).find((t: { name?: string }) => t.name === tool)?.input_schema ?? {}) : null;
    },
    body: (req, p) => {
      const tool = forcedTool(req);
      const block = tool
        ? { type: 'tool_use', id: `toolu_standin${n}`, name: tool, input: p.json ?? {} }
        : { type: 'text', text: p.text };
      const m = message(req, [block], p.usage ?? { input_tokens: 0, output_tokens: 0 });
      m.stop_reason = stopReason(req, p);
      return m;
    },
    frames: (req, p) => {
      const tool = forcedTool(req);
      const start = message(req, [], { input_tokens: p.usage?.input_tokens ?? 0, output_tokens: 1 });
      const block = tool
        ? { type: 'tool_use', id: `toolu_standin${n}`, name: tool, input: {} }
        : { type: 'text', text: '' };
      const delta = (t: string) =>
        tool ? { type: 'input_json_delta', partial_json: t } : { type: 'text_delta', text: t };
      return {
        head: [
          event('message_start', { message: start }),
          event('content_block_start', { index: 0, content_block: block }),
          event('ping', {}),
        ],
        pieces: p.pieces.map((t) => event('content_block_delta', { index: 0, delta: delta(t) })),
        tail: [
          event('content_block_stop', { index: 0 }),
          event('message_delta', {
            delta: { stop_reason: stopReason(req, p), stop_sequence: null },
            usage: { output_tokens: p.usage?.output_tokens ?? 0 },
          }),
          event('message_stop', {}),
        ],
      };
    },
    garbage: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": \n\n',
  };
}

/** Starts an Anthropic stand-in on 127.0.0.1; give a client `url` as its base URL. */
export async function startAnthropicStandIn(
  options: CoreOptions & { models?: string[] } = {},
): Promise<AnthropicStandIn> {
  const own = { url: '', models: options.models ?? ['claude-sonnet-4-5', 'claude-haiku-4-5'] };
  const { standIn, origin } = await startCore(own, dialect, options);
  standIn.url = origin;
  return standIn;
}
