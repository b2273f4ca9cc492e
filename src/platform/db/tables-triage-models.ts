// The dedicated triage engine's models (migration 0046): one row per workspace.
import type { ColumnType } from 'kysely';
import type { DefaultTimestamp, NullableJson, NullableTimestamp } from './columns.js';

export interface TriageModelsTable {
  workspace_id: string;
  train_after: NullableTimestamp;
  model: string | null;
  meta: NullableJson;
  weights: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
  trained_at: NullableTimestamp;
  trained_on: ColumnType<number, number | undefined, number>;
  solved: ColumnType<number, number | undefined, number>;
  updated_at: DefaultTimestamp;
}
