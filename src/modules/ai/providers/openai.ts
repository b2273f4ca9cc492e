// Any OpenAI-compatible server through the official SDK: `{baseUrl}/chat/completions` (streamed
// with `stream_options.include_usage` when the caller wants the pieces) and `{baseUrl}/embeddings`
// (docs/ai.md; never the Responses API, which compatible servers do not speak). Tools go as
// `function` tools; the calls come back as `tool_calls` (streamed: `delta.tool_calls` pieces by
// index) and go back as `tool` messages. Retries (408, 409, 429 honouring retry-after, 5xx) and
// the per-attempt timeout are the SDK's.
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import {
  brokeOff,
  checkJson,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type SdkErrors,
  StreamWatch,
  tokensOf,
  toProviderError,
  usageOf,
} from './common.js';
import {
  type AiProvider,
  type ChatRequest,
  type ChatResult,
  type EmbeddingResult,
  ProviderError,
  type ProviderOptions,
  type ToolCall,
} from './types.js';

const ERRORS: SdkErrors = OpenAI;
const VENDOR_URL = 'https://api.openai.com/v1';

type Params = Omit<ChatCompletionCreateParamsBase, 'stream'>;

/** The request offers tools (never with `json`: params sends them only without). */
const offersTools = (req: ChatRequest) => !req.json && Boolean(req.tools?.length);

/**
 * OpenAI's own API takes `max_completion_tokens` (its reasoning models refuse `max_tokens`);
 * other compatible servers (Ollama, vLLM, LM Studio, …) all know `max_tokens`.
 */
function params(req: ChatRequest, ownApi: boolean): Params {
  return {
    model: req.model,
    messages: [{ role: 'system', content: req.system }, ...req.messages.map(toMessage)],
    ...(ownApi ? { max_completion_tokens: req.maxTokens } : { max_tokens: req.maxTokens }),
    ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
    ...(req.json
      ? {
          response_format: {
            type: 'json_schema',
            json_schema: { name: req.json.name, schema: req.json.schema, strict: true },
          },
        }
      : offersTools(req)
        ? {
            tools: req.tools!.map((t) => ({
              type: 'function' as const,
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
  };
}

/** A turn in OpenAI's wire format (tool calls and their results included). */
function toMessage(m: ChatRequest['messages'][number]): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.callId, content: m.content };
  if (m.role === 'user') return { role: 'user', content: m.content };
  return {
    role: 'assistant',
    // A turn of calls alone has no content (null, as the vendor sends it).
    content: m.content === '' && m.toolCalls?.length ? null : m.content,
    ...(m.toolCalls?.length
      ? {
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
      : {}),
  };
}

/**
 * Why the answer ended: tool_calls when the model made calls (some compatible servers say `stop`
 * then), length when maxTokens cut it.
 */
const finishOf = (reason: string | null | undefined, calls: readonly ToolCall[]): ChatResult['finish'] =>
  reason === 'length' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';

const malformedCall = () => new ProviderError('bad_response', 'openai: a tool call has no function name');

/** A call's arguments as text: what the model wrote, as is (the caller parses and validates them). */
const argumentsText = (args: unknown): string =>
  typeof args === 'string' ? args : args == null ? '{}' : JSON.stringify(args);

/** The calls of a non-streamed answer (a call without a name is a malformed answer). */
function callsOf(message: ChatCompletionMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const [i, c] of (message.tool_calls ?? []).entries()) {
    const fn = c.type === 'function' || c.type === undefined ? c.function : undefined;
    if (typeof fn?.name !== 'string' || fn.name === '') throw malformedCall();
    calls.push({ id: c.id || `call_${i}`, name: fn.name, arguments: argumentsText(fn.arguments) });
  }
  return calls;
}

/** The calls of a stream as their pieces arrive: by index, the id and name once, the arguments in pieces. */
class StreamedCalls {
  private readonly byIndex = new Map<number, { id: string; name: string; arguments: string }>();

  add(pieces: ChatCompletionChunk.Choice.Delta.ToolCall[]): void {
    for (const [pos, p] of pieces.entries()) {
      const index = typeof p.index === 'number' ? p.index : pos;
      let c = this.byIndex.get(index);
      if (!c) {
        c = { id: '', name: '', arguments: '' };
        this.byIndex.set(index, c);
      }
      if (p.id && !c.id) c.id = p.id;
      if (p.function?.name && !c.name) c.name = p.function.name;
      if (p.function?.arguments != null) c.arguments += argumentsText(p.function.arguments);
    }
  }

  /** The calls in index order (a call that never got a name is a malformed answer). */
  done(): ToolCall[] {
    return [...this.byIndex.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => {
        if (!c.name) throw malformedCall();
        return { id: c.id || `call_${index}`, name: c.name, arguments: c.arguments || '{}' };
      });
  }
}

async function complete(client: OpenAI, req: ChatRequest, ownApi: boolean): Promise<ChatResult> {
  try {
    const r = await client.chat.completions.create({ ...params(req, ownApi), stream: false }, { signal: req.signal });
    const choice = r.choices?.[0];
    const message = choice?.message;
    // With tool calls the content may be null; without, an answer with no text is malformed.
    const toolCalls = message ? callsOf(message) : [];
    const content = message?.content;
    if (!choice || !(typeof content === 'string' || (content == null && toolCalls.length > 0))) {
      throw new ProviderError('bad_response', 'openai: the answer has no message');
    }
    const text = content ?? '';
    const reported = { input: r.usage?.prompt_tokens, output: r.usage?.completion_tokens };
    const usage = usageOf(req, text, reported, toolCalls);
    checkJson('openai', req, text, usage);
    return { text, usage, model: r.model ?? req.model, finish: finishOf(choice.finish_reason, toolCalls), toolCalls };
  } catch (err) {
    throw toProviderError(err, {
      kind: 'openai',
      errors: ERRORS,
      signal: req.signal,
      tools: offersTools(req),
    });
  }
}

async function stream(client: OpenAI, req: ChatRequest, timeoutMs: number, ownApi: boolean): Promise<ChatResult> {
  const watch = new StreamWatch(timeoutMs, req.signal);
  let text = '';
  let began = false;
  let finish: string | null = null;
  let model = req.model;
  let reported: { input?: number; output?: number } = {};
  const calls = new StreamedCalls();
  const partial = () => (began ? { text, usage: usageOf(req, text, reported) } : null);
  try {
    const chunks = await client.chat.completions.create(
      { ...params(req, ownApi), stream: true, stream_options: { include_usage: true } },
      { signal: watch.signal },
    );
    began = true;
    watch.touch();
    for await (const chunk of chunks) {
      watch.touch();
      if (chunk.model) model = chunk.model;
      if (chunk.usage) reported = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
      const choice = chunk.choices?.[0];
      const piece = choice?.delta?.content;
      if (piece) {
        text += piece;
        req.onDelta?.(piece);
      }
      if (choice?.delta?.tool_calls) calls.add(choice.delta.tool_calls);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    if (watch.stopped) throw new Error('stopped');
    const done = partial()!;
    if (finish === null) throw brokeOff('openai', done);
    const toolCalls = calls.done();
    const usage = usageOf(req, text, reported, toolCalls);
    checkJson('openai', req, text, usage);
    return { text, usage, model, finish: finishOf(finish, toolCalls), toolCalls };
  } catch (err) {
    throw toProviderError(err, {
      kind: 'openai',
      errors: ERRORS,
      signal: req.signal,
      stalled: watch.stalled,
      partial: partial(),
      tools: offersTools(req),
    });
  } finally {
    watch.dispose();
  }
}

async function embed(client: OpenAI, input: string[], model: string, signal?: AbortSignal): Promise<EmbeddingResult> {
  try {
    // Floats, not the SDK's default base64: not every compatible server encodes base64.
    const r = await client.embeddings.create({ model, input, encoding_format: 'float' }, { signal });
    const vectors = [...r.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    if (vectors.length !== input.length || !vectors.every(Array.isArray)) {
      throw new ProviderError('bad_response', 'openai: the embeddings do not match the input');
    }
    const reported = r.usage?.prompt_tokens;
    const usage =
      typeof reported === 'number'
        ? { input_tokens: reported, output_tokens: 0, estimated: false }
        : { input_tokens: tokensOf(input.join('').length), output_tokens: 0, estimated: true };
    return { vectors, usage, model: r.model ?? model };
  } catch (err) {
    throw toProviderError(err, { kind: 'openai', errors: ERRORS, signal });
  }
}

/** What a keyless OpenAI-compatible server is sent as its key. */
const NO_KEY = 'no-key';

export function createOpenAiProvider(options: ProviderOptions): AiProvider {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const ownApi = options.baseUrl === null;
  const client = new OpenAI({
    // A server that takes no key (Ollama, llama.cpp) still gets one: the SDK refuses to start
    // without, and such a server ignores the header.
    apiKey: options.apiKey || NO_KEY,
    // Never OPENAI_BASE_URL / OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment: the settings say which.
    baseURL: options.baseUrl ?? VENDOR_URL,
    organization: null,
    project: null,
    timeout: timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    // The SDK's logger would print a malformed stream's lines (the answer) to the console.
    logLevel: 'off',
  });
  return {
    kind: 'openai',
    chat: (req) => (req.onDelta ? stream(client, req, timeoutMs, ownApi) : complete(client, req, ownApi)),
    embed: (input, model, signal) => embed(client, input, model, signal),
  };
}
