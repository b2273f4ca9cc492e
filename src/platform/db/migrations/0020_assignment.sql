-- Assignment and triage settings (issue 9). The members' own columns (availability,
-- max_open_tickets, last_seen_at) exist since 0002. The workspace's assignment mode is
-- workspaces.settings->>'auto_assign' (one value with GET /v1/assignment's mode), so it is
-- not stored here.

-- Auto-away per workspace (0 = off, otherwise 10 to 1440 minutes).
CREATE TABLE assignment_settings (
  workspace_id      uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  auto_away_minutes integer NOT NULL DEFAULT 0
    CHECK (auto_away_minutes = 0 OR auto_away_minutes BETWEEN 10 AND 1440),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- Rules per mailbox or team, in the order the admin gave them (the first match wins). A rule
-- goes with its mailbox or team.
CREATE TABLE assignment_rules (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  position     integer NOT NULL,
  target_type  text NOT NULL CHECK (target_type IN ('mailbox', 'team')),
  mailbox_id   uuid,
  team_id      uuid,
  mode         text NOT NULL CHECK (mode IN ('none', 'round_robin', 'load_balanced')),
  PRIMARY KEY (workspace_id, position),
  CHECK ((target_type = 'mailbox') = (mailbox_id IS NOT NULL)),
  CHECK ((target_type = 'team') = (team_id IS NOT NULL)),
  FOREIGN KEY (workspace_id, mailbox_id) REFERENCES mailboxes (workspace_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, team_id) REFERENCES teams (workspace_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX assignment_rules_mailbox_key ON assignment_rules (workspace_id, mailbox_id)
  WHERE mailbox_id IS NOT NULL;
CREATE UNIQUE INDEX assignment_rules_team_key ON assignment_rules (workspace_id, team_id)
  WHERE team_id IS NOT NULL;

-- Round-robin position per scope ('workspace', 'mailbox:<id>', 'team:<id>'): the member picked
-- last. Locked FOR UPDATE by each assignment, so turns are fair across processes, restarts and
-- concurrent creates.
CREATE TABLE assignment_pointers (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  scope        text NOT NULL,
  last_user_id uuid,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, scope)
);

-- Triage settings (used by the AI issue). A workspace without a row has the defaults.
CREATE TABLE triage_settings (
  workspace_id        uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  auto_triage         boolean NOT NULL DEFAULT false,
  fields              jsonb NOT NULL DEFAULT '["priority", "severity", "labels"]'::jsonb,
  assign_after_triage boolean NOT NULL DEFAULT false,
  threshold           double precision NOT NULL DEFAULT 0.7 CHECK (threshold >= 0.5 AND threshold <= 0.99),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
