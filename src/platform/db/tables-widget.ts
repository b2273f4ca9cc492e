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

/** One row per workspace and UTC month the widget's AI cap was reached (0048; src/modules/widget/ai-answers.ts). */
export interface WidgetCapNoticesTable {
  workspace_id: string;
  /** The first day of the month (date: read back as a Date by pg, a string or Date by PGlite). */
  month: ColumnType<Date | string, Date | string, Date | string>;
  cap_usd: ColumnType<string, number | string, number | string>;
  created_at: DefaultTimestamp;
}
