// Per-credential rate limits (docs/api.md "Rate limits"): RATE_LIMIT_PER_MINUTE requests a
// minute for each API key, signed-in session or (unauthenticated) IP address; writes
// count double. Counters live in Redis when REDIS_URL is set, so every process shares them;
// while Redis cannot be reached, each process counts on its own (logged once per outage) and
// goes back to the shared counters as soon as Redis answers again.
import { createRequire } from 'node:module';
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
    ...(opts.redis ? { store: sharedOrLocalStore(opts.redis, app.log) as never } : {}),
    skipOnError: true, // a failing store must not take the API down with it
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

// ---------------------------------------------------------------------------------------------
// Shared counters in Redis, local ones while Redis is out of reach.

type Count = { current: number; ttl: number };
type Done = (err: Error | null, res: Count | null) => void;
interface Store {
  incr(key: string, cb: Done, timeWindow: number, max: number): void;
  child(routeOptions: object): Store;
}
interface StoreParams {
  continueExceeding: boolean;
  exponentialBackoff: boolean;
}

const REDIS_FALLBACK_LOG = 'rate limits: Redis unreachable, each process counts on its own until it is back';
const REDIS_BACK_LOG = 'rate limits: Redis reachable again, counters shared';

/**
 * The plugin's store (a class it instantiates): the plugin's own Redis store while Redis is
 * ready, its local (in-process) store while it is not or a command fails. The switch is logged
 * once each way (warn when falling back, info when shared again).
 */
function sharedOrLocalStore(redis: Redis, log: { warn(msg: string): void; info(msg: string): void }) {
  const require = createRequire(import.meta.url);
  const RedisStore = require('@fastify/rate-limit/store/RedisStore') as new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    redis: Redis,
    key: string,
  ) => Store;
  const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    cache: number,
  ) => Store;
  let local = false;
  const fallBack = () => {
    if (local) return;
    local = true;
    log.warn(REDIS_FALLBACK_LOG);
  };
  const shared = () => {
    if (!local) return;
    local = false;
    log.info(REDIS_BACK_LOG);
  };
  return class SharedOrLocal implements Store {
    readonly #shared: Store;
    readonly #own: Store;
    constructor(params: StoreParams, pair?: { shared: Store; own: Store }) {
      this.#shared =
        pair?.shared ?? new RedisStore(params.continueExceeding, params.exponentialBackoff, redis, 'svc-rl:');
      this.#own = pair?.own ?? new LocalStore(params.continueExceeding, params.exponentialBackoff, 5000);
    }
    incr(key: string, cb: Done, timeWindow: number, max: number): void {
      if (redis.status !== 'ready') {
        fallBack();
        this.#own.incr(key, cb, timeWindow, max);
        return;
      }
      this.#shared.incr(
        key,
        (err, res) => {
          if (err) {
            fallBack();
            this.#own.incr(key, cb, timeWindow, max);
            return;
          }
          shared();
          cb(null, res);
        },
        timeWindow,
        max,
      );
    }
    child(routeOptions: StoreParams): Store {
      return new SharedOrLocal(routeOptions, {
        shared: this.#shared.child(routeOptions),
        own: this.#own.child(routeOptions),
      });
    }
  };
}
