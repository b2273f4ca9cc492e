// How an AI route answers (interface.md "AI" rule 7): JSON, or with `Accept: text/event-stream`
// (draft, ask, rewrite) an event stream: `event: delta` with each piece of text as the provider
// sends it (written at once, one `data:` line per line of the piece), then one `event: done` whose
// data is the JSON the route answers without streaming.
//
// The stream starts with the first piece: an error before it (404, 422, 402, a provider that
// failed before its first token) is the normal JSON error response; an error after it is one
// `event: error` with the error body, and the stream ends. A client that goes away (the response
// closes before the answer ended) aborts the call through `signal`: runAi stops the provider and
// meters the call as cancelled. So does the service shutting down (its streams end with a 503).
//
// The hijacked reply keeps the headers the app's hooks set so far (RateLimit-*), plus
// x-request-id, which the app's onSend hook would add to any other answer.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorBody } from '../../../platform/http/errors.js';
import { ProviderError } from '../providers/types.js';

/** What a feature's call gets: where streamed text goes (streaming only), and its stop signal. */
export interface CallIo {
  onDelta?: (text: string) => void;
  signal: AbortSignal;
}

/** Calls in flight, aborted when the service shuts down (routes.ts). */
export class InFlight {
  private readonly calls = new Set<AbortController>();
  add(c: AbortController): void {
    this.calls.add(c);
  }
  delete(c: AbortController): void {
    this.calls.delete(c);
  }
  abortAll(): void {
    for (const c of this.calls) c.abort(SHUTDOWN);
  }
}
const SHUTDOWN = 'shutdown';

/** Was the call stopped because the service is shutting down (not because its client left)? */
export function isShutdown(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === SHUTDOWN;
}

/** Does the request ask for an event stream? */
export function wantsStream(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

/** An SSE frame: the event name, then one `data:` line per line of the text (CRLF, CR or LF). */
export function frame(event: string, text: string): string {
  return `event: ${event}\n${text
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('')}\n`;
}

const isAbort = (err: unknown) => err instanceof ProviderError && err.failure === 'aborted';

/** The error body of anything thrown, logged like the app's error handler logs a 5xx. */
export function errorBody(req: FastifyRequest, err: unknown): ErrorBody {
  if (err instanceof ApiError) return err.toBody();
  const e = err instanceof Error ? err : new Error(String(err));
  req.log.error(
    { reqId: req.id, error: { type: e.constructor?.name ?? 'Error', message: e.message.slice(0, 200) } },
    'request failed',
  );
  return new ApiError('internal_error', `Something went wrong on our side (request ${req.id}).`).toBody();
}

/** A stream that starts on its first write (the assistant's stream.ts holds its first event back). */
export class EventStream {
  started = false;
  constructor(
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {}

  private start(): void {
    if (this.started) return;
    this.started = true;
    const reply = this.reply;
    reply.hijack();
    reply.raw.socket?.setNoDelay(true);
    const kept: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) kept[k] = v;
    reply.raw.writeHead(200, {
      ...kept,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-request-id': this.req.id,
    });
  }

  write(event: string, text: string): void {
    this.start();
    if (!this.reply.raw.writableEnded && !this.reply.raw.destroyed) this.reply.raw.write(frame(event, text));
  }

  end(): void {
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
  }
}

/** The client went away before an answer began: nothing to send, the reply is settled. */
export function closeQuietly(reply: FastifyReply): FastifyReply {
  reply.hijack();
  if (!reply.raw.writableEnded) reply.raw.end();
  return reply;
}

/**
 * Runs a feature's call and answers: JSON (the value returned, serialized by the route's
 * schema), or an event stream when `streamable` and the client asks for one.
 */
export async function respond<T>(
  req: FastifyRequest,
  reply: FastifyReply,
  inFlight: InFlight,
  streamable: boolean,
  work: (io: CallIo) => Promise<T>,
): Promise<T | FastifyReply> {
  const control = new AbortController();
  let finished = false;
  const onClose = () => {
    if (!finished) control.abort();
  };
  // The response's 'close', not the request's: Node closes a request once its body is read, while
  // the response closes when the answer ended or the connection went away.
  reply.raw.on('close', onClose);
  inFlight.add(control);
  const stream = streamable && wantsStream(req) ? new EventStream(req, reply) : null;
  try {
    const io: CallIo = stream
      ? { onDelta: (text) => text !== '' && stream.write('delta', text), signal: control.signal }
      : { signal: control.signal };
    const result = await work(io);
    finished = true;
    if (!stream) return result;
    stream.write('done', JSON.stringify(result));
    stream.end();
    return reply;
  } catch (err) {
    finished = true;
    const shutdown = isShutdown(control.signal);
    if (isAbort(err) && !shutdown) {
      if (!stream?.started) return closeQuietly(reply);
      stream.end();
      return reply;
    }
    const failure = shutdown ? new ApiError('unavailable', 'The service is restarting; try again.') : err;
    if (!stream?.started) throw failure;
    stream.write('error', JSON.stringify(errorBody(req, failure)));
    stream.end();
    return reply;
  } finally {
    inFlight.delete(control);
    reply.raw.off('close', onClose);
  }
}
