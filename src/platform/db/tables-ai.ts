// The AI tables (migration 0045): per workspace settings and own key, and the usage of every call.
import type { ColumnType, Generated } from 'kysely';
import type { DefaultJson, DefaultTimestamp } from './columns.js';

/** numeric: read as text by the drivers, written as a number or text. */
type Numeric = ColumnType<string, number | string | undefined, number | string>;

export type AiFeatureKey =
  | 'summarize'
  | 'rewrite'
  | 'translate'
  | 'triage'
  | 'decide'
  | 'answer_check'
  | 'copilot'
  | 'draft_reply'
  | 'answer'
  | 'answer_email'
  | 'playground'
  | 'kb_draft'
  | 'assistant';

export interface AiSettingsTable {
  workspace_id: string;
  features: DefaultJson<Record<string, unknown>>;
  model: Generated<string>;
  fast_model: Generated<string>;
  widget_model: Generated<string>;
  widget_monthly_cap_usd: Numeric;
  own_key_provider: 'openai' | 'anthropic' | null;
  own_key_sealed: string | null;
  own_key_base_url: string | null;
  own_key_last4: string | null;
  own_key_status: 'active' | 'failed' | null;
  own_key_error: string | null;
  updated_at: DefaultTimestamp;
}

export interface AiUsageTable {
  workspace_id: string;
  id: string;
  feature: AiFeatureKey;
  model: string;
  source: 'instance' | 'own_key';
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  cost_usd: Numeric;
  user_id: string | null;
  outcome: 'ok' | 'cancelled' | 'failed';
  ticket_id: string | null;
  created_at: DefaultTimestamp;
}
