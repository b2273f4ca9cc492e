// The sign-in module's jobs: a new person's picture from their OAuth provider (the `picture`
// claim), through the pictures pipeline; and the sweep of what sign-ins leave behind when nobody
// finishes them (expired passkey challenges, OAuth flows and exchange codes). Registered by
// runtime.ts's startWorkers like the other modules' jobs.

import type { Deps } from '../../deps.js';
import type { Database } from '../../platform/db/index.js';
import { fetchPictureBytes } from '../images/service.js';
import { storePicture, swapPictures } from '../images/store.js';
import { OAUTH_PICTURE_JOB } from './oauth/service.js';

export const SIGN_IN_SWEEP_JOB = 'auth.sweep';

interface PictureJob {
  user_id: string;
  url: string;
}

/**
 * Fetches the provider's picture with the pictures' address rules (https, public addresses, 5 MB,
 * 10 s), decodes and re-encodes it in the pool, stores it, and points the person at it with
 * source `oauth`, unless they have a picture by then (an upload made meanwhile wins). Whether
 * the picture was set. What cannot be fetched or is no picture changes nothing.
 */
export async function takeOAuthPicture(deps: Deps, job: PictureJob): Promise<boolean> {
  const got = await fetchPictureBytes(deps, job.url);
  if (!got.body || got.body.length === 0) return false;
  const processed = await deps.pictures.pool.process(got.body, 'crop');
  if (!processed.ok) return false;
  const picture = await storePicture(deps, { kind: 'user', id: job.user_id, workspaceId: null }, 'oauth', processed);
  // Stored retired: adopted only if the person still has no picture (otherwise the removal job takes it).
  return deps.database.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('users')
      .set({ avatar_url: picture.url, avatar_source: 'oauth', updated_at: new Date() })
      .where('id', '=', job.user_id)
      .where('avatar_url', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await swapPictures(trx, picture.id, null);
    return true;
  });
}

/** Deletes expired passkey challenges, OAuth sign-in flows and exchange codes; live ones stay. */
export async function sweepSignInLeftovers(
  database: Database,
  now = new Date(),
): Promise<{ passkey_challenges: number; oauth_flows: number; oauth_codes: number }> {
  const db = database.db;
  const n = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
  return {
    passkey_challenges: n(await db.deleteFrom('passkey_challenges').where('expires_at', '<', now).executeTakeFirst()),
    oauth_flows: n(await db.deleteFrom('oauth_sign_in_flows').where('expires_at', '<', now).executeTakeFirst()),
    oauth_codes: n(await db.deleteFrom('oauth_exchange_codes').where('expires_at', '<', now).executeTakeFirst()),
  };
}

/** The picture worker and the sweep (every 10 minutes). */
export async function registerSignInJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<PictureJob>(OAUTH_PICTURE_JOB, async (job) => {
    try {
      await takeOAuthPicture(deps, job);
    } catch (err) {
      // Best effort, like the automatic pictures: logged, not retried.
      deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'oauth picture failed');
    }
  });
  await deps.jobs.work(SIGN_IN_SWEEP_JOB, async () => {
    const removed = await sweepSignInLeftovers(deps.database);
    if (removed.passkey_challenges + removed.oauth_flows + removed.oauth_codes > 0) {
      deps.log.info(removed, 'swept expired sign-in rows');
    }
  });
  await deps.jobs.schedule(SIGN_IN_SWEEP_JOB, '*/10 * * * *');
}
