// Exact timestamps for keyset cursors. timestamptz keeps microseconds but a JS Date keeps
// milliseconds, so a cursor made from a Date can skip or repeat rows created within the same
// millisecond. Cursors carry integer microseconds since the epoch instead, read and compared
// exactly in SQL.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { isUuid } from '../crypto/random.js';
import { invalid } from '../http/errors.js';
import type { KeyValue } from '../http/pagination.js';

/** A timestamptz column as integer microseconds since the epoch (exact; far below 2^53). */
export const microsOf = (column: string) => sql<number>`(extract(epoch from ${sql.ref(column)}) * 1000000)::int8`;

/** Integer microseconds since the epoch back to the exact timestamptz. */
export const fromMicros = (us: number) =>
  sql<Date>`('epoch'::timestamptz + ${Math.trunc(us)}::int8 * interval '1 microsecond')`;

/**
 * Newest first by (created_at, id): the rows after a cursor's position `[micros, id]` (as
 * encoded from `created_us` and `id`). Another position is a 422, never a query error.
 */
export function createdBefore(alias: string, after: KeyValue[]): RawBuilder<SqlBool> {
  const [us, id] = after;
  if (typeof us !== 'number' || typeof id !== 'string' || !isUuid(id)) {
    throw invalid('query.cursor', 'is not a cursor of this list; start again without one');
  }
  return sql<SqlBool>`(${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.id`)}) < (${fromMicros(us)}, ${id.toLowerCase()}::uuid)`;
}
