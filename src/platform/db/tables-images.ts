// Row types: pictures (0035, src/modules/images): one row per processed picture.
import type { DefaultTimestamp, NullableTimestamp } from './columns.js';

/** A processed picture; its PNGs are in the storage layer under images/. */
export interface ImagesTable {
  id: string;
  owner_kind: 'user' | 'contact' | 'company' | 'workspace';
  owner_id: string;
  workspace_id: string | null;
  source: string;
  bytes_256: number;
  bytes_64: number;
  created_at: DefaultTimestamp;
  retired_at: NullableTimestamp;
}
