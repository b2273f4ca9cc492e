// Anthropic's messages API through the official SDK (streamed when the caller wants the pieces).
// JSON answers come through a forced tool whose input schema is the answer's: the tool's input is
// the answer. Tools go with their `input_schema`; the calls come back as `tool_use` blocks
// (streamed: content_block_start, then input_json_delta pieces) and go back as `tool_result`
// blocks. No embeddings. Retries (408, 409, 429 honouring retry-after, 5xx, 529) and the
// per-attempt timeout are the SDK's.
import Anthropic from '@anthropic-ai/sdk';
import type {
  MessageCreateParamsBase,
  MessageParam,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import {
  brokeOff,
  checkJson,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type SdkErrors,
  StreamWatch,
  toProviderError,
  usageOf,
} from './common.js';
import {
  type AiProvider,
  type ChatRequest,
  type ChatResult,
  ProviderError,
  type ProviderOptions,
  type ToolCall,
} from './types.js';

const ERRORS: SdkErrors = Anthropic;
const VENDOR_URL = 'https://api.anthropic.com';

type Params = Omit<MessageCreateParamsBase, 'stream'>;

function params(req: ChatRequest): Params {
  return {
    model: req.model,
    system: req.system,
    messages: toMessages(req.messages),
    max_tokens: req.maxTokens,
    ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
    ...(req.json
      ? {
          tools: [{ name: req.json.name, input_schema: { type: 'object', ...req.json.schema } }],
          tool_choice: { type: 'tool', name: req.json.name },
        }
      : req.tools?.length
        ? {
            tools: req.tools.map((t) => ({
              name: t.name,
              description: t.description,
              input_schema: { type: 'object' as const, ...t.parameters },
            })),
          }
        : {}),
  };
}

/**
 * The turns in Anthropic's wire format: tool calls become `tool_use` blocks of the assistant's
 * turn, and consecutive tool results one user turn of `tool_result` blocks.
 */
function toMessages(turns: ChatRequest['messages']): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of turns) {
    if (m.role === 'tool') {
      const block = {
        type: 'tool_result' as const,
        tool_use_id: m.callId,
        content: m.content,
        ...(m.isError ? { is_error: true } : {}),
      };
      const last = out.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(block);
      else out.push({ role: 'user', content: [block] });
    } else if (m.role === 'assistant' && m.toolCalls?.length) {
      out.push({
        role: 'assistant',
        content: [
          ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
          ...m.toolCalls.map((c) => ({
            type: 'tool_use' as const,
            id: c.id,
            name: c.name,
            input: parseInput(c.arguments),
          })),
        ],
      });
    } else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/** A call's arguments as the object Anthropic expects back (what the model wrote, or {} when it was not JSON). */
function parseInput(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Why the answer ended: tool_calls when the model called tools (stop_reason tool_use; a JSON
 * answer's forced tool is not a call), length when max_tokens cut it.
 */
const finishOf = (reason: string | null | undefined, calls: readonly ToolCall[]): ChatResult['finish'] =>
  reason === 'max_tokens' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';

const malformedCall = () => new ProviderError('bad_response', 'anthropic: a tool_use block has no name');

/** A tool_use block as a call: `arguments` is the JSON text of its input (a text input as is). */
function callOf(block: { id?: unknown; name?: unknown; input?: unknown }, index: number): ToolCall {
  if (typeof block.name !== 'string' || block.name === '') throw malformedCall();
  const input = block.input;
  return {
    id: typeof block.id === 'string' && block.id ? block.id : `toolu_${index}`,
    name: block.name,
    arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}),
  };
}

/** Streamed input pieces as the same text a non-streamed answer gives (compact JSON); not JSON: as is. */
function compactJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

const failureContext = (req: ChatRequest) => ({
  kind: 'anthropic' as const,
  errors: ERRORS,
  signal: req.signal,
  tools: !req.json && Boolean(req.tools?.length),
});

async function complete(client: Anthropic, req: ChatRequest): Promise<ChatResult> {
  try {
    const r = await client.messages.create({ ...params(req), stream: false }, { signal: req.signal });
    let text: string | null = null;
    const toolCalls: ToolCall[] = [];
    for (const [i, block] of (r.content ?? []).entries()) {
      if (req.json && block.type === 'tool_use' && block.name === req.json.name) text = JSON.stringify(block.input);
      if (!req.json && block.type === 'text') text = (text ?? '') + block.text;
      if (!req.json && block.type === 'tool_use') toolCalls.push(callOf(block, i));
    }
    // Calls alone are an answer too (no text then).
    if (text === null && toolCalls.length > 0) text = '';
    if (text === null)
      throw new ProviderError('bad_response', 'anthropic: the answer has no content of the kind asked');
    const usage = usageOf(req, text, { input: r.usage?.input_tokens, output: r.usage?.output_tokens }, toolCalls);
    checkJson('anthropic', req, text, usage);
    return { text, usage, model: r.model ?? req.model, finish: finishOf(r.stop_reason, toolCalls), toolCalls };
  } catch (err) {
    throw toProviderError(err, failureContext(req));
  }
}

/** The state of a streamed answer as its events arrive. */
interface Streamed {
  text: string;
  model: string;
  input?: number;
  output?: number;
  stop: string | null;
  ended: boolean;
  /** The tool_use blocks by their index: the block as it started, and its input's JSON in pieces. */
  calls: Map<number, { block: { id?: unknown; name?: unknown; input?: unknown }; json: string }>;
}

/**
 * Applies one event; returns the piece of text it carried (text, or the forced tool's JSON). A
 * tool_use block's input pieces gather in `s.calls`.
 */
function apply(s: Streamed, e: RawMessageStreamEvent, json: boolean): string | null {
  switch (e.type) {
    case 'message_start':
      s.model = e.message.model ?? s.model;
      s.input = e.message.usage?.input_tokens ?? undefined;
      return null;
    case 'content_block_start':
      if (!json && e.content_block.type === 'tool_use') s.calls.set(e.index, { block: e.content_block, json: '' });
      return null;
    case 'content_block_delta': {
      if (!json && e.delta.type === 'text_delta') return e.delta.text;
      if (json && e.delta.type === 'input_json_delta') return e.delta.partial_json;
      const call = s.calls.get(e.index);
      if (call && e.delta.type === 'input_json_delta') call.json += e.delta.partial_json;
      return null;
    }
    case 'message_delta':
      s.stop = e.delta.stop_reason ?? s.stop;
      s.output = e.usage?.output_tokens ?? s.output;
      return null;
    case 'message_stop':
      s.ended = true;
      return null;
    default:
      return null;
  }
}

async function stream(client: Anthropic, req: ChatRequest, timeoutMs: number): Promise<ChatResult> {
  const watch = new StreamWatch(timeoutMs, req.signal);
  const s: Streamed = { text: '', model: req.model, stop: null, ended: false, calls: new Map() };
  let began = false;
  const partial = () => (began ? { text: s.text, usage: usageOf(req, s.text, s) } : null);
  try {
    const events = await client.messages.create({ ...params(req), stream: true }, { signal: watch.signal });
    began = true;
    watch.touch();
    for await (const e of events) {
      watch.touch();
      const piece = apply(s, e, Boolean(req.json));
      if (piece) {
        s.text += piece;
        req.onDelta?.(piece);
      }
    }
    if (watch.stopped) throw new Error('stopped');
    const done = partial()!;
    if (!s.ended) throw brokeOff('anthropic', done);
    if (req.json && s.text === '') s.text = '{}';
    // A block's input is its pieces' JSON (none: the input it started with, {} for a tool without arguments).
    const toolCalls = [...s.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([i, c]) => callOf(c.json === '' ? c.block : { ...c.block, input: compactJson(c.json) }, i));
    const usage = usageOf(req, s.text, s, toolCalls);
    checkJson('anthropic', req, s.text, usage);
    return { text: s.text, usage, model: s.model, finish: finishOf(s.stop, toolCalls), toolCalls };
  } catch (err) {
    throw toProviderError(err, { ...failureContext(req), stalled: watch.stalled, partial: partial() });
  } finally {
    watch.dispose();
  }
}

export function createAnthropicProvider(options: ProviderOptions): AiProvider {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new Anthropic({
    apiKey: options.apiKey,
    // Never ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL from the environment: the settings say which.
    authToken: null,
    baseURL: options.baseUrl ?? VENDOR_URL,
    timeout: timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    // The SDK's logger would print a malformed stream's lines (the answer) to the console.
    logLevel: 'off',
  });
  return {
    kind: 'anthropic',
    chat: (req) => (req.onDelta ? stream(client, req, timeoutMs) : complete(client, req)),
    embed: null,
  };
}
