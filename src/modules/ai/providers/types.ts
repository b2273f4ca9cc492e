// One interface for every language model provider (docs/ai.md). Two implementations on the
// official SDKs: openai.ts (any OpenAI-compatible server: chat completions and embeddings) and
// anthropic.ts (Anthropic messages). Features never see an SDK: they call run.ts, which picks the
// provider (the instance's, or the workspace's own key), checks the spend, calls, and meters.

export type ProviderKind = 'openai' | 'anthropic';

export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
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
  /** stop: the model finished; length: maxTokens was reached. */
  finish: 'stop' | 'length';
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
 * (bad model id, context too long).
 */
export type ProviderFailure =
  | 'auth'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'bad_response'
  | 'aborted'
  | 'refused';

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
