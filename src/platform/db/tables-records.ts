// Row types: tickets and what they carry (messages, activities, attachments, labels, fields),
// contacts and companies, views, saved replies, notifications.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type { DefaultJson, DefaultTimestamp, Json, NullableJson, NullableTimestamp, Timestamp } from './columns.js';

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
  /** An address a chat visitor typed (0042): never unique, never matched to mail. */
  unverified_email: string | null;
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
  author_type: 'contact' | 'user' | 'system' | 'api' | 'ai';
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
  /** The contact who acted (a visitor's or a customer's act, recorded as system). */
  actor_contact_id: Generated<string | null>;
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
  /** A widget visitor's upload (0033): only that visitor's messages may claim it. */
  uploaded_by_contact_id: Generated<string | null>;
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
