-- AI answers in the chat widget (docs/ai.md "AI answers in the chat"): a message the workspace's
-- assistant wrote has its own author type, and the monthly cap's notice goes out once per UTC
-- month (one row per workspace and month, inserted by the job that finds the cap reached).
ALTER TABLE messages DROP CONSTRAINT messages_author_type_check;
ALTER TABLE messages ADD CONSTRAINT messages_author_type_check
  CHECK (author_type IN ('contact', 'user', 'system', 'api', 'ai'));

CREATE TABLE widget_cap_notices (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- The first day of the UTC month the cap was reached in.
  month        date NOT NULL,
  cap_usd      numeric(12, 2) NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, month)
);
