// Row types: webhooks, mailboxes and the email channel.
import type { ColumnType, Generated } from 'kysely';
import type { DefaultJson, DefaultTimestamp, NullableTimestamp, Timestamp } from './columns.js';

export interface WebhookEndpointsTable {
  workspace_id: string;
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: Generated<boolean>;
  team_ids: ColumnType<string[], string[] | undefined, string[]>;
  secret_enc: string;
  /** The secret a rotation replaced, still signing deliveries until previous_secret_expires_at (0039). */
  previous_secret_enc: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: NullableTimestamp;
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

export type MailOutboxKind =
  | 'reply'
  | 'auto_reply'
  | 'csat_request'
  | 'portal_confirmation'
  | 'portal_sign_in'
  | 'invitation'
  | 'notice';

/** Mail kept instead of sent while SMTP_URL is unset (0041; src/platform/mail/outbox.ts). */
export interface MailOutboxTable {
  workspace_id: string;
  id: string;
  kind: MailOutboxKind;
  from_address: string;
  to_addresses: string[];
  cc_addresses: ColumnType<string[], string[] | undefined, string[]>;
  bcc_addresses: ColumnType<string[], string[] | undefined, string[]>;
  subject: string;
  /** Sealed JSON {text, html}. */
  body_enc: string;
  attachments: DefaultJson<OutboxAttachment[]>;
  ticket_id: string | null;
  message_id: string | null;
  created_at: DefaultTimestamp;
}

export interface OutboxAttachment {
  filename: string;
  content_type: string;
  size_bytes: number;
}

/** Sortable values of tickets.fields, one row each, kept by a trigger (migration 0022). */
