// Appending to the outbox inside the caller's transaction. seq comes from the
// workspace's counter row; its row lock serialises the workspace's writers, so it is
// taken as the very last step before COMMIT and held for as short a time as possible.
import { sql, type Transaction } from 'kysely';
import { newId } from '../crypto/random.js';
import type { DB } from '../db/schema.js';
import type { EventDraft, EventEnvelope } from './envelope.js';

export const EVENT_SEQ = 'event_seq';

export async function appendEvents(
  trx: Transaction<DB>,
  workspaceId: string,
  drafts: EventDraft[],
): Promise<EventEnvelope[]> {
  if (drafts.length === 0) return [];
  const { value: last } = await trx
    .updateTable('workspace_counters')
    .set({ value: sql`value + ${drafts.length}` })
    .where('workspace_id', '=', workspaceId)
    .where('name', '=', EVENT_SEQ)
    .returning('value')
    .executeTakeFirstOrThrow();
  const first = last - drafts.length + 1;
  // One clock reading per transaction: its events share occurred_at and stay in seq order.
  const occurredAt = new Date().toISOString();
  const envelopes = drafts.map<EventEnvelope>((d, i) => ({
    id: newId(),
    seq: first + i,
    workspace_id: workspaceId,
    type: d.type,
    visibility: d.visibility ?? 'agents',
    topics: [`workspace:${workspaceId}`, ...(d.topics ?? [])],
    data: d.data,
    occurred_at: occurredAt,
    team_id: d.teamId ?? null,
  }));
  await trx
    .insertInto('events')
    .values(
      envelopes.map((e) => ({
        workspace_id: e.workspace_id,
        seq: e.seq,
        id: e.id,
        type: e.type,
        visibility: e.visibility,
        topics: e.topics,
        team_id: e.team_id ?? null,
        data: JSON.stringify(e.data),
        occurred_at: e.occurred_at,
      })),
    )
    .execute();
  return envelopes;
}
