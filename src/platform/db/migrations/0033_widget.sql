-- The chat widget (src/modules/widget, docs/widget.md): a workspace's widget settings, and the
-- visitors' tokens (`svc_vis_…`, stored as SHA-256 hashes only), each bound to one workspace and
-- one contact. Uploads a visitor made are marked with the visitor's contact, so that only that
-- visitor can attach them to a message.

-- One row per workspace once an admin changed something or a visitor came from a browser; none
-- means the defaults (enabled, no greeting, email not required, every origin allowed).
CREATE TABLE widget_settings (
  workspace_id    uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  greeting        text NOT NULL DEFAULT '',
  require_email   boolean NOT NULL DEFAULT false,
  enabled         boolean NOT NULL DEFAULT true,
  -- Browser origins (scheme://host[:port], lower case) the widget's HTTP routes answer; empty: all.
  allowed_origins text[] NOT NULL DEFAULT '{}',
  -- The first widget session opened from a browser on an allowed origin (onboarding's install_widget).
  installed_at    timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A visitor's token: one workspace, one contact; revoked_at set when the visitor signs out.
CREATE TABLE widget_visitors (
  workspace_id uuid NOT NULL,
  id           uuid NOT NULL,
  contact_id   uuid NOT NULL,
  token_hash   text NOT NULL UNIQUE,
  -- An email the visitor typed that another contact already holds: kept here, never linked.
  email        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz,
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX widget_visitors_contact_idx ON widget_visitors (workspace_id, contact_id);

ALTER TABLE attachments ADD COLUMN uploaded_by_contact_id uuid;
