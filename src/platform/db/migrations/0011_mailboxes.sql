-- The email channel (issue 8): mailboxes, the durable spool of raw inbound mail, and the
-- columns messages need for threading and de-duplication by Message-ID.
--
-- Secrets (the IMAP password, the SMTP password, OAuth tokens) are sealed with SECRET_KEY
-- (AES-256-GCM, bound to the workspace and mailbox ids) and never leave the server.

CREATE TABLE mailboxes (
  workspace_id         uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id                   uuid NOT NULL,
  name                 text NOT NULL,
  email                text NOT NULL,
  display_name         text NOT NULL,
  inbound_kind         text NOT NULL CHECK (inbound_kind IN ('forwarding', 'imap', 'google', 'microsoft')),
  outbound_kind        text NOT NULL CHECK (outbound_kind IN ('smtp', 'google', 'microsoft', 'system')),
  -- Generated once, never changed (people configure forwarding rules with it); also in
  -- mailbox_addresses, which routes inbound mail to the mailbox.
  forwarding_address   text NOT NULL,
  -- imap_host, imap_port, imap_username, imap_tls, smtp_host, smtp_port, smtp_username,
  -- smtp_tls, oauth_email: as given, defaults applied where used.
  config               jsonb NOT NULL DEFAULT '{}',
  team_id              uuid,
  signature_html       text NOT NULL DEFAULT '',
  auto_reply_enabled   boolean NOT NULL DEFAULT false,
  auto_reply_subject   text NOT NULL DEFAULT '',
  auto_reply_html      text NOT NULL DEFAULT '',
  status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'error', 'disabled')),
  last_error           text,
  last_synced_at       timestamptz,
  -- Exact addresses or `@domain`, lower-cased (at most 50).
  trusted_form_senders text[] NOT NULL DEFAULT '{}',
  -- Sealed secrets (`v1.<iv>.<tag>.<ciphertext>`); null when not set.
  password_enc         text,
  smtp_password_enc    text,
  -- Google / Microsoft: sealed JSON {access_token, refresh_token, scope}, and when the access
  -- token expires (kept in clear so the refresher finds due tokens without opening them).
  oauth_enc            text,
  oauth_expires_at     timestamptz,
  -- IMAP polling position: nothing fetched twice or missed across restarts. A new
  -- UIDVALIDITY means the server renumbered the folder.
  imap_uidvalidity     int8,
  imap_last_uid        int8,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  -- Deleting a team leaves its mailboxes without a team.
  FOREIGN KEY (workspace_id, team_id) REFERENCES teams (workspace_id, id) ON DELETE SET NULL (team_id)
);
CREATE UNIQUE INDEX mailboxes_email_key ON mailboxes (workspace_id, lower(email));
CREATE INDEX mailboxes_created_idx ON mailboxes (workspace_id, created_at DESC, id DESC);

-- Inbound routing: a recipient address (lower-cased) to its mailbox. Inbound mail arrives
-- before anyone knows its workspace, so this small table is keyed by the address alone (a
-- reference table when the schema is distributed by workspace).
CREATE TABLE mailbox_addresses (
  address      text PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  mailbox_id   uuid NOT NULL,
  FOREIGN KEY (workspace_id, mailbox_id) REFERENCES mailboxes (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX mailbox_addresses_mailbox_idx ON mailbox_addresses (workspace_id, mailbox_id);

-- The spool of raw inbound mail: a message is stored here (bytes as received) before the
-- inbound route answers 202, then processed by a job; a crash between the two loses nothing.
-- Its workspace is known only once the recipient is routed, so workspace_id is null for mail
-- that matched no mailbox (status unrouted, kept for the operator).
CREATE TABLE inbound_emails (
  id               uuid PRIMARY KEY,
  workspace_id     uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  mailbox_id       uuid,
  -- The recipient the mail was delivered for (`to` of the inbound route, or the IMAP mailbox).
  recipient        text NOT NULL,
  source           text NOT NULL DEFAULT 'http' CHECK (source IN ('http', 'imap', 'google', 'microsoft')),
  raw              bytea NOT NULL,
  size_bytes       int4 NOT NULL,
  sha256           text NOT NULL,
  -- The Message-ID header, when the mail has one (de-duplication happens on messages).
  message_id       text,
  -- IMAP origin: the same UID in the same UIDVALIDITY is the same mail.
  imap_uidvalidity int8,
  imap_uid         int8,
  status           text NOT NULL DEFAULT 'received'
                     CHECK (status IN ('received', 'processed', 'failed', 'unrouted')),
  error            text,
  attempts         int4 NOT NULL DEFAULT 0,
  -- What it became (or the duplicate it was).
  ticket_id        uuid,
  result_message_id uuid,
  received_at      timestamptz NOT NULL DEFAULT now(),
  processed_at     timestamptz
);
-- The sweeper: mail received and not yet processed, oldest first.
CREATE INDEX inbound_emails_pending_idx ON inbound_emails (received_at) WHERE status = 'received';
CREATE INDEX inbound_emails_unrouted_idx ON inbound_emails (received_at DESC) WHERE status = 'unrouted';
CREATE INDEX inbound_emails_mailbox_idx ON inbound_emails (workspace_id, mailbox_id, received_at DESC)
  WHERE workspace_id IS NOT NULL;
CREATE UNIQUE INDEX inbound_emails_imap_key ON inbound_emails (workspace_id, mailbox_id, imap_uidvalidity, imap_uid)
  WHERE imap_uid IS NOT NULL;

-- Messages (0007 has has_quoted, original_*, reply_to, auth_failed, form_sender,
-- delivery_status, delivery_error, email_message_id): the mailbox a mail came in or went out
-- through, its threading headers, and the spooled raw mail it was made from. No foreign keys
-- to mailboxes or inbound_emails: deleting a mailbox or pruning the spool keeps the messages.
ALTER TABLE messages
  ADD COLUMN mailbox_id        uuid,
  ADD COLUMN email_in_reply_to text,
  ADD COLUMN email_references  text[] NOT NULL DEFAULT '{}',
  ADD COLUMN raw_inbound_id    uuid;
-- De-duplication: one message per Message-ID per mailbox (the same mail twice makes one message).
CREATE UNIQUE INDEX messages_email_message_id_key ON messages (workspace_id, mailbox_id, email_message_id)
  WHERE mailbox_id IS NOT NULL AND email_message_id IS NOT NULL;
-- Threading: In-Reply-To / References against the Message-IDs stored and sent in the workspace.
CREATE INDEX messages_email_message_id_idx ON messages (workspace_id, email_message_id)
  WHERE email_message_id IS NOT NULL;
