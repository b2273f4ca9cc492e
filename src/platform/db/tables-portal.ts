// Row types: the customer portal (0032, src/modules/portal): sign-in links, customer sessions
// and the marks of the portal's per-address limits.
import type { Generated } from 'kysely';
import type { DefaultTimestamp, NullableTimestamp, Timestamp } from './columns.js';

/** A one-time sign-in link: the SHA-256 of its token, single use, valid 15 minutes. */
export interface PortalSignInLinksTable {
  workspace_id: string;
  id: string;
  contact_id: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: DefaultTimestamp;
}

/** A customer's session (one workspace, one contact): the SHA-256 of its cookie's value. */
export interface PortalSessionsTable {
  workspace_id: string;
  id: string;
  contact_id: string;
  token_hash: string;
  created_at: DefaultTimestamp;
  last_seen_at: DefaultTimestamp;
  expires_at: Timestamp;
}

/** One counted attempt in a bucket (a keyed hash of an address), pruned after an hour. */
export interface PortalLimitMarksTable {
  workspace_id: string;
  id: Generated<string>;
  bucket: string;
  created_at: DefaultTimestamp;
}
