// Uploads no message claimed within 24 hours are removed by an hourly job: in batches, each in
// a transaction that locks its rows (a message claiming one of them at that moment waits, then
// finds it gone and answers 422), deletes the stored bytes (already missing is fine), then the
// rows. Spool files and interrupted writes older than that are swept too.
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';

export const ATTACHMENT_PURGE_JOB = 'attachments.purge';
export const UNATTACHED_TTL_MS = 24 * 3600 * 1000;

type PurgeDeps = Pick<Deps, 'database' | 'storage' | 'config'>;

/** Where uploads are spooled while they arrive. */
export const spoolDirOf = (config: Deps['config']) => join(config.dataDir, 'tmp', 'uploads');

async function removeFilesBefore(dir: string, before: Date): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    try {
      if ((await stat(path)).mtime < before) {
        await unlink(path);
        removed++;
      }
    } catch {
      // gone meanwhile
    }
  }
  return removed;
}

/**
 * Removes unattached attachments created before `now - olderThanMs` (rows and bytes); returns
 * how many. `now` and `olderThanMs` are for tests.
 */
export async function purgeUnattachedAttachments(
  deps: PurgeDeps,
  opts: { now?: Date; olderThanMs?: number; batch?: number } = {},
): Promise<number> {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - (opts.olderThanMs ?? UNATTACHED_TTL_MS));
  const batch = opts.batch ?? 100;
  let total = 0;
  for (;;) {
    const n = await deps.database.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('attachments')
        .select(['workspace_id', 'id', 'storage_key'])
        .where('message_id', 'is', null)
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(pageLimit(batch))
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return 0;
      for (const r of rows) await deps.storage.delete(r.storage_key);
      await trx
        .deleteFrom('attachments')
        .where('message_id', 'is', null)
        .where(({ eb, refTuple, tuple }) =>
          eb(
            refTuple('workspace_id', 'id'),
            'in',
            rows.map((r) => tuple(r.workspace_id, r.id)),
          ),
        )
        .execute();
      return rows.length;
    });
    total += n;
    if (n < batch) break;
  }
  await removeFilesBefore(spoolDirOf(deps.config), cutoff);
  await deps.storage.sweep?.(cutoff);
  return total;
}

/** The hourly purge (pg-boss: one run per tick across all processes). */
export async function registerAttachmentJobs(deps: Deps): Promise<void> {
  await deps.jobs.work(ATTACHMENT_PURGE_JOB, async () => {
    const attachments = await purgeUnattachedAttachments(deps);
    if (attachments > 0) deps.log.info({ attachments }, 'purged unattached attachments');
  });
  await deps.jobs.schedule(ATTACHMENT_PURGE_JOB, '41 * * * *');
}
