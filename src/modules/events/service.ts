// Replay of the outbox (GET /v1/events), filtered by what the caller may see.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';
import { publicEnvelope, standIn } from '../../platform/events/envelope.js';
import { EVENT_SEQ } from '../../platform/events/outbox.js';
import { rowToEnvelope } from '../../platform/events/publisher.js';
import { canSee } from '../../platform/events/visibility.js';
import type { RequestContext } from '../../platform/http/context.js';

export async function replay(deps: Deps, ctx: RequestContext, since: number, limit: number) {
  const db = deps.database.db;
  const head = await db
    .selectFrom('workspace_counters')
    .select([
      'value',
      (eb) =>
        eb
          .selectFrom('events')
          .select(sql<number | null>`min(seq)`.as('m'))
          .where('workspace_id', '=', ctx.workspaceId)
          .as('oldest'),
    ])
    .where('workspace_id', '=', ctx.workspaceId)
    .where('name', '=', EVENT_SEQ)
    .executeTakeFirst();
  const latest = head?.value ?? 0;
  const oldest = head?.oldest ?? latest + 1;
  // since=0: "where are we?" (latest_seq alone). A since older than what is retained, or
  // ahead of the newest event, cannot be continued: the client reloads from the REST routes.
  if (since === 0) return { data: [], latest_seq: latest, resync: false };
  if (since > latest || since < oldest - 1) return { data: [], latest_seq: latest, resync: true };
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('workspace_id', '=', ctx.workspaceId)
    .where('seq', '>', since)
    .orderBy('seq')
    .limit(pageLimit(limit))
    .execute();
  const data = rows.map((r) => {
    const e = rowToEnvelope(r);
    return canSee(ctx, e) ? publicEnvelope(e) : standIn(e);
  });
  return { data, latest_seq: latest, resync: false };
}
