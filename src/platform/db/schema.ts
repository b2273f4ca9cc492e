// Row types of every table, for Kysely. Columns with a database default are `Generated`.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
/** A timestamp column with a database default. */
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** jsonb: written as JSON text (or a value), read back parsed. */
type Json<T = Record<string, unknown>> = ColumnType<T, string | T, string | T>;
type DefaultJson<T = Record<string, unknown>> = ColumnType<T, string | T | undefined, string | T>;
type NullableJson<T = Record<string, unknown>> = ColumnType<T | null, string | T | null, string | T | null>;

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
  action: string;
  entity_type: string;
  entity_id: string | null;
  data: DefaultJson;
  ip: string | null;
  created_at: DefaultTimestamp;
}

export interface CompaniesTable {
  workspace_id: string;
  id: string;
  name: string;
  domain: string | null;
  notes: string | null;
  custom: DefaultJson;
  avatar_url: string | null;
  avatar_source: string | null;
  fields: DefaultJson;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface ContactsTable {
  workspace_id: string;
  id: string;
  email: string | null;
  name: string | null;
  phone: string | null;
  company_id: string | null;
  external_id: string | null;
  notes: string | null;
  custom: DefaultJson;
  blocked: Generated<boolean>;
  avatar_url: string | null;
  avatar_source: string | null;
  fields: DefaultJson;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface TicketsTable {
  workspace_id: string;
  id: string;
  number: number;
  subject: string;
  status: string;
  priority: string;
  priority_rank: GeneratedAlways<number>;
  severity: string | null;
  severity_rank: GeneratedAlways<number>;
  channel: string;
  mailbox_id: string | null;
  contact_id: string | null;
  assignee_id: string | null;
  team_id: string | null;
  sla: NullableJson;
  due_at: NullableTimestamp;
  /** The next unbreached SLA deadline (the breach sweep's index; 0019). */
  sla_breach_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  first_responded_at: NullableTimestamp;
  solved_at: NullableTimestamp;
  snoozed_until: NullableTimestamp;
  last_message_at: Timestamp;
  last_customer_message_at: NullableTimestamp;
  last_message_preview: Generated<string>;
  message_count: Generated<number>;
  spam: Generated<boolean>;
  csat: NullableJson;
  custom: DefaultJson;
  fields: DefaultJson;
  merged_into_id: string | null;
  deleted_at: NullableTimestamp;
  search: GeneratedAlways<string>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface MessagesTable {
  workspace_id: string;
  id: string;
  ticket_id: string;
  kind: 'reply' | 'note';
  direction: 'inbound' | 'outbound';
  author_type: 'contact' | 'user' | 'system' | 'api';
  author_user_id: string | null;
  author_contact_id: string | null;
  author_api_key_id: string | null;
  body_html: string;
  body_text: string;
  has_quoted: Generated<boolean>;
  original_html: string | null;
  original_text: string | null;
  subject: Generated<string>;
  from_email: Generated<string>;
  from_name: Generated<string>;
  to: ColumnType<string[], string[] | undefined, string[]>;
  cc: ColumnType<string[], string[] | undefined, string[]>;
  bcc: ColumnType<string[], string[] | undefined, string[]>;
  delivery_status: Generated<'none' | 'pending' | 'sent' | 'failed' | 'bounced'>;
  delivery_error: string | null;
  reply_to: string | null;
  auth_failed: Generated<boolean>;
  form_sender: string | null;
  email_message_id: string | null;
  /** The mailbox an email came in or went out through (0011). */
  mailbox_id: ColumnType<string | null, string | null | undefined, string | null>;
  email_in_reply_to: ColumnType<string | null, string | null | undefined, string | null>;
  email_references: ColumnType<string[], string[] | undefined, string[]>;
  /** The inbound_emails row this message was made from. */
  raw_inbound_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The Message-ID as the sender wrote it (case kept, no brackets), for replies' In-Reply-To (0012). */
  email_message_id_sent: ColumnType<string | null, string | null | undefined, string | null>;
  /** Why an inbound mail is automatic (autoSubmitted's reason), or null (0012). */
  email_auto_submitted: ColumnType<string | null, string | null | undefined, string | null>;
  /** Outbound delivery (0014): attempts so far, when the next is due, who holds it, the last temporary error. */
  delivery_attempts: Generated<number>;
  delivery_next_at: NullableTimestamp;
  delivery_lease_until: NullableTimestamp;
  delivery_last_error: string | null;
  search: GeneratedAlways<string>;
  created_at: DefaultTimestamp;
}

export interface TicketActivitiesTable {
  workspace_id: string;
  id: string;
  ticket_id: string;
  type: string;
  data: DefaultJson;
  actor_type: 'user' | 'api_key' | 'system' | 'ai' | 'automation';
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  actor_automation_id: string | null;
  created_at: DefaultTimestamp;
}

export interface AttachmentsTable {
  workspace_id: string;
  id: string;
  message_id: string | null;
  filename: string;
  content_type: string;
  size_bytes: number;
  inline: Generated<boolean>;
  content_id: string | null;
  storage_key: string;
  sha256: string;
  uploaded_by_user_id: string | null;
  uploaded_by_api_key_id: string | null;
  created_at: DefaultTimestamp;
}

export interface TagGroupsTable {
  workspace_id: string;
  id: string;
  name: string;
  color: string | null;
  exclusive: Generated<boolean>;
  position: Generated<number>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface TagsTable {
  workspace_id: string;
  id: string;
  name: string;
  color: string;
  description: Generated<string>;
  group_id: string | null;
  position: Generated<number>;
  archived: Generated<boolean>;
  applies_to: ColumnType<string[], string[] | undefined, string[]>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface TicketTagsTable {
  workspace_id: string;
  ticket_id: string;
  tag_id: string;
  created_at: DefaultTimestamp;
}

export interface ContactTagsTable {
  workspace_id: string;
  contact_id: string;
  tag_id: string;
  created_at: DefaultTimestamp;
}

export interface CompanyTagsTable {
  workspace_id: string;
  company_id: string;
  tag_id: string;
  created_at: DefaultTimestamp;
}

export interface CustomFieldsTable {
  workspace_id: string;
  id: string;
  entity: 'ticket' | 'contact' | 'company';
  key: string;
  name: string;
  type: string;
  options: DefaultJson<Array<{ id: string; label: string; color: string }>>;
  required_on_solve: Generated<boolean>;
  description: Generated<string>;
  position: Generated<number>;
  archived: Generated<boolean>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface ViewsTable {
  workspace_id: string;
  id: string;
  name: string;
  shared: Generated<boolean>;
  owner_id: string | null;
  position: Generated<number>;
  filters: DefaultJson;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface SavedRepliesTable {
  workspace_id: string;
  id: string;
  title: string;
  shortcut: string | null;
  body_html: string;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface WebhookEndpointsTable {
  workspace_id: string;
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: Generated<boolean>;
  team_ids: ColumnType<string[], string[] | undefined, string[]>;
  secret_enc: string;
  failing_since: NullableTimestamp;
  /** Events committed from this time on reach the endpoint (its creation, or when last switched on). */
  receives_from: DefaultTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface WebhookDeliveriesTable {
  workspace_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  manual: Generated<boolean>;
  status: ColumnType<'pending' | 'succeeded' | 'failed', 'pending' | 'succeeded' | 'failed' | undefined>;
  attempts: Generated<number>;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: NullableTimestamp;
  lease_until: NullableTimestamp;
  event_at: Timestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export type MailboxInboundKind = 'forwarding' | 'imap' | 'google' | 'microsoft';
export type MailboxOutboundKind = 'smtp' | 'google' | 'microsoft' | 'system';
export type MailboxStatus = 'active' | 'error' | 'disabled';

/** Mailbox connection settings, as given (defaults are applied where they are used). */
export interface MailboxConfig {
  imap_host?: string;
  imap_port?: number;
  imap_username?: string;
  imap_tls?: 'tls' | 'starttls' | 'none';
  smtp_host?: string;
  smtp_port?: number;
  smtp_username?: string;
  smtp_tls?: 'tls' | 'starttls' | 'none';
  oauth_email?: string;
}

export interface MailboxesTable {
  workspace_id: string;
  id: string;
  name: string;
  email: string;
  display_name: string;
  inbound_kind: MailboxInboundKind;
  outbound_kind: MailboxOutboundKind;
  forwarding_address: string;
  config: DefaultJson<MailboxConfig>;
  team_id: string | null;
  signature_html: Generated<string>;
  auto_reply_enabled: Generated<boolean>;
  auto_reply_subject: Generated<string>;
  auto_reply_html: Generated<string>;
  status: ColumnType<MailboxStatus, MailboxStatus | undefined, MailboxStatus>;
  last_error: string | null;
  last_synced_at: NullableTimestamp;
  trusted_form_senders: ColumnType<string[], string[] | undefined, string[]>;
  password_enc: string | null;
  smtp_password_enc: string | null;
  oauth_enc: string | null;
  oauth_expires_at: NullableTimestamp;
  imap_uidvalidity: ColumnType<number | null, number | null | undefined, number | null>;
  imap_last_uid: ColumnType<number | null, number | null | undefined, number | null>;
  /** The process polling this mailbox and until when (0013). */
  imap_lease_owner: string | null;
  imap_lease_until: NullableTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface MailboxAddressesTable {
  address: string;
  workspace_id: string;
  mailbox_id: string;
}

export type InboundEmailStatus = 'received' | 'processed' | 'failed' | 'unrouted';

export interface InboundEmailsTable {
  id: string;
  workspace_id: string | null;
  mailbox_id: string | null;
  recipient: string;
  source: ColumnType<
    'http' | 'imap' | 'google' | 'microsoft',
    'http' | 'imap' | 'google' | 'microsoft' | undefined,
    'http' | 'imap' | 'google' | 'microsoft'
  >;
  raw: Buffer;
  size_bytes: number;
  sha256: string;
  message_id: string | null;
  imap_uidvalidity: ColumnType<number | null, number | null | undefined, number | null>;
  imap_uid: ColumnType<number | null, number | null | undefined, number | null>;
  status: ColumnType<InboundEmailStatus, InboundEmailStatus | undefined, InboundEmailStatus>;
  error: string | null;
  attempts: Generated<number>;
  ticket_id: string | null;
  result_message_id: string | null;
  received_at: DefaultTimestamp;
  processed_at: NullableTimestamp;
}

/** One auto-reply per contact per mailbox per 24 hours (0014). */
export interface EmailAutoRepliesTable {
  workspace_id: string;
  mailbox_id: string;
  contact_id: string;
  last_sent_at: ColumnType<Date, Date | string, Date | string>;
}

/** Sortable values of tickets.fields, one row each, kept by a trigger (migration 0022). */
export interface TicketFieldSortKeysTable {
  workspace_id: string;
  ticket_id: string;
  field_key: string;
  value: Json<unknown>;
}

export interface NotificationsTable {
  workspace_id: string;
  id: string;
  user_id: string;
  type: string;
  ticket_id: string | null;
  data: Json;
  read_at: Date | null;
  created_at: DefaultTimestamp;
}

// --- issue 9 (workflow): automations, SLA and business hours, assignment, reports, onboarding.
// Each module's tables go below this line, in its own block.

// SLA policies and business hours (0019, src/modules/sla, src/modules/business-hours).
export interface SlaPoliciesTable {
  workspace_id: string;
  id: string;
  name: string;
  priority: string | null;
  first_response_minutes: number;
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

export interface DB {
  users: UsersTable;
  workspaces: WorkspacesTable;
  members: MembersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  invitations: InvitationsTable;
  sessions: SessionsTable;
  session_retired_tokens: SessionRetiredTokensTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  app_attest_challenges: AppAttestChallengesTable;
  app_attest_keys: AppAttestKeysTable;
  api_keys: ApiKeysTable;
  workspace_counters: WorkspaceCountersTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_logs: AuditLogsTable;
  companies: CompaniesTable;
  contacts: ContactsTable;
  tickets: TicketsTable;
  messages: MessagesTable;
  ticket_activities: TicketActivitiesTable;
  attachments: AttachmentsTable;
  tag_groups: TagGroupsTable;
  tags: TagsTable;
  ticket_tags: TicketTagsTable;
  contact_tags: ContactTagsTable;
  company_tags: CompanyTagsTable;
  custom_fields: CustomFieldsTable;
  views: ViewsTable;
  saved_replies: SavedRepliesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  mailboxes: MailboxesTable;
  mailbox_addresses: MailboxAddressesTable;
  inbound_emails: InboundEmailsTable;
  email_auto_replies: EmailAutoRepliesTable;
  notifications: NotificationsTable;
  ticket_field_sort_keys: TicketFieldSortKeysTable;
  // issue 9 tables:
  sla_policies: SlaPoliciesTable;
  business_hours: BusinessHoursTable;
  onboarding_dismissals: OnboardingDismissalsTable;
  automations: AutomationsTable;
  automation_run_counts: AutomationRunCountsTable;
  assignment_settings: AssignmentSettingsTable;
  assignment_rules: AssignmentRulesTable;
  assignment_pointers: AssignmentPointersTable;
  triage_settings: TriageSettingsTable;
}
