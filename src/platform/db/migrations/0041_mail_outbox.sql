-- The outbox of outgoing mail (GET /v1/mail/outbox): every mail the service would have sent
-- through the system mailer while SMTP_URL is unset (replies of mailboxes that send through it,
-- replies of a workspace without a mailbox, auto-replies, rating requests, the portal's
-- confirmations and sign-in links, invitations, notices to admins) is kept here instead, for the
-- workspace's owners and admins to read, as a developer's mail catcher would. Bodies carry
-- secrets (sign-in and invitation links): text and HTML are sealed with the secret box, bound to
-- the workspace and the row. Kept 30 days, and at most 1,000 mails per workspace.
CREATE TABLE mail_outbox (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  kind         text NOT NULL CHECK (kind IN (
                 'reply', 'auto_reply', 'csat_request', 'portal_confirmation', 'portal_sign_in',
                 'invitation', 'notice')),
  -- The headers as they would have been sent (one address a line, names included).
  from_address text NOT NULL,
  to_addresses text[] NOT NULL,
  cc_addresses text[] NOT NULL DEFAULT '{}',
  bcc_addresses text[] NOT NULL DEFAULT '{}',
  subject      text NOT NULL,
  -- Sealed JSON {text, html}.
  body_enc     text NOT NULL,
  -- [{filename, content_type, size_bytes}] of a reply's attachments (their bytes stay in storage).
  attachments  jsonb NOT NULL DEFAULT '[]',
  -- The ticket and message it belongs to, when it does (a reply, a rating request).
  ticket_id    uuid,
  message_id   uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- The list, newest first; the cap per workspace and the age limit walk it too.
CREATE INDEX mail_outbox_list_idx ON mail_outbox (workspace_id, created_at DESC, id DESC);
