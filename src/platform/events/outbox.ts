// Appending to the outbox inside the caller's transaction. seq comes from the
// workspace's counter row; its row lock serialises the workspace's writers, so the
// counter bump and the event rows are one statement, issued as the very last step
// before COMMIT: the lock is held for that statement and the COMMIT, nothing more. On
// PostgreSQL the last append of a transaction takes its COMMIT along in the same write
// (THEN_COMMIT, db/index.ts), so the lock is held for one round trip.
import { sql, type Transaction } from 'kysely';
import { newId } from '../crypto/random.js';
import { THEN_COMMIT } from '../db/index.js';
import type { DB } from '../db/schema.js';
import type { EventDraft, EventEnvelope } from './envelope.js';

export const EVENT_SEQ = 'event_seq';

export async function appendEvents(
  trx: Transaction<DB>,
  workspaceId: string,
  drafts: EventDraft[],
  /** The transaction's last statement: COMMIT follows it at once (nothing may run after it). */
  last = false,
): Promise<EventEnvelope[]> {
  if (drafts.length === 0) return [];
  // One clock reading per transaction: its events share occurred_at and stay in seq order.
  const occurredAt = new Date().toISOString();
  const rows = drafts.map((d) => ({
    id: newId(),
    type: d.type,
    visibility: d.visibility ?? 'agents',
    topics: [`workspace:${workspaceId}`, ...(d.topics ?? [])],
    team_id: d.teamId ?? null,
    data: d.data,
  }));
  const n = rows.length;
  // The counter is upserted, never missing: a statement that COMMIT follows must fail, not
  // append nothing, when something is wrong (a workspace that is gone fails its foreign key).
  const inserted = await sql<{ seq: number; ord: number }>`${sql.raw(last ? THEN_COMMIT : '')}
    WITH c AS (
      INSERT INTO workspace_counters (workspace_id, name, value) VALUES (${workspaceId}, ${EVENT_SEQ}, ${n})
      ON CONFLICT (workspace_id, name) DO UPDATE SET value = workspace_counters.value + ${n}
      RETURNING value
    )
    INSERT INTO events (workspace_id, seq, id, type, visibility, topics, team_id, data, occurred_at)
    SELECT ${workspaceId}::uuid, c.value - ${n} + x.ord, (x.e->>'id')::uuid, x.e->>'type', x.e->>'visibility',
           ARRAY(SELECT jsonb_array_elements_text(x.e->'topics')), (x.e->>'team_id')::uuid, x.e->'data',
           ${occurredAt}::timestamptz
      FROM c, jsonb_array_elements(${JSON.stringify(rows)}::jsonb) WITH ORDINALITY AS x(e, ord)
    RETURNING seq`.execute(trx);
  if (inserted.rows.length !== n) throw new Error('workspace event counter missing');
  const first = Math.min(...inserted.rows.map((r) => Number(r.seq)));
  return rows.map<EventEnvelope>((r, i) => ({
    id: r.id,
    seq: first + i,
    workspace_id: workspaceId,
    type: r.type,
    visibility: r.visibility,
    topics: r.topics,
    data: r.data,
    occurred_at: occurredAt,
    team_id: r.team_id,
  }));
}
