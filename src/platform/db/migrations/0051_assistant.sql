-- The assistant (docs/assistant.md): a person's conversations with it, each model turn and
-- person's message of them, the tool steps the model's calls became, and the actions (a write
-- tool's call) waiting for the person's approval.
CREATE TABLE assistant_sessions (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title        text NOT NULL DEFAULT '',
  -- Given at creation or renamed: the first message no longer titles it.
  titled       boolean NOT NULL DEFAULT false,
  -- The run under way (set atomically; a run older than the staleness bound no longer holds it).
  run_id       uuid,
  run_at       timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX assistant_sessions_by_user ON assistant_sessions (workspace_id, user_id, updated_at DESC);

-- The conversation as the model sees it: the person's messages (with the screen they were on)
-- and the model's turns (their text and the tool calls they made). Ordered by id (UUIDv7).
CREATE TABLE assistant_turns (
  workspace_id uuid NOT NULL,
  id           uuid NOT NULL,
  session_id   uuid NOT NULL,
  role         text NOT NULL CHECK (role IN ('user', 'assistant')),
  text         text NOT NULL DEFAULT '',
  context      jsonb,
  tool_calls   jsonb NOT NULL DEFAULT '[]',
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, session_id) REFERENCES assistant_sessions (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX assistant_turns_by_session ON assistant_turns (workspace_id, session_id, id);

-- One tool call of a model turn: what people see of it (label, status, summary, refs) and the
-- result the model was given (null while its approval is pending). `shown` false: a call not run
-- because an earlier call of the turn waits for approval (the model is told so; people are not).
CREATE TABLE assistant_steps (
  workspace_id uuid NOT NULL,
  id           uuid NOT NULL,
  session_id   uuid NOT NULL,
  turn_id      uuid NOT NULL,
  call_id      text NOT NULL,
  position     integer NOT NULL,
  tool         text NOT NULL,
  label        text NOT NULL,
  status       text NOT NULL CHECK (status IN (
                 'running', 'done', 'error', 'awaiting_approval', 'approved', 'denied', 'expired')),
  summary      text,
  refs         jsonb NOT NULL DEFAULT '[]',
  action_id    uuid,
  result       text,
  is_error     boolean NOT NULL DEFAULT false,
  shown        boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, turn_id) REFERENCES assistant_turns (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX assistant_steps_by_turn ON assistant_steps (workspace_id, turn_id, position);

-- A write tool's call waiting for the person's decision: what it would do (preview), what will
-- run (plan), and who may decide it (the person, in the sign-in session the approval was made
-- in: the token is an HMAC over these and the workspace, docs/assistant.md "Approvals").
CREATE TABLE assistant_actions (
  workspace_id       uuid NOT NULL,
  id                 uuid NOT NULL,
  session_id         uuid NOT NULL,
  step_id            uuid NOT NULL,
  user_id            uuid NOT NULL,
  sign_in_session_id uuid NOT NULL,
  tool               text NOT NULL,
  args               jsonb NOT NULL,
  plan               jsonb,
  preview            jsonb NOT NULL,
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  expires_at         timestamptz NOT NULL,
  decided_at         timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, session_id) REFERENCES assistant_sessions (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX assistant_actions_pending ON assistant_actions (workspace_id, session_id) WHERE status = 'pending';
