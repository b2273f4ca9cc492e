-- AI for agents (docs/ai.md). Per workspace: the AI settings (features, models, widget cap) and
-- an optional own provider key, sealed with the secret box; and the usage of every call, append
-- only, which GET /v1/ai/config (`metered`), the billing issue's balance and its usage report read.
CREATE TABLE ai_settings (
  workspace_id           uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  -- The `features` object of GET /v1/ai/config as stored: enabled, auto_triage, auto_summarize,
  -- widget_answers, assistant, tone, reply_language, instructions (absent keys take defaults).
  features               jsonb NOT NULL DEFAULT '{}',
  -- '' = the instance's default (AI_MODEL, AI_FAST_MODEL), otherwise an id from the catalog.
  model                  text NOT NULL DEFAULT '',
  fast_model             text NOT NULL DEFAULT '',
  widget_model           text NOT NULL DEFAULT '',
  widget_monthly_cap_usd numeric(12, 2) NOT NULL DEFAULT 0,
  -- The workspace's own provider key: its calls cost 0. A refused key is turned off
  -- (own_key_status 'failed', admins notified with ai_key_failed) until replaced.
  own_key_provider       text CHECK (own_key_provider IN ('openai', 'anthropic')),
  own_key_sealed         text,
  own_key_base_url       text,
  own_key_last4          text,
  own_key_status         text CHECK (own_key_status IN ('active', 'failed')),
  own_key_error          text,
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ai_usage (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  -- One of the 13 `costs` keys of GET /v1/ai/config.
  feature       text NOT NULL CHECK (feature IN (
                  'summarize', 'rewrite', 'translate', 'triage', 'decide', 'answer_check', 'copilot',
                  'draft_reply', 'answer', 'answer_email', 'playground', 'kb_draft', 'assistant')),
  model         text NOT NULL,
  -- instance: the operator's provider (charged); own_key: the workspace's key (cost 0).
  source        text NOT NULL CHECK (source IN ('instance', 'own_key')),
  input_tokens  integer NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  output_tokens integer NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
  -- US dollars, kept to 0.000001.
  cost_usd      numeric(14, 6) NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
  -- The member whose action made the call; null for automations and the AI agent.
  user_id       uuid,
  -- ok; cancelled (the client went away: charged for what was generated); failed (costs nothing).
  outcome       text NOT NULL CHECK (outcome IN ('ok', 'cancelled', 'failed')),
  ticket_id     uuid,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- A month's spend and the usage report walk a workspace's calls by time.
CREATE INDEX ai_usage_by_time ON ai_usage (workspace_id, created_at);
