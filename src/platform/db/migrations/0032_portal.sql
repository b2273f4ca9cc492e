-- The customer portal (src/modules/portal, docs/help-center.md "Where customers go"): one-time
-- sign-in links, customer sessions, and the marks the portal's per-address limits count.
-- Secrets are stored as SHA-256 hashes only (the link's token, the session's cookie value).

-- A sign-in link mailed to a contact: single use (used_at), valid 15 minutes (expires_at).
CREATE TABLE portal_sign_in_links (
  workspace_id uuid NOT NULL,
  id           uuid NOT NULL,
  contact_id   uuid NOT NULL,
  token_hash   text NOT NULL UNIQUE,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX portal_sign_in_links_expires_idx ON portal_sign_in_links (expires_at);

-- A customer's session: one workspace, one contact; it ends when idle past expires_at (moved
-- forward while used) or when the customer signs out (the row is deleted).
CREATE TABLE portal_sessions (
  workspace_id uuid NOT NULL,
  id           uuid NOT NULL,
  contact_id   uuid NOT NULL,
  token_hash   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX portal_sessions_expires_idx ON portal_sessions (expires_at);

-- One mark per counted attempt (a contact form sent, a sign-in link asked for), per bucket: a
-- keyed hash of the client's address or of the email address, never the address itself.
-- Marks older than an hour are pruned by the hourly maintenance job.
CREATE TABLE portal_limit_marks (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  bucket       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_limit_marks_bucket_idx ON portal_limit_marks (workspace_id, bucket, created_at);
CREATE INDEX portal_limit_marks_created_idx ON portal_limit_marks (created_at);
