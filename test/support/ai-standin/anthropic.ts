// The Anthropic stand-in's wire format: POST /v1/messages (JSON, or SSE message_start,
// content_block_start, content_block_delta (text_delta, or input_json_delta for a forced tool),
// content_block_stop, message_delta, message_stop), GET /v1/models, and Anthropic's error bodies
// `{type:'error', error:{type, message}}`. A JSON answer is the input of the tool the request
// forces (`tool_choice: {type:'tool', name}`). index.ts documents the API.
import { randomBytes } from 'node:crypto';
import {
  type CoreOptions,
  type Dialect,
  type Play,
  type PlayedCall,
  type Recorded,
  type StandInCore,
  startCore,
} from './core.js';

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
  // The tools offered are prompt text too (a forced JSON tool's schema is already the answer's).
  const tools = Array.isArray(req.body?.tools) && !forcedTool(req) ? JSON.stringify(req.body.tools).length : 0;
  return text(system ?? '') + msgs.reduce((n, m) => n + text(m.content), tools);
}

type Block = { type?: string; id?: unknown; tool_use_id?: unknown; name?: unknown };
const blocksOf = (m: { content?: unknown } | undefined): Block[] => (Array.isArray(m?.content) ? m.content : []);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * What Anthropic refuses about tools (400): a tool without a valid name or an object input_schema,
 * a tool_result whose tool_use_id is no tool_use of the assistant message just before, and a
 * tool_use left without its tool_result in the next message.
 */
function invalidTools(b: any): string | null {
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) return 'tools: Input should be a valid list';
    for (const [i, t] of b.tools.entries()) {
      if (typeof t?.name !== 'string' || !TOOL_NAME.test(t.name))
        return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
      if (t.input_schema?.type !== 'object') return `tools.${i}.custom.input_schema.type: Input should be 'object'`;
    }
  }
  const msgs = b.messages as Array<{ role?: string; content?: unknown }>;
  for (const [i, m] of msgs.entries()) {
    const results = blocksOf(m).filter((x) => x?.type === 'tool_result');
    if (results.length === 0) continue;
    const prev = msgs[i - 1];
    const uses = new Set(
      prev?.role === 'assistant'
        ? blocksOf(prev)
            .filter((x) => x?.type === 'tool_use')
            .map((x) => x.id)
        : [],
    );
    const stray = results.find((r) => m.role !== 'user' || !uses.has(r.tool_use_id));
    if (stray)
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(stray.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  for (const [i, m] of msgs.entries()) {
    if (m?.role !== 'assistant' || i === msgs.length - 1) continue;
    const answered = new Set(
      blocksOf(msgs[i + 1])
        .filter((x) => x?.type === 'tool_result')
        .map((x) => x.tool_use_id),
    );
    const missing = blocksOf(m).filter((x) => x?.type === 'tool_use' && !answered.has(x.id));
    if (missing.length)
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.map((x) => String(x.id)).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  return null;
}

/** A scripted call's input as Anthropic sends it: an object; a text that is one, parsed; else the text as is. */
function inputOf(c: PlayedCall): unknown {
  if (typeof c.value !== 'string') return c.value ?? {};
  try {
    const v = JSON.parse(c.value) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? v : c.value;
  } catch {
    return c.value;
  }
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
  return invalidTools(b);
}

const stopReason = (req: Recorded, p: Play) =>
  p.finish === 'length' ? 'max_tokens' : forcedTool(req) || p.finish === 'tool_calls' ? 'tool_use' : 'end_turn';

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
    callId: () =>
      `toolu_${randomBytes(18)
        .toString('base64')
        .replace(/[^A-Za-z0-9]/g, '')
        .slice(0, 24)}`,
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
      // Calls follow the text; calls alone have no text block.
      const calls = p.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c) }));
      const blocks = calls.length && !tool ? [...(p.text === '' ? [] : [block]), ...calls] : [block];
      const m = message(req, blocks, p.usage ?? { input_tokens: 0, output_tokens: 0 });
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
      // Calls (not with a forced tool): a tool_use block each after the text block (if any), its
      // input's JSON in input_json_delta pieces; a piece frame carries the block's stop and the next start.
      const calls = tool ? [] : p.calls;
      const withText = calls.length === 0 || p.text !== '';
      const first = withText ? 1 : 0;
      const callPieces = calls.flatMap((c, i) => {
        const index = first + i;
        const stopPrev = index > 0 ? event('content_block_stop', { index: index - 1 }) : '';
        const use = { type: 'tool_use', id: c.id, name: c.name, input: {} };
        return [
          stopPrev + event('content_block_start', { index, content_block: use }),
          ...c.pieces.map((t) =>
            event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: t } }),
          ),
        ];
      });
      const last = first + calls.length - 1;
      return {
        head: [
          event('message_start', { message: start }),
          ...(withText ? [event('content_block_start', { index: 0, content_block: block })] : []),
          event('ping', {}),
        ],
        pieces: [...p.pieces.map((t) => event('content_block_delta', { index: 0, delta: delta(t) })), ...callPieces],
        tail: [
          event('content_block_stop', { index: last }),
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
