// Row types: the chat widget (0033, src/modules/widget): its settings per workspace and the
// visitors' tokens.
import type { ColumnType, Generated } from 'kysely';
import type { DefaultTimestamp, NullableTimestamp } from './columns.js';

/** A workspace's widget settings (no row: the defaults). */
export interface WidgetSettingsTable {
  workspace_id: string;
  greeting: Generated<string>;
  require_email: Generated<boolean>;
  enabled: Generated<boolean>;
  allowed_origins: Generated<string[]>;
  installed_at: NullableTimestamp;
  updated_at: DefaultTimestamp;
}

/**
 * A visitor's token (one workspace, one contact, or the id of the contact to be: 0042): the
 * SHA-256 of `svc_vis_…`.
 */
export interface WidgetVisitorsTable {
  workspace_id: string;
  id: string;
  contact_id: string | null;
  pending_contact_id: string | null;
  token_hash: string;
  email: string | null;
  name: string | null;
  created_at: DefaultTimestamp;
  last_seen_at: DefaultTimestamp;
  revoked_at: NullableTimestamp;
}

/** The widget's monthly AI cap reached: one notice per workspace and UTC month (0048). */
export interface WidgetCapNoticesTable {
  workspace_id: string;
  /** The first day of the month, YYYY-MM-DD. */
  month: ColumnType<string, string, string>;
  cap_usd: ColumnType<string, number | string, number | string>;
  created_at: DefaultTimestamp;
}
