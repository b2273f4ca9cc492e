// The portal's per-address limits (docs/decisions.md "Customer portal"): a contact form may be
// sent 5 times an hour per client address and per email address, a sign-in link asked for 5
// times an hour per email address and 20 times per client address, each within one workspace.
// Every counted attempt is a row of portal_limit_marks in its buckets: keyed hashes (HMAC, key
// derived from SECRET_KEY) of the address (an IPv6 address by its /64) or of the lower-cased
// email, so the table holds no address. Kept in the database, so every process counts the same
// attempts; the hourly maintenance job removes marks older than the window.
import { createHmac, hkdfSync } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import type { Database } from '../../platform/db/index.js';
import { ipBucket } from '../auth/protection.js';

export const LIMIT_WINDOW_MINUTES = 60;

export const LIMITS = {
  form: { perAddress: 5, perEmail: 5 },
  signIn: { perAddress: 20, perEmail: 5 },
} as const;

const keys = new WeakMap<Config, Buffer>();

function bucketKey(config: Config): Buffer {
  let k = keys.get(config);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', config.secretKey, 'svc-portal-limits', 'portal limit bucket key v1', 32));
    keys.set(config, k);
  }
  return k;
}

const bucketOf = (config: Config, kind: string, value: string): string =>
  `${kind}:${createHmac('sha256', bucketKey(config)).update(value).digest().subarray(0, 16).toString('base64url')}`;

export interface LimitCheck {
  /** The client address's bucket is full. */
  address: boolean;
  /** The email address's bucket is full. */
  email: boolean;
}

/**
 * Counts one attempt of `what` from `ip` for `email` unless a bucket is already full: the marks
 * are added only when both have room. Returns which bucket was full (neither: counted).
 */
export async function takeAttempt(
  deps: Deps,
  workspaceId: string,
  what: keyof typeof LIMITS,
  ip: string,
  email: string,
): Promise<LimitCheck> {
  const max = LIMITS[what];
  const byAddress = bucketOf(deps.config, `${what}-ip`, ipBucket(ip));
  const byEmail = bucketOf(deps.config, `${what}-email`, email.trim().toLowerCase());
  const counts = await deps.database.db
    .selectFrom('portal_limit_marks')
    .select(['bucket', sql<number>`count(*)::int`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('bucket', 'in', [byAddress, byEmail])
    .where('created_at', '>', sql<Date>`now() - make_interval(mins => ${LIMIT_WINDOW_MINUTES})`)
    .groupBy('bucket')
    .execute();
  const n = (b: string) => counts.find((c) => c.bucket === b)?.n ?? 0;
  const full = { address: n(byAddress) >= max.perAddress, email: n(byEmail) >= max.perEmail };
  if (!full.address && !full.email) {
    await deps.database.db
      .insertInto('portal_limit_marks')
      .values([
        { workspace_id: workspaceId, bucket: byAddress },
        { workspace_id: workspaceId, bucket: byEmail },
      ])
      .execute();
  }
  return full;
}

/** The hourly maintenance job: marks past the window count no more. */
export async function pruneLimitMarks(database: Database): Promise<number> {
  const r = await database.db
    .deleteFrom('portal_limit_marks')
    .where('created_at', '<', sql<Date>`now() - make_interval(mins => ${LIMIT_WINDOW_MINUTES})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows ?? 0);
}
