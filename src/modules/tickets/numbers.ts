// Ticket numbers: per workspace, from the workspace's `ticket_number` counter row.
//
// On PostgreSQL the number is taken by a statement that commits on its own (a small pool apart
// from the requests', src/platform/db/index.ts), after the create's checks passed and right
// before its INSERT. So creates in one workspace do not queue on the counter row for the whole
// length of their transactions (the first message, automations, SLA, assignment): they queue
// for one short statement. The price: a create that fails after taking its number (a database
// error, not a validation error) leaves that number unused; numbers are never reused. On the
// embedded database, which runs one transaction at a time anyway, the number is taken in the
// creating transaction and a failed create gives it back.
import { CompiledQuery } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';

const NEXT = `INSERT INTO workspace_counters (workspace_id, name, value) VALUES ($1, 'ticket_number', 1)
  ON CONFLICT (workspace_id, name) DO UPDATE SET value = workspace_counters.value + 1
  RETURNING value`;

export async function takeTicketNumber(deps: Deps, u: Unit): Promise<number> {
  const own = deps.database.autonomous;
  const r = own ? await own(NEXT, [u.workspaceId]) : await u.trx.executeQuery(CompiledQuery.raw(NEXT, [u.workspaceId]));
  return Number((r.rows[0] as { value: number | string }).value);
}
