// Row types: the assistant (migration 0051, src/modules/assistant): conversations, their turns,
// the tool steps, and the actions waiting for approval.
import type { ColumnType, Generated } from 'kysely';
import type { DefaultJson, DefaultTimestamp, NullableJson, NullableTimestamp, Timestamp } from './columns.js';

export interface AssistantSessionsTable {
  workspace_id: string;
  id: string;
  user_id: string;
  title: Generated<string>;
  titled: Generated<boolean>;
  run_id: string | null;
  run_at: NullableTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** A tool call as the model made it (its arguments as the JSON text it wrote). */
export interface StoredCall {
  id: string;
  name: string;
  arguments: string;
}

export interface AssistantTurnsTable {
  workspace_id: string;
  id: string;
  session_id: string;
  role: 'user' | 'assistant';
  text: Generated<string>;
  context: NullableJson<Record<string, unknown>>;
  tool_calls: DefaultJson<StoredCall[]>;
  created_at: DefaultTimestamp;
}

export type AssistantStepStatus =
  | 'running'
  | 'done'
  | 'error'
  | 'awaiting_approval'
  | 'approved'
  | 'denied'
  | 'expired';

export interface StoredRef {
  kind: string;
  id: string;
  label: string;
  number?: number;
}

export interface AssistantStepsTable {
  workspace_id: string;
  id: string;
  session_id: string;
  turn_id: string;
  call_id: string;
  position: number;
  tool: string;
  label: string;
  status: AssistantStepStatus;
  summary: string | null;
  refs: DefaultJson<StoredRef[]>;
  action_id: string | null;
  result: string | null;
  is_error: Generated<boolean>;
  shown: Generated<boolean>;
  created_at: DefaultTimestamp;
}

export interface AssistantActionsTable {
  workspace_id: string;
  id: string;
  session_id: string;
  step_id: string;
  user_id: string;
  sign_in_session_id: string;
  tool: string;
  args: ColumnType<unknown, string, string>;
  plan: ColumnType<unknown | null, string | null, string | null>;
  preview: ColumnType<Record<string, unknown>, string, string>;
  status: ColumnType<
    'pending' | 'approved' | 'denied' | 'expired',
    'pending' | undefined,
    'approved' | 'denied' | 'expired'
  >;
  expires_at: Timestamp;
  decided_at: NullableTimestamp;
  created_at: DefaultTimestamp;
}
