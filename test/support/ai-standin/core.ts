// The machinery both stand-ins share (index.ts documents the API): the HTTP server, the script of
// answers, the record of requests, and how each kind of answer is played on the wire. A vendor's
// file (openai.ts, anthropic.ts) says only what its bytes look like.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedUsage {
  input_tokens?: number;
  output_tokens?: number;
}

/**
 * A tool call a scripted answer makes. `arguments`: an object (any non-string) is sent as its JSON
 * text; a string is sent as is (so a test can send malformed arguments). `id` defaults to a
 * vendor-like id (OpenAI `call_…`, Anthropic `toolu_…`).
 */
export interface SayToolCall {
  id?: string;
  name: string;
  arguments: unknown;
}

/** What a text (or JSON) answer says, and how it is split on the wire when streamed. */
export interface Say {
  /** The whole answer; for `json`, its JSON text is streamed. Default: DEFAULT_TEXT, or none with `toolCalls`. */
  text?: string;
  /**
   * Tool calls, after the text (if any), in the vendor's wire format; streamed, each call's
   * arguments are cut into pieces. The finish is then the vendor's tool-call reason.
   */
  toolCalls?: SayToolCall[];
  /** A JSON value: OpenAI answers it as the message's content, Anthropic as the forced tool's input. */
  json?: unknown;
  /** How the streamed answer is cut into pieces (default: about 3 pieces on word boundaries). */
  chunks?: string[];
  /** Counts to report (default: ~4 characters a token). `null`: the server reports none. */
  usage?: ScriptedUsage | null;
  /**
   * Why the answer ended (default stop, or tool_calls with `toolCalls`; `length` = maxTokens
   * reached). `stop` with `toolCalls` plays a server that does not say tool_calls (older Ollama).
   */
  finish?: 'stop' | 'length' | 'tool_calls';
}

/** A test holds a gate's answer after its first piece and lets it go with `release()`. */
export interface Gate {
  release(): void;
  /** Settles when the first piece was sent (the answer is then held). */
  readonly reached: Promise<void>;
  readonly opened: Promise<void>;
  markReached(): void;
}

export function gate(): Gate {
  let release!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((r) => {
    release = r;
  });
  const reached = new Promise<void>((r) => {
    reach = r;
  });
  return { release, opened, reached, markReached: reach };
}

/**
 * One scripted answer. A `Say` plays normally; the others:
 * - `{status, body?, headers?}`: that HTTP status (the body defaults to the vendor's error body);
 * - `{hang: true}`: never answers (the client's timeout or abort ends it);
 * - `{malformed: true, ...Say}`: non-streamed, a JSON body cut short; streamed, the first piece
 *   then a line that is not JSON;
 * - `{cut: n, ...Say}`: streamed, the head and n pieces then the socket is destroyed; non-streamed,
 *   half the body then the same;
 * - `{gate, ...Say}`: streamed, the first piece then waits for `gate.release()`; non-streamed, the
 *   whole answer after the release.
 */
export type Answer =
  | Say
  | Reply
  | { hang: true }
  | ({ malformed: true } & Say)
  | ({ cut: number } & Say)
  | ({ gate: Gate } & Say);

export interface Recorded {
  method: string;
  /** The path without the query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (null without one). */
  body: any;
  /** Date.now() when the request arrived. */
  at: number;
  /** The client closed the connection before the answer ended (an abort, a timeout). */
  closedEarly: boolean;
  /** Settles when the answer ended or the client went away. */
  done: Promise<void>;
}

/** A tool call as played: its id, name, the arguments as scripted and as text, and their streamed pieces. */
export interface PlayedCall {
  id: string;
  name: string;
  /** The scripted value (an object, or the text as given). */
  value: unknown;
  /** The arguments' text on the wire. */
  arguments: string;
  pieces: string[];
}

/** A normalised text answer a vendor writes: the pieces, the calls, the counts, the reason it ended. */
export interface Play {
  text: string;
  json: unknown;
  pieces: string[];
  calls: PlayedCall[];
  usage: { input_tokens: number; output_tokens: number } | null;
  finish: 'stop' | 'length' | 'tool_calls';
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A vendor's wire format. */
export interface Dialect {
  /** The credential the request carries (null: none). */
  key(req: Recorded): string | null;
  /** The vendor's error body for a status (401 on a refused key, 429, 500, …). */
  errorBody(status: number, message?: string): unknown;
  /** Routes other than the scripted ones (models, embeddings); undefined when not handled. */
  other(req: Recorded): Reply | 'scripted' | undefined;
  /** A request's fault the vendor refuses with 400 (null when it is well formed). */
  invalid(req: Recorded): string | null;
  /** Did the client ask for a stream? */
  streams(req: Recorded): boolean;
  /** The non-streamed answer's body. */
  body(req: Recorded, play: Play): unknown;
  /** The streamed answer's SSE frames: what precedes the pieces, one frame per piece, and the end. */
  frames(req: Recorded, play: Play): { head: string[]; pieces: string[]; tail: string[] };
  /** A frame that is not JSON, where a piece would be. */
  garbage: string;
  /** Characters of the prompt (system and messages): the input count when none is scripted. */
  inputChars(req: Recorded): number;
  /** The JSON schema the request asks the answer to match (null: free text). */
  schema(req: Recorded): unknown;
  /** A new vendor-like tool call id (call_…, toolu_…). */
  callId(): string;
}

export interface StandInCore {
  /** Every request, in order of arrival. */
  readonly requests: Recorded[];
  /** The keys accepted (Bearer / x-api-key); null accepts any non-empty key. */
  keys: string[] | null;
  /** The answer when the queue is empty (default `{}`: DEFAULT_TEXT, or a sample of the JSON schema asked for). */
  fallback: (req: Recorded) => Answer;
  /** Queue answers for the next chat requests, in order. */
  answer(...answers: Answer[]): void;
  /** Answers still queued. */
  pending(): number;
  /** Resolves with the n-th request (0-based) once it has arrived. */
  request(n: number): Promise<Recorded>;
  /** Between tests: forgets the requests and the queued answers, and restores the default fallback. */
  reset(): void;
  stop(): Promise<void>;
}

/** Stand-ins started and not stopped yet (test/support/setup.ts stops and reports what a file left). */
export const runningStandIns = new Set<StandInCore>();

export const estimateTokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

/** Splits a text into about three pieces on word boundaries (one piece when it is short). */
export function splitText(text: string): string[] {
  const words = text.match(/\S+\s*/g) ?? [text];
  if (words.length < 3) return [text];
  const per = Math.ceil(words.length / 3);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(''));
  return out;
}

/** Cuts a call's arguments into about three pieces anywhere (the vendors cut JSON mid-token). */
export function splitArguments(text: string): string[] {
  if (text.length < 3) return text === '' ? [] : [text];
  const per = Math.ceil(text.length / 3);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += per) out.push(text.slice(i, i + per));
  return out;
}

export const DEFAULT_TEXT = 'This is the stand-in answer.';

function toPlay(say: Say, inputChars: number, schema: unknown, callId: () => string): Play {
  const calls: PlayedCall[] = (say.toolCalls ?? []).map((c) => {
    const text = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {});
    return { id: c.id ?? callId(), name: c.name, value: c.arguments, arguments: text, pieces: splitArguments(text) };
  });
  const json = say.json !== undefined ? say.json : say.text === undefined && schema ? sampleOf(schema) : undefined;
  const text = json !== undefined ? JSON.stringify(json) : (say.text ?? (calls.length ? '' : DEFAULT_TEXT));
  const pieces = say.chunks ?? (text === '' && calls.length ? [] : splitText(text));
  const callChars = calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const usage =
    say.usage === null
      ? null
      : {
          input_tokens: say.usage?.input_tokens ?? estimateTokens(inputChars),
          output_tokens: say.usage?.output_tokens ?? estimateTokens(text.length + callChars),
        };
  return { text, json, pieces, calls, usage, finish: say.finish ?? (calls.length ? 'tool_calls' : 'stop') };
}

const sse = (res: ServerResponse, frame: string) => res.write(frame);

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  const raw = Buffer.concat(parts).toString('utf8');
  if (raw === '') return null;
  try {
    return JSON.parse(raw);
  } catch {
    return Symbol.for('bad-json');
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export interface PlayContext {
  dialect: Dialect;
  rec: Recorded;
  res: ServerResponse;
  answer: Answer;
  play: (say: Say) => Play;
}

/** Plays one scripted answer on the wire. */
export async function playAnswer({ dialect, rec, res, answer, play }: PlayContext): Promise<void> {
  if ('status' in answer) {
    send(res, answer.status, answer.body ?? dialect.errorBody(answer.status), answer.headers);
    return;
  }
  if ('hang' in answer) return;
  const p = play(answer);
  const g = 'gate' in answer ? answer.gate : null;
  if (!dialect.streams(rec)) {
    const text = JSON.stringify(dialect.body(rec, p));
    if ('malformed' in answer) return send(res, 200, text.slice(0, Math.floor(text.length / 2)));
    if ('cut' in answer) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      res.write(text.slice(0, Math.floor(text.length / 2)));
      return void res.destroy();
    }
    if (g) {
      g.markReached();
      await g.opened;
    }
    return send(res, 200, text);
  }
  const { head, pieces, tail } = dialect.frames(rec, p);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const f of head) sse(res, f);
  if ('cut' in answer) {
    for (const f of pieces.slice(0, answer.cut)) sse(res, f);
    // Let the written pieces reach the client before the connection breaks.
    await new Promise<void>((r) => res.write('', () => r()));
    return void res.socket?.destroy();
  }
  if ('malformed' in answer) {
    if (pieces[0]) sse(res, pieces[0]);
    sse(res, dialect.garbage);
    return void res.end();
  }
  for (const [i, f] of pieces.entries()) {
    sse(res, f);
    if (i === 0 && g) {
      g.markReached();
      await g.opened;
      if (res.destroyed) return;
    }
  }
  if (pieces.length === 0 && g) {
    g.markReached();
    await g.opened;
  }
  for (const f of tail) sse(res, f);
  res.end();
}

export interface CoreOptions {
  keys?: string[] | null;
  fallback?: (req: Recorded) => Answer;
}

/**
 * Starts a stand-in on 127.0.0.1 (a free port) that speaks `dialect`: `extra` (the vendor's own
 * members) becomes the stand-in, with the core's members added.
 */
export async function startCore<T extends object>(
  extra: T,
  dialectOf: (s: T & StandInCore) => Dialect,
  options: CoreOptions,
): Promise<{ standIn: T & StandInCore; origin: string }> {
  const queue: Answer[] = [];
  const waiters: Array<{ n: number; resolve: (r: Recorded) => void }> = [];
  const sockets = new Set<Socket>();
  const core: T & StandInCore = Object.assign(extra, {
    requests: [] as Recorded[],
    keys: options.keys ?? null,
    fallback: options.fallback ?? (() => ({})),
    answer: (...a: Answer[]) => void queue.push(...a),
    pending: () => queue.length,
    request: (n: number) =>
      new Promise<Recorded>((resolve) => {
        const have = core.requests[n];
        if (have) resolve(have);
        else waiters.push({ n, resolve });
      }),
    reset: () => {
      core.requests.length = 0;
      queue.length = 0;
      waiters.length = 0;
      core.fallback = options.fallback ?? (() => ({}));
    },
    stop: async () => {
      runningStandIns.delete(core);
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  });
  const dialect = dialectOf(core);
  runningStandIns.add(core);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readJson(req);
    let settle!: () => void;
    const rec: Recorded = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      headers: req.headers,
      body: typeof body === 'symbol' ? null : body,
      at: Date.now(),
      closedEarly: false,
      done: new Promise<void>((r) => {
        settle = r;
      }),
    };
    res.on('close', () => {
      if (!res.writableFinished) rec.closedEarly = true;
      settle();
    });
    core.requests.push(rec);
    for (const w of waiters.filter((x) => x.n === core.requests.length - 1)) w.resolve(rec);

    const key = dialect.key(rec);
    if (!key || (core.keys !== null && !core.keys.includes(key))) return send(res, 401, dialect.errorBody(401));
    if (typeof body === 'symbol') return send(res, 400, dialect.errorBody(400, 'The request body is not valid JSON.'));
    const routed = dialect.other(rec);
    if (routed === undefined) return send(res, 404, dialect.errorBody(404, `Unknown path ${rec.path}.`));
    if (routed !== 'scripted')
      return send(res, routed.status, routed.body ?? dialect.errorBody(routed.status), routed.headers);
    const invalid = dialect.invalid(rec);
    if (invalid) return send(res, 400, dialect.errorBody(400, invalid));
    const answer = queue.shift() ?? core.fallback(rec);
    const play = (say: Say) => toPlay(say, dialect.inputChars(rec), dialect.schema(rec), dialect.callId);
    await playAnswer({ dialect, rec, res, answer, play });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { standIn: core, origin: `http://127.0.0.1:${port}` };
}

/** A value that matches a JSON schema, simply (first enum value, "stand-in" strings, 1 for numbers). */
export function sampleOf(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('const' in s) return s.const;
  const anyOf = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(anyOf)) return sampleOf(anyOf[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleOf(v)]));
    }
    case 'array':
      return s.minItems ? [sampleOf(s.items)] : [];
    case 'string':
      return 'stand-in';
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}
