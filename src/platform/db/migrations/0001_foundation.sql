-- Foundation: people, workspaces, membership, sessions, API keys, the event outbox,
-- idempotency records and the audit log. Every tenant table leads with workspace_id
-- (primary key and indexes) so the schema can be distributed by workspace unchanged.

CREATE TABLE users (
  id            uuid PRIMARY KEY,
  email         text NOT NULL,
  name          text NOT NULL,
  password_hash text NOT NULL,
  avatar_url    text,
  avatar_source text,
  mfa_secret    text,
  mfa_enabled   boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE workspaces (
  id            uuid PRIMARY KEY,
  name          text NOT NULL,
  slug          text NOT NULL,
  widget_key    text NOT NULL,
  settings      jsonb NOT NULL DEFAULT '{}',
  avatar_url    text,
  avatar_source text,
  images        jsonb NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspaces_slug_key ON workspaces (slug);
CREATE UNIQUE INDEX workspaces_widget_key_key ON workspaces (widget_key);

CREATE TABLE members (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'agent', 'viewer')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

-- A sign-in: the refresh token (hash only) rotates on every use.
CREATE TABLE sessions (
  id           uuid PRIMARY KEY,
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  refresh_hash text NOT NULL,
  native       boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
CREATE UNIQUE INDEX sessions_refresh_key ON sessions (refresh_hash);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE api_keys (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  prefix       text NOT NULL,
  key_hash     text NOT NULL,
  scopes       text[] NOT NULL,
  created_by   uuid REFERENCES users (id) ON DELETE SET NULL,
  expires_at   timestamptz,
  last_used_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- The one lookup that cannot know the workspace first: the presented secret's hash.
CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash);

-- Per-workspace counters (event seq; later ticket numbers). One row per (workspace, name):
-- the row lock is what serialises a workspace's writers, so it is taken right before COMMIT.
CREATE TABLE workspace_counters (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name         text NOT NULL,
  value        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, name)
);

-- The outbox: every change others should see, in the same transaction as the change.
CREATE TABLE events (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  seq          bigint NOT NULL,
  id           uuid NOT NULL,
  type         text NOT NULL,
  visibility   text NOT NULL CHECK (visibility IN ('agents', 'public')),
  topics       text[] NOT NULL,
  team_id      uuid,
  data         jsonb NOT NULL,
  occurred_at  timestamptz NOT NULL,
  published    boolean NOT NULL DEFAULT false,
  PRIMARY KEY (workspace_id, seq)
);
CREATE INDEX events_occurred_idx ON events (workspace_id, occurred_at);
CREATE INDEX events_unpublished_idx ON events (workspace_id, seq) WHERE NOT published;

-- Stored results of POST requests carrying Idempotency-Key, per caller, for 24 hours.
CREATE TABLE idempotency_keys (
  caller        text NOT NULL,
  key           text NOT NULL,
  workspace_id  uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  route         text NOT NULL,
  body_hash     text NOT NULL,
  state         text NOT NULL CHECK (state IN ('running', 'done')),
  status_code   integer,
  headers       jsonb,
  body          text,
  locked_until  timestamptz NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (caller, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

CREATE TABLE audit_logs (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  actor_type   text NOT NULL,
  actor_user_id uuid,
  actor_api_key_id uuid,
  action       text NOT NULL,
  entity_type  text NOT NULL,
  entity_id    text,
  data         jsonb NOT NULL DEFAULT '{}',
  ip           text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX audit_logs_created_idx ON audit_logs (workspace_id, created_at DESC, id DESC);
