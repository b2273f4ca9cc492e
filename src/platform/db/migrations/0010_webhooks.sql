-- Outbound webhooks (issue 7): endpoints and their delivery records.
--
-- A delivery is one event for one endpoint. The row carries the exact body that is signed and
-- sent (the envelope without topics), so retries and redeliveries send the same bytes even after
-- the event itself was pruned. The unique index makes the dispatcher idempotent: the bus is
-- at-least-once and every process subscribes, but an event yields one automatic delivery per
-- endpoint. Tests and redeliveries (`manual`) are extra rows outside that index.

CREATE TABLE webhook_endpoints (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  url           text NOT NULL,
  events        text[] NOT NULL,
  description   text,
  enabled       boolean NOT NULL DEFAULT true,
  team_ids      uuid[] NOT NULL DEFAULT '{}',
  -- `whsec_…`, sealed with SECRET_KEY (AES-256-GCM, bound to the endpoint id).
  secret_enc    text NOT NULL,
  -- The first failed attempt since the last success; null while healthy. Three days of
  -- failures disable the endpoint.
  failing_since timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX webhook_endpoints_created_idx ON webhook_endpoints (workspace_id, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
  workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id              uuid NOT NULL,
  endpoint_id     uuid NOT NULL,
  event_id        uuid NOT NULL,
  event_type      text NOT NULL,
  payload         text NOT NULL,
  -- webhook.test and redeliveries: asked for by a person, sent even while the endpoint is paused.
  manual          boolean NOT NULL DEFAULT false,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  response_status integer,
  duration_ms     integer,
  error           text,
  -- When the next attempt is due (null once the delivery succeeded or failed for good).
  next_attempt_at timestamptz,
  -- A worker holds the delivery until then while it attempts it (a crash lets it go).
  lease_until     timestamptz,
  -- When the event was committed (its occurred_at): commit-to-attempt delay.
  event_at        timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, endpoint_id) REFERENCES webhook_endpoints (workspace_id, id) ON DELETE CASCADE
);
-- One automatic delivery per (event, endpoint); "does this event have deliveries" for the sweep.
CREATE UNIQUE INDEX webhook_deliveries_event_key ON webhook_deliveries (workspace_id, event_id, endpoint_id)
  WHERE NOT manual;
-- An endpoint's deliveries, newest first (GET /v1/webhooks/{id}/deliveries).
CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (workspace_id, endpoint_id, created_at DESC, id DESC);
-- Pending deliveries by due time: the recovery sweep, small since finished rows leave it.
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (workspace_id, next_attempt_at)
  WHERE status = 'pending';
-- Pruning finished deliveries by age.
CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (workspace_id, created_at);
