// Sign-in protection, part one: failed-attempt limits per account and per IP address (by default
// 10 per account and 30 per address in 15 minutes; docs/api.md "Rate limits"). One guard per
// process, a field of Deps (deps.signInGuard). The human-verification challenge is protection.ts.
//
// The limit counts failures in a sliding window. An attempt first takes a slot (so a burst of
// parallel guesses cannot all pass a check made before any of them failed), then gives it back
// when the password or code was right. In Redis a window is a sorted set per key, changed with
// one MULTI (ZREMRANGEBYSCORE, ZADD, ZCARD, ZRANGE, PEXPIRE) through ioredis; every process
// shares it. Without Redis, or while Redis fails, each process keeps its own counts in memory.
import { createHash, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import { ApiError } from '../../platform/http/errors.js';

export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until one more attempt is allowed (0 when allowed). */
  retryAfterMs: number;
}

interface Backend {
  take(key: string, id: string, max: number, now: number): Promise<Verdict>;
  give(key: string, id: string): Promise<void>;
}

/** Sliding-window log in memory (one process). Bounded: the oldest keys go first past `maxKeys`. */
class MemoryBackend implements Backend {
  readonly #keys = new Map<string, Map<string, number>>();
  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 200_000,
  ) {}

  async take(key: string, id: string, max: number, now: number): Promise<Verdict> {
    let log = this.#keys.get(key);
    if (!log) {
      this.#sweep(now);
      log = new Map();
      this.#keys.set(key, log);
    }
    for (const [k, t] of log) if (t <= now - this.windowMs) log.delete(k);
    if (log.size >= max) {
      const oldest = Math.min(...log.values());
      return { allowed: false, limit: max, remaining: 0, retryAfterMs: Math.max(1, oldest + this.windowMs - now) };
    }
    log.set(id, now);
    return { allowed: true, limit: max, remaining: max - log.size, retryAfterMs: 0 };
  }

  async give(key: string, id: string): Promise<void> {
    const log = this.#keys.get(key);
    log?.delete(id);
    if (log && log.size === 0) this.#keys.delete(key);
  }

  #sweep(now: number) {
    if (this.#keys.size < this.maxKeys) return;
    for (const [key, log] of this.#keys) {
      for (const [k, t] of log) if (t <= now - this.windowMs) log.delete(k);
      if (log.size === 0) this.#keys.delete(key);
    }
    // Still full: forget the keys touched longest ago (Map keeps insertion order).
    for (const key of this.#keys.keys()) {
      if (this.#keys.size < this.maxKeys) break;
      this.#keys.delete(key);
    }
  }
}

class RedisBackend implements Backend {
  constructor(
    private readonly redis: Redis,
    private readonly windowMs: number,
    private readonly prefix = 'svc-signin:',
  ) {}

  async take(key: string, id: string, max: number, now: number): Promise<Verdict> {
    const k = this.prefix + key;
    const res = await this.redis
      .multi()
      .zremrangebyscore(k, 0, now - this.windowMs)
      .zadd(k, now, id)
      .zcard(k)
      .zrange(k, 0, 0, 'WITHSCORES')
      .pexpire(k, this.windowMs)
      .exec();
    if (!res) throw new Error('redis transaction aborted');
    for (const [err] of res) if (err) throw err;
    const count = Number(res[2]![1]);
    if (count > max) {
      await this.redis.zrem(k, id);
      const oldest = Number((res[3]![1] as string[])[1] ?? now);
      return { allowed: false, limit: max, remaining: 0, retryAfterMs: Math.max(1, oldest + this.windowMs - now) };
    }
    return { allowed: true, limit: max, remaining: max - count, retryAfterMs: 0 };
  }

  async give(key: string, id: string): Promise<void> {
    await this.redis.zrem(this.prefix + key, id);
  }
}

/** A taken slot: `success()` gives it back; `failure()` leaves it counted until the window passes. */
export interface Attempt {
  success(): Promise<void>;
  failure(): void;
}

export class SignInGuard {
  readonly #memory: MemoryBackend;
  readonly #redis: RedisBackend | null;
  constructor(
    private readonly settings: Config['signin'],
    redis: Redis | null,
    private readonly log: { warn(obj: object, msg: string): void },
  ) {
    this.#memory = new MemoryBackend(settings.windowMs);
    this.#redis = redis ? new RedisBackend(redis, settings.windowMs) : null;
  }

  async #take(key: string, id: string, max: number, now: number): Promise<{ v: Verdict; b: Backend }> {
    if (this.#redis) {
      try {
        return { v: await this.#redis.take(key, id, max, now), b: this.#redis };
      } catch (err) {
        // Protection goes on in this process rather than stopping sign-in for everyone.
        this.log.warn({ err: (err as Error).message }, 'sign-in limiter: redis unavailable, counting in memory');
      }
    }
    return { v: await this.#memory.take(key, id, max, now), b: this.#memory };
  }

  /**
   * Takes a slot for one attempt on `account` (and from `ip` when given). Throws 429
   * rate_limited when either already has its maximum of recent failures; the answer is the
   * same whether or not the account exists.
   */
  async attempt(account: string, ip: string | null): Promise<Attempt> {
    const { maxFailuresPerAccount, maxFailuresPerIp } = this.settings;
    const id = `${Date.now()}-${randomBytes(6).toString('hex')}`;
    const now = Date.now();
    const taken: Array<{ key: string; b: Backend }> = [];
    const giveBack = () => Promise.all(taken.map((t) => t.b.give(t.key, id).catch(() => {})));
    const checks: Array<[string, number]> = [];
    if (ip !== null) checks.push([`ip:${ipBucket(ip)}`, maxFailuresPerIp]);
    checks.push([`acct:${accountKey(account)}`, maxFailuresPerAccount]);
    for (const [key, max] of checks) {
      const { v, b } = await this.#take(key, id, max, now);
      if (!v.allowed) {
        await giveBack();
        throw rateLimited(v);
      }
      taken.push({ key, b });
    }
    let settled = false;
    return {
      success: async () => {
        if (settled) return;
        settled = true;
        await giveBack();
      },
      failure: () => {
        settled = true;
      },
    };
  }
}

function rateLimited(v: Verdict): ApiError {
  const seconds = String(Math.ceil(v.retryAfterMs / 1000));
  return new ApiError('rate_limited', `Too many failed sign-in attempts. Try again in ${seconds} s.`, undefined, {
    'retry-after': seconds,
    'ratelimit-limit': String(v.limit),
    'ratelimit-remaining': '0',
    'ratelimit-reset': seconds,
  });
}

/** Accounts are counted by their normalised email, hashed (no address in Redis). */
export const accountKey = (email: string): string =>
  createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');

/** An IPv4 address, or the /64 network of an IPv6 address (one host usually holds a whole /64). */
export function ipBucket(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  const [head, tail] = ip.toLowerCase().split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (a:b::1.2.3.4) counts as two groups; only the first four groups matter.
  const rightGroups = right.flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - rightGroups.length).fill('0'), ...rightGroups];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}
