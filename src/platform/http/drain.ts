// An answer sent before its request's body has all arrived: a refused upload (413 too_large as
// soon as the limit is passed, or at once from the declared Content-Length), or a 401, 415 or
// 422 decided before the body was read. Closing the connection right after such an answer resets
// it while the client is still sending, and the client loses the answer: Node's fetch fails with
// EPIPE, browsers show a network error. So the rest of the body is read and thrown away, never
// kept, as nginx's lingering close does, within bounds: at most `factor` times the largest body
// the route accepts (at least `minBytes`), for at most `maxMs`. A body that ends within them
// leaves the connection usable for the next request; past either bound the connection is
// closed. A declared Content-Length already past the byte bound is not drained at all: the
// answer carries `Connection: close`.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface DrainBounds {
  /** Read at most this many times the route's body limit… */
  factor: number;
  /** …and at least this many bytes… */
  minBytes: number;
  /** …for at most this long after the answer. */
  maxMs: number;
}

export const DRAIN_BOUNDS: DrainBounds = { factor: 4, minBytes: 64 * 1024 * 1024, maxMs: 30_000 };

const declared = new WeakMap<IncomingMessage, number>();

/**
 * The largest body this request may have, for routes that read their body themselves (multipart
 * uploads and forms): the bound of the drain is taken from it. Routes whose body Fastify reads
 * have theirs from the route's bodyLimit.
 */
export function declareBodyLimit(req: FastifyRequest, bytes: number): void {
  declared.set(req.raw, bytes);
}

/** How many bytes of this request's body may be read and thrown away after its answer. */
function drainBudget(req: FastifyRequest, bounds: DrainBounds): number {
  const limit = declared.get(req.raw) ?? req.routeOptions.bodyLimit ?? 0;
  return Math.max(bounds.minBytes, bounds.factor * limit);
}

/**
 * The drains of one app: `start` is called as an answer is sent (onSend); `cutAll` closes the
 * connections still draining when the service shuts down (they would hold its close up).
 */
export class Drains {
  private readonly active = new Set<() => void>();

  constructor(private readonly bounds: DrainBounds = DRAIN_BOUNDS) {}

  /**
   * When the request's body has not all arrived, reads the rest and throws it away within the
   * bounds, so that the client, still sending, can read the answer; a `Connection: close` a
   * route set for that reason is dropped (the connection closes only past a bound).
   */
  start(req: FastifyRequest, reply: FastifyReply): void {
    const raw = req.raw;
    if (raw.complete || raw.destroyed) return;
    const budget = drainBudget(req, this.bounds);
    const length = Number(raw.headers['content-length']);
    if (Number.isFinite(length) && length > budget) {
      // It would be cut off anyway: spare both sides the transfer.
      reply.header('connection', 'close');
      return;
    }
    reply.removeHeader('connection');
    let read = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.removeListener('data', count);
      this.active.delete(cutOff);
    };
    const cutOff = () => {
      finish();
      raw.socket?.destroy();
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read > budget) cutOff();
    };
    const timer = setTimeout(cutOff, this.bounds.maxMs);
    timer.unref();
    this.active.add(cutOff);
    raw.once('end', finish);
    raw.once('close', finish);
    raw.once('error', finish);
    // Whatever was reading the body (a multipart parser that gave up, Fastify's body reader past
    // its limit) lets go of it; the bytes now only pass through the counter.
    raw.unpipe();
    raw.on('data', count);
    raw.resume();
  }

  cutAll(): void {
    for (const cut of [...this.active]) cut();
  }
}
