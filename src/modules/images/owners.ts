// A record whose picture is a pair of its own columns (avatar_url, avatar_source): contacts and
// companies. Setting or removing it is the same for both, only the names differ: the row locked,
// the change applied only over the sources it may replace, the old picture retired and the new one
// adopted, `<kind>.updated` emitted and `<kind>.avatar_updated` / `_removed` audited.
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import { SYSTEM_ACTOR } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import { type AuditContext, recordAudit } from '../audit/service.js';
import { changeApplies, type PictureChange, swapPictures } from './store.js';

export interface PictureRecord<V> {
  table: 'contacts' | 'companies';
  kind: 'contact' | 'company';
  /** The 404's text. */
  missing: string;
  /** The record's view (the API's shape), null when it is not in the workspace. */
  load(db: Kysely<DB>, workspaceId: string, id: string): Promise<V | null>;
}

/**
 * Points the record at a stored picture, or at none. The view after the change; null when the
 * change did not apply (the current picture's source is not in `onlyOver`); 404 when the record
 * is not in the workspace. `ctx` null: the system (automatic lookups, in a job).
 */
export async function setRecordPicture<V>(
  deps: Deps,
  record: PictureRecord<V>,
  workspaceId: string,
  ctx: AuditContext | null,
  id: string,
  change: PictureChange,
): Promise<V | null> {
  if (!isUuid(id)) throw notFound(record.missing);
  // Both tables have the columns used here; Kysely types one of them.
  const table = record.table as 'contacts';
  return deps.writer.run(workspaceId, async (u) => {
    const before = await u.trx
      .selectFrom(table)
      .select(['avatar_url', 'avatar_source'])
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound(record.missing);
    if (!changeApplies(change, before.avatar_source)) return null;
    if (change.picture === null && before.avatar_url === null) return (await record.load(u.trx, workspaceId, id))!;
    await swapPictures(u.trx, change.picture?.id ?? null, before.avatar_url);
    await u.trx
      .updateTable(table)
      .set({
        avatar_url: change.picture?.url ?? null,
        avatar_source: change.picture?.source ?? null,
        updated_at: new Date(),
      })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .execute();
    const view = (await record.load(u.trx, workspaceId, id))!;
    u.emit({ type: `${record.kind}.updated`, data: { [record.kind]: view } });
    await recordAudit(u.trx, ctx ?? { workspaceId, actor: SYSTEM_ACTOR, ip: null }, {
      action: change.picture ? `${record.kind}.avatar_updated` : `${record.kind}.avatar_removed`,
      entityType: record.kind,
      entityId: id,
      data: change.picture ? { source: change.picture.source } : {},
    });
    return view;
  });
}
