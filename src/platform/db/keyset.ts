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

/**
 * A LIMIT (a page's, a batch's) as a literal, not a parameter. A statement run often is prepared
 * (src/platform/db/index.ts), and PostgreSQL then weighs its generic plan against the plans made
 * for each run's values: with `LIMIT $n` the generic plan expects a tenth of the table, looks
 * a hundred times dearer and is never chosen, so every run was planned again (0.6 of the
 * 0.9 ms PostgreSQL spent on a list of tickets). Page sizes are 1 to 101 and batch sizes are
 * constants, so this adds few statement texts.
 */
export function pageLimit(n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return sql.lit(n) as RawBuilder<number>;
}
