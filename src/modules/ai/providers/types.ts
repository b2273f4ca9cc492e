// One interface for every language model provider (docs/ai.md). Two implementations on the
// official SDKs: openai.ts (any OpenAI-compatible server: chat completions and embeddings) and
// anthropic.ts (Anthropic messages). Features never see an SDK: they call run.ts, which picks the
// provider (the instance's, or the workspace's own key), checks the spend, calls, and meters.

export type ProviderKind = 'openai' | 'anthropic';

/**
 * One turn of the conversation sent to the model. `assistant` turns may carry the tool calls the
 * model made; each call is answered by one `tool` turn (its result as text, usually JSON) with the
 * call's id. OpenAI sends these as `tool_calls` / `role: tool` messages, Anthropic as `tool_use` /
 * `tool_result` content blocks.
 */
export type ChatTurn =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; callId: string; name: string; content: string; isError?: boolean };

/** A function the model may call (gaps.md "Assistant"): its name, what it does, its arguments' JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON Schema of type object (TypeBox's output). */
  parameters: Record<string, unknown>;
}

/** A call the model made: `arguments` is the JSON text it wrote (not yet parsed or validated). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A JSON schema the answer must match (the provider's structured-output mode where it has one). */
export interface JsonOutput {
  name: string;
  schema: Record<string, unknown>;
}

export interface ChatRequest {
  model: string;
  /** The instructions: ours alone, never text a customer wrote (prompts.ts delimits that as data). */
  system: string;
  messages: ChatTurn[];
  /** Upper bound on the answer's tokens. */
  maxTokens: number;
  temperature?: number;
  /** Ask for JSON matching this schema; the answer's `text` is then that JSON. */
  json?: JsonOutput;
  /** Functions the model may call (not with `json`); the answer's `toolCalls` holds its calls. */
  tools?: ToolSpec[];
  /** Called with each piece of text as the provider streams it (the call streams when set). */
  onDelta?: (text: string) => void;
  /** Aborting stops the provider call (the client went away, or the server is stopping). */
  signal?: AbortSignal;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /**
   * True when the provider did not report the counts (an aborted stream, a server that sends no
   * usage) and they were estimated from the text (about 4 characters a token).
   */
  estimated: boolean;
}

export interface ChatResult {
  text: string;
  usage: Usage;
  /** The model that answered, as the provider names it. */
  model: string;
  /** stop: the model finished; length: maxTokens was reached; tool_calls: it wants tool results. */
  finish: 'stop' | 'length' | 'tool_calls';
  /** The tools the model called (empty when none; only with `tools` in the request). */
  toolCalls: ToolCall[];
}

export interface EmbeddingResult {
  vectors: number[][];
  usage: Usage;
  model: string;
}

/**
 * Why a call failed. auth: the key was refused (401/403: an own key is turned off and admins get
 * ai_key_failed); rate_limited / unavailable: 429 or 5xx after the retries; timeout; bad_response:
 * a malformed answer or stream; aborted: the caller's signal; refused: 4xx other than those
 * (bad model id, context too long); unsupported: the model or server cannot use tools (a 4xx
 * naming tools on a request with `tools`: the assistant answers 501 ai_unsupported).
 */
export type ProviderFailure =
  | 'auth'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'bad_response'
  | 'aborted'
  | 'refused'
  | 'unsupported';

export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    /** For logs and the ai_key_failed notice: never the key, never the prompt. */
    message: string,
    /** What was generated before the failure (an aborted stream is charged for this). */
    readonly partial: { text: string; usage: Usage } | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface ProviderOptions {
  kind: ProviderKind;
  apiKey: string;
  /** OpenAI-compatible servers: `{baseUrl}/chat/completions`; Anthropic: the API's origin. Null: the vendor's own. */
  baseUrl: string | null;
  /** Per attempt, ms (default 60,000). */
  timeoutMs?: number;
  /** Retries on 408, 409, 429 (honouring retry-after) and 5xx, with backoff and jitter (default 2). */
  maxRetries?: number;
}

export interface AiProvider {
  readonly kind: ProviderKind;
  chat(req: ChatRequest): Promise<ChatResult>;
  /** Null when the provider has no embeddings (Anthropic). */
  embed: ((input: string[], model: string, signal?: AbortSignal) => Promise<EmbeddingResult>) | null;
}
