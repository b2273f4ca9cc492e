// Semantic search's vectors and what waits to be embedded (migration 0047).
import type { ColumnType } from 'kysely';
import type { DefaultTimestamp } from './columns.js';

export type EmbeddedKind = 'ticket' | 'message' | 'article';

export interface EmbeddingsTable {
  workspace_id: string;
  kind: EmbeddedKind;
  object_id: string;
  ticket_id: string | null;
  model: string;
  digest: string;
  vector: Uint8Array;
  seq: ColumnType<number, number, number>;
}

export interface EmbeddingQueueTable {
  workspace_id: string;
  kind: EmbeddedKind;
  object_id: string;
  queued_at: DefaultTimestamp;
}
