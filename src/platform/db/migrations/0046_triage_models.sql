-- The dedicated triage engine (docs/ai.md "The dedicated engine"): one model per workspace,
-- trained on its solved tickets, kept here so that every process and a restart decide with it.
-- The row also debounces training: a solve queues one job per workspace (train_after set),
-- the job clears it before it reads the tickets, so a later solve queues the next one.
CREATE TABLE triage_models (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  -- When the queued training job runs (null: none queued).
  train_after  timestamptz,
  -- The model's name (dedicated-linear-v1), null before the first model.
  model        text,
  -- Classes, temperatures and held-out accuracy per field, the number of weight rows.
  meta         jsonb,
  -- The weights: the feature rows (int32), then per field its weights and biases (float32).
  weights      bytea,
  trained_at   timestamptz,
  trained_on   integer NOT NULL DEFAULT 0,
  -- Solved (and closed, and spam) tickets the last training run found.
  solved       integer NOT NULL DEFAULT 0,
  updated_at   timestamptz NOT NULL DEFAULT now()
);
