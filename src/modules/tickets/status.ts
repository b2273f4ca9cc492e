// Ticket status rules: a person or key moving a ticket to
// solved or closed needs every required_on_solve custom field filled; automations, merges and
// auto-close skip the check (they do not call it).
import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/http/errors.js';
import { fieldDefs } from '../custom-fields/service.js';
import type { TicketStatus } from './schemas.js';

export const ACTIVE_STATUSES: TicketStatus[] = ['open', 'pending', 'on_hold'];

export const isDone = (s: string) => s === 'solved' || s === 'closed';

/** Keys of the workspace's ticket fields marked required_on_solve (archived fields are not required). */
export async function requiredOnSolveKeys(db: Kysely<DB>, workspaceId: string): Promise<string[]> {
  const defs = await fieldDefs(db, workspaceId, 'ticket');
  return [...defs.values()].filter((d) => d.required_on_solve && !d.archived).map((d) => d.key);
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** The 422 of a solve or close with empty required fields: one error per key, at body.fields.<key>. */
export function fieldRequired(keys: string[]): ApiError {
  return new ApiError(
    'field_required',
    `Fill ${keys.join(', ')} before solving or closing this ticket.`,
    keys.map((k) => ({ location: `body.fields.${k}`, message: 'is required to solve or close the ticket' })),
  );
}

/**
 * Throws field_required when `to` is solved or closed and a required field of `fields` (the
 * values the ticket will have) is empty. Nothing to check for other statuses.
 */
export async function checkRequiredFields(
  db: Kysely<DB>,
  workspaceId: string,
  to: string,
  fields: Record<string, unknown>,
): Promise<void> {
  if (!isDone(to)) return;
  const missing = (await requiredOnSolveKeys(db, workspaceId)).filter((k) => isEmpty(fields[k]));
  if (missing.length > 0) throw fieldRequired(missing);
}
