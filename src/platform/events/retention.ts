// Events older than EVENT_RETENTION are pruned, workspace by workspace (the index
// leads with workspace_id), in bounded batches so a big backlog never holds long locks.

import type { Database } from '../db/index.js';
import { pageLimit } from '../db/keyset.js';
import { pruneInBatches } from '../db/prune.js';

export async function pruneEvents(
  database: Database,
  retentionMs: number,
  opts: { workspaceIds?: string[]; batch?: number } = {},
): Promise<number> {
  const db = database.db;
  const batch = opts.batch ?? 5000;
  const cutoff = new Date(Date.now() - retentionMs);
  const workspaces = opts.workspaceIds
    ? opts.workspaceIds.map((id) => ({ id }))
    : await db.selectFrom('workspaces').select('id').execute();
  return pruneInBatches(
    workspaces.map((w) => w.id),
    batch,
    async (id, limit) =>
      (
        await db
          .deleteFrom('events')
          .where('workspace_id', '=', id)
          .where(
            'seq',
            'in',
            db
              .selectFrom('events')
              .select('seq')
              .where('workspace_id', '=', id)
              .where('occurred_at', '<', cutoff)
              .orderBy('seq')
              .limit(pageLimit(limit)),
          )
          .executeTakeFirst()
      ).numDeletedRows,
  );
}
