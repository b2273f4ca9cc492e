// Per-credential rate limits (docs/api.md "Rate limits"): RATE_LIMIT_PER_MINUTE requests a
// minute for each API key, signed-in session or (unauthenticated) IP address; writes
// count double. Counters live in Redis when REDIS_URL is set, so every process shares them.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: not counted (health checks, documents). */
    rateLimited?: boolean;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function bucketOf(req: FastifyRequest): string {
  const a = req.auth;
  if (a?.kind === 'key') return `k:${a.ctx.actor.kind === 'api_key' ? a.ctx.actor.apiKeyId : ''}`;
  if (a?.kind === 'user') return `s:${a.user.sessionId}`;
  if (a?.kind === 'visitor') return `v:${a.visitor.visitorId}`;
  return `ip:${req.ip}`;
}

export async function installRateLimit(
  app: FastifyInstance,
  opts: {
    perMinute: number;
    redis: Redis | null;
    /** The window RATE_LIMIT_PER_MINUTE counts in: a minute; tests shorten it (the app's countdown). */
    windowMs?: number;
  },
) {
  await app.register(rateLimit, {
    global: false,
    ...(opts.redis ? { redis: opts.redis, nameSpace: 'svc-rl:' } : {}),
    skipOnError: true, // a Redis outage must not take the API down with it
  });
  const limiter = app.createRateLimit({
    max: opts.perMinute,
    timeWindow: opts.windowMs ?? 60_000,
    keyGenerator: bucketOf,
  });

  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config.rateLimited === false) return;
    let r = await limiter(req);
    if (!r.isAllowed && WRITES.has(req.method) && !r.isExceeded) r = await limiter(req);
    if (r.isAllowed) return;
    // Every counted answer carries the RateLimit-* headers; the error (and its stack) is made
    // only for the one that is over.
    if (r.isExceeded) throw overLimit(reply, r, `Too many requests: at most ${r.max} a minute.`);
    rateHeaders(reply, r);
  });
}

/** What a limiter made by `app.createRateLimit` answers when it counted a request. */
export interface LimiterCount {
  max: number;
  remaining: number;
  ttlInSeconds: number;
}

/** The RateLimit-* headers of a counted request on the reply; returns the seconds to the reset. */
function rateHeaders(reply: FastifyReply, r: LimiterCount): string {
  const reset = String(Math.max(0, r.ttlInSeconds));
  reply.header('ratelimit-limit', String(r.max));
  reply.header('ratelimit-remaining', String(r.remaining));
  reply.header('ratelimit-reset', reset);
  return reset;
}

/**
 * The RateLimit-* headers of a counted request on the reply, and the 429 rate_limited (with
 * Retry-After) to throw when its limiter says it is over: `what` says which limit, the retry
 * time follows. Other limits (the chat widget's) use it too.
 */
export function overLimit(reply: FastifyReply, r: LimiterCount, what: string): ApiError {
  const reset = rateHeaders(reply, r);
  return new ApiError('rate_limited', `${what} Retry in ${reset} s.`, undefined, { 'retry-after': reset });
}
