// Exact timestamps for keyset cursors. timestamptz keeps microseconds but a JS Date keeps
// milliseconds, so a cursor made from a Date can skip or repeat rows created within the same
// millisecond. Cursors carry integer microseconds since the epoch instead, read and compared
// exactly in SQL.
import { sql } from 'kysely';

/** A timestamptz column as integer microseconds since the epoch (exact; far below 2^53). */
export const microsOf = (column: string) => sql<number>`(extract(epoch from ${sql.ref(column)}) * 1000000)::int8`;

/** Integer microseconds since the epoch back to the exact timestamptz. */
export const fromMicros = (us: number) =>
  sql<Date>`('epoch'::timestamptz + ${Math.trunc(us)}::int8 * interval '1 microsecond')`;
