-- Members' availability fields, teams (private teams restrict ticket visibility),
-- invitations, and the workspace's widget secret (encrypted at rest).

ALTER TABLE members ADD COLUMN availability text NOT NULL DEFAULT 'online'
  CHECK (availability IN ('online', 'away', 'offline'));
ALTER TABLE members ADD COLUMN max_open_tickets integer;
ALTER TABLE members ADD COLUMN last_seen_at timestamptz;
ALTER TABLE members ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

ALTER TABLE workspaces ADD COLUMN widget_secret_enc text;

CREATE TABLE teams (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  private      boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE UNIQUE INDEX teams_name_key ON teams (workspace_id, lower(name));

CREATE TABLE team_members (
  workspace_id uuid NOT NULL,
  team_id      uuid NOT NULL,
  user_id      uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, team_id, user_id),
  FOREIGN KEY (workspace_id, team_id) REFERENCES teams (workspace_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, user_id) REFERENCES members (workspace_id, user_id) ON DELETE CASCADE
);
CREATE INDEX team_members_user_idx ON team_members (workspace_id, user_id);

CREATE TABLE invitations (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('admin', 'agent', 'viewer')),
  token_hash   text NOT NULL,
  invited_by   uuid REFERENCES users (id) ON DELETE SET NULL,
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  accepted_by  uuid REFERENCES users (id) ON DELETE SET NULL,
  revoked_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- Looked up by the token alone (the accept link carries no workspace).
CREATE UNIQUE INDEX invitations_token_key ON invitations (token_hash);
CREATE INDEX invitations_created_idx ON invitations (workspace_id, created_at DESC, id DESC);
