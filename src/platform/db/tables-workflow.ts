// Row types: automations, SLA policies and business hours, assignment, triage, onboarding.
import type { ColumnType, Generated } from 'kysely';
import type { DefaultJson, DefaultTimestamp, Json } from './columns.js';

// SLA policies and business hours (0019, 0038, src/modules/sla, src/modules/business-hours).
export interface SlaPoliciesTable {
  workspace_id: string;
  id: string;
  name: string;
  priority: string | null;
  first_response_minutes: number;
  /** null: no next-response clock (0038). */
  next_response_minutes: ColumnType<number | null, number | null | undefined, number | null>;
  resolution_minutes: number;
  business_hours: boolean;
  enabled: boolean;
  position: number;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface BusinessHoursTable {
  workspace_id: string;
  enabled: boolean;
  timezone: string;
  schedule: Json<Record<string, Array<{ start: string; end: string }>>>;
  holidays: Json<Array<{ date: string; name: string }>>;
  updated_at: DefaultTimestamp;
}

// Onboarding dismissals (0021, src/modules/onboarding).
export interface OnboardingDismissalsTable {
  workspace_id: string;
  user_id: string;
  dismissed_at: DefaultTimestamp;
}

// Automations (0018, src/modules/automations).
export interface AutomationsTable {
  workspace_id: string;
  id: string;
  name: string;
  trigger: 'ticket_created' | 'customer_replied' | 'agent_replied' | 'ticket_updated';
  conditions: DefaultJson<Array<Record<string, unknown>>>;
  actions: DefaultJson<Array<Record<string, unknown>>>;
  enabled: Generated<boolean>;
  position: Generated<number>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface AutomationRunCountsTable {
  workspace_id: string;
  automation_id: string;
  /** bigint: read back as a string by pg. */
  run_count: ColumnType<string | number, number | undefined, never>;
}

// Assignment and triage settings (0020, src/modules/assignment, src/modules/triage).
export interface AssignmentSettingsTable {
  workspace_id: string;
  auto_away_minutes: Generated<number>;
  updated_at: DefaultTimestamp;
}

export interface AssignmentRulesTable {
  workspace_id: string;
  position: number;
  target_type: 'mailbox' | 'team';
  mailbox_id: string | null;
  team_id: string | null;
  mode: 'none' | 'round_robin' | 'load_balanced';
}

export interface AssignmentPointersTable {
  workspace_id: string;
  scope: string;
  last_user_id: string | null;
  updated_at: DefaultTimestamp;
}

export interface TriageSettingsTable {
  workspace_id: string;
  auto_triage: Generated<boolean>;
  fields: DefaultJson<string[]>;
  assign_after_triage: Generated<boolean>;
  threshold: Generated<number>;
  updated_at: DefaultTimestamp;
}
