// What both providers share: turning an SDK's failure into a ProviderError (never the key, never
// the prompt, never the vendor's message text, which may quote either), estimating usage the
// provider did not report, and the stream's watch (the caller's abort and an idle timeout).
import {
  type ChatRequest,
  type ChatTurn,
  ProviderError,
  type ProviderFailure,
  type ProviderKind,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from './types.js';

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;

/** About 4 characters a token. */
export const tokensOf = (chars: number) => Math.ceil(chars / 4);

/**
 * Characters of the prompt the model reads: the instructions, every turn (a call's arguments
 * included: the model reads its own calls back) and the tools' names, descriptions and schemas.
 */
export function chatChars(system: string, messages: readonly ChatTurn[], tools?: readonly ToolSpec[]): number {
  let n = system.length;
  for (const m of messages) {
    n += m.content.length;
    if (m.role === 'assistant') n += callsChars(m.toolCalls ?? []);
  }
  for (const t of tools ?? []) n += t.name.length + t.description.length + JSON.stringify(t.parameters).length;
  return n;
}

/** Characters of the calls a model wrote (their names and arguments). */
export const callsChars = (calls: readonly ToolCall[]) =>
  calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);

export const promptChars = (req: ChatRequest) => chatChars(req.system, req.messages, req.tools);

/**
 * The usage of an answer, from what the provider reported where it did, else estimated (the
 * output: its text and the calls it made).
 */
export function usageOf(
  req: ChatRequest,
  text: string,
  reported: { input?: number | null; output?: number | null },
  calls: readonly ToolCall[] = [],
): Usage {
  const estimated = reported.input == null || reported.output == null;
  return {
    input_tokens: reported.input ?? tokensOf(promptChars(req)),
    output_tokens: reported.output ?? tokensOf(text.length + callsChars(calls)),
    estimated,
  };
}

/** The classes of an SDK's errors (both official SDKs have the same ones). */
export interface SdkErrors {
  APIError: abstract new (...args: never[]) => Error & { status: number | undefined };
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
}

/** A failure by HTTP status, after the SDK's retries. */
export function failureOfStatus(status: number): ProviderFailure {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status === 409 || status >= 500) return 'unavailable';
  return 'refused';
}

/** A vendor's error code or type (`invalid_api_key`, `overloaded_error`) when it is a plain word. */
export function codeOf(err: unknown): string | null {
  const e = err as { code?: unknown; type?: unknown; error?: { type?: unknown; error?: { type?: unknown } } };
  for (const c of [e.code, e.type, e.error?.type, e.error?.error?.type]) {
    if (typeof c === 'string' && /^[a-z0-9_.-]{1,64}$/i.test(c)) return c;
  }
  return null;
}

/** A failure the vendor reported inside a stream (no status): by its error type. */
function failureOfStreamError(code: string | null): ProviderFailure {
  if (code === 'rate_limit_error' || code === 'rate_limit_exceeded') return 'rate_limited';
  if (code === 'overloaded_error' || code === 'api_error' || code === 'server_error') return 'unavailable';
  return 'bad_response';
}

export interface FailureContext {
  kind: ProviderKind;
  errors: SdkErrors;
  /** The caller's signal: aborted means the caller stopped the call. */
  signal?: AbortSignal;
  /** The stream stalled past the timeout (our own watch aborted it). */
  stalled?: boolean;
  /** What was generated before the failure (null when no answer had begun). */
  partial?: { text: string; usage: Usage } | null;
  /** The request offered tools (a 4xx naming tools is then `unsupported`). */
  tools?: boolean;
}

/**
 * A server that cannot use tools refuses a request offering them with a 4xx naming them: Ollama
 * 400 "<model> does not support tools", vLLM 400 "\"auto\" tool choice requires
 * --enable-auto-tool-choice …", llama.cpp "tools param requires --jinja flag", LM Studio similar,
 * OpenAI 400 "tools is not supported with this model". A 400 about the conversation's tool turns
 * (a result without its call) says no such thing and stays `refused`. Read only to classify: the
 * message is never passed on.
 */
const TOOLS = /\btool|function[_ ]call/i;
/** Saying it cannot, not that the conversation is malformed ("tool_use ids were found without …"). */
const CANNOT = /not support|n't support|unsupported|requires|not available|not enabled/i;

function namesTools(err: Error & { error?: unknown }): boolean {
  const body = err.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const texts = [err.message, body?.message, body?.error?.message].filter((t) => typeof t === 'string');
  return texts.some((t) => TOOLS.test(t as string) && CANNOT.test(t as string));
}

/** Any error of a provider call as a ProviderError with the right failure. */
export function toProviderError(err: unknown, ctx: FailureContext): ProviderError {
  if (err instanceof ProviderError) return err;
  const { kind, errors } = ctx;
  const partial = ctx.partial ?? null;
  const fail = (failure: ProviderFailure, why: string) => new ProviderError(failure, `${kind}: ${why}`, partial);
  if (ctx.signal?.aborted) return fail('aborted', 'the call was cancelled');
  if (ctx.stalled) return fail('timeout', 'the answer stopped arriving within the timeout');
  if (err instanceof errors.APIConnectionTimeoutError) return fail('timeout', 'no answer within the timeout');
  if (err instanceof errors.APIUserAbortError) return fail('aborted', 'the call was cancelled');
  if (err instanceof errors.APIConnectionError) return fail('unavailable', 'could not connect to the provider');
  if (err instanceof errors.APIError) {
    const code = codeOf(err);
    const suffix = code ? ` (${code})` : '';
    if (err.status === undefined) return fail(failureOfStreamError(code), `the stream reported an error${suffix}`);
    const failure = failureOfStatus(err.status);
    if (failure === 'refused' && ctx.tools && namesTools(err)) {
      return fail('unsupported', `the provider answered ${err.status}: the model or server cannot use tools`);
    }
    return fail(failure, `the provider answered ${err.status}${suffix}`);
  }
  return fail('bad_response', 'the answer was malformed or broke off');
}

/**
 * Watches a streamed answer: a signal for the SDK call that aborts when the caller's does, or
 * when no piece arrives within `timeoutMs` (the SDKs' timeout covers the wait for the headers
 * only; a stream that stalls afterwards would hang for ever).
 */
export class StreamWatch {
  readonly controller = new AbortController();
  stalled = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.controller.abort();

  constructor(
    private readonly timeoutMs: number,
    private readonly caller?: AbortSignal,
  ) {
    if (caller?.aborted) this.controller.abort();
    caller?.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The stream began (the SDK's timeout and retries are behind it), or a piece arrived: the timeout starts again. */
  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.stalled = true;
      this.controller.abort();
    }, this.timeoutMs);
  }

  /** The caller's abort or a stall ended the stream early (the SDK ends its loop without an error then). */
  get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onAbort);
  }
}

/** The answer broke off (no finish reported): a bad_response carrying what arrived. */
export const brokeOff = (kind: ProviderKind, partial: { text: string; usage: Usage }) =>
  new ProviderError('bad_response', `${kind}: the stream ended before the answer was complete`, partial);

/** A JSON answer that is not JSON is a bad_response (the features parse it as their schema's). */
export function checkJson(kind: ProviderKind, req: ChatRequest, text: string, usage: Usage): void {
  if (!req.json) return;
  try {
    JSON.parse(text);
  } catch {
    throw new ProviderError('bad_response', `${kind}: the answer is not the JSON asked for`, { text, usage });
  }
}
