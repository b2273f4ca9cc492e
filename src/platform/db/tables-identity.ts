// Row types: people, workspaces, sessions and credentials, the event outbox, idempotency keys, audit.
import type { ColumnType, Generated } from 'kysely';
import type { DefaultJson, DefaultTimestamp, Json, NullableJson, NullableTimestamp, Timestamp } from './columns.js';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  avatar_url: string | null;
  avatar_source: string | null;
  mfa_secret: string | null;
  mfa_enabled: Generated<boolean>;
  mfa_last_step: ColumnType<number | null, number | null | undefined, number | null>;
  mfa_enabled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  /** 0053: false for a person registered through OAuth who never chose a password. */
  has_password: Generated<boolean>;
}

export interface OAuthIdentitiesTable {
  id: string;
  user_id: string;
  provider: string;
  subject: string;
  email: string;
  created_at: DefaultTimestamp;
}

export interface OAuthSignInFlowsTable {
  state_hash: string;
  browser_hash: string | null;
  provider: string;
  nonce: string;
  code_verifier: string;
  native: boolean;
  app_challenge: string | null;
  link_user_id: string | null;
  expires_at: Date;
}

export interface OAuthExchangeCodesTable {
  code_hash: string;
  user_id: string;
  app_challenge: string;
  expires_at: Date;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  slug: string;
  widget_key: string;
  settings: DefaultJson;
  avatar_url: string | null;
  avatar_source: string | null;
  images: DefaultJson;
  widget_secret_enc: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface MembersTable {
  workspace_id: string;
  user_id: string;
  role: string;
  availability: ColumnType<
    'online' | 'away' | 'offline',
    'online' | 'away' | 'offline' | undefined,
    'online' | 'away' | 'offline'
  >;
  max_open_tickets: number | null;
  /** Notification types this member is not told about here (0040). */
  notifications_muted: ColumnType<string[], string[] | undefined, string[]>;
  last_seen_at: NullableTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface TeamsTable {
  workspace_id: string;
  id: string;
  name: string;
  private: Generated<boolean>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface TeamMembersTable {
  workspace_id: string;
  team_id: string;
  user_id: string;
  created_at: DefaultTimestamp;
}

export interface InvitationsTable {
  workspace_id: string;
  id: string;
  email: string;
  role: 'admin' | 'agent' | 'viewer';
  token_hash: string;
  invited_by: string | null;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  accepted_by: string | null;
  revoked_at: NullableTimestamp;
  created_at: DefaultTimestamp;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  refresh_hash: string;
  native: Generated<boolean>;
  created_at: DefaultTimestamp;
  last_used_at: DefaultTimestamp;
  revoked_at: NullableTimestamp;
  expires_at: DefaultTimestamp;
  /** The User-Agent of the sign-in or the latest refresh (cut to 256 characters). */
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
  /** The client address of the sign-in or the latest refresh. */
  ip: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionRetiredTokensTable {
  token_hash: string;
  session_id: string;
  retired_at: DefaultTimestamp;
}

export interface MfaRecoveryCodesTable {
  user_id: string;
  code_hash: string;
  used_at: NullableTimestamp;
  created_at: DefaultTimestamp;
}

export interface AppAttestChallengesTable {
  challenge_hash: string;
  expires_at: Timestamp;
  created_at: DefaultTimestamp;
}

export interface AppAttestKeysTable {
  key_id: string;
  public_key: string;
  sign_count: ColumnType<number, number | undefined, number>;
  environment: 'production' | 'development';
  created_at: DefaultTimestamp;
  last_used_at: NullableTimestamp;
}

export interface ApiKeysTable {
  workspace_id: string;
  id: string;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string[];
  created_by: string | null;
  expires_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  created_at: DefaultTimestamp;
}

export interface WorkspaceCountersTable {
  workspace_id: string;
  name: string;
  value: Generated<number>;
}

export interface EventsTable {
  workspace_id: string;
  seq: number;
  id: string;
  type: string;
  visibility: 'agents' | 'public';
  topics: string[];
  team_id: string | null;
  data: Json;
  occurred_at: Timestamp;
  published: Generated<boolean>;
}

export interface IdempotencyKeysTable {
  caller: string;
  key: string;
  workspace_id: string | null;
  route: string;
  body_hash: string;
  state: 'running' | 'committed' | 'done';
  status_code: number | null;
  headers: NullableJson<Record<string, string>>;
  body: string | null;
  locked_until: Timestamp;
  claim: Generated<string>;
  results: string | null;
  created_at: DefaultTimestamp;
}

export interface AuditLogsTable {
  workspace_id: string;
  id: string;
  actor_type: string;
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  /** The contact who acted (a visitor's or a customer's act, recorded as system). */
  actor_contact_id: Generated<string | null>;
  action: string;
  entity_type: string;
  entity_id: string | null;
  data: DefaultJson;
  ip: string | null;
  created_at: DefaultTimestamp;
}
