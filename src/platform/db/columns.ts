// The column types the row types are written with: how a timestamp or a jsonb column reads,
// inserts and updates through Kysely. Columns with a database default are `Generated` or a
// `Default…` type (an INSERT may leave them out).
import type { ColumnType } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
/** A timestamp column with a database default. */
export type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** jsonb: written as JSON text (or a value), read back parsed. */
export type Json<T = Record<string, unknown>> = ColumnType<T, string | T, string | T>;
export type DefaultJson<T = Record<string, unknown>> = ColumnType<T, string | T | undefined, string | T>;
export type NullableJson<T = Record<string, unknown>> = ColumnType<T | null, string | T | null, string | T | null>;
