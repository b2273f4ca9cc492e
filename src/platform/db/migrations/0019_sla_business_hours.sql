-- SLA policies, business hours, and what the SLA clocks keep on tickets.
--
-- A ticket's `sla` (jsonb) holds the policy and the due dates the API shows plus the clocks'
-- bookkeeping; two plain columns make its deadlines indexable:
-- - tickets.due_at (0007): the nearest due date of a running clock, breached or not (sort=due);
-- - tickets.sla_breach_at (here): the nearest due date of a running clock not yet marked
--   breached, what the breach sweep looks for (null when nothing can breach).

CREATE TABLE sla_policies (
  workspace_id           uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id                     uuid NOT NULL,
  name                   text NOT NULL,
  -- null: any priority.
  priority               text CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  first_response_minutes int4 NOT NULL CHECK (first_response_minutes BETWEEN 1 AND 525600),
  resolution_minutes     int4 NOT NULL CHECK (resolution_minutes BETWEEN 1 AND 525600),
  -- Count only open minutes of the workspace's business hours (when those are enabled).
  business_hours         boolean NOT NULL DEFAULT false,
  enabled                boolean NOT NULL DEFAULT true,
  position               int4 NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- Policies in evaluation order (the first enabled match wins).
CREATE INDEX sla_policies_position_idx ON sla_policies (workspace_id, position, created_at, id);

-- One row per workspace once business hours were saved; none means the defaults (disabled).
CREATE TABLE business_hours (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  enabled      boolean NOT NULL,
  timezone     text NOT NULL,
  schedule     jsonb NOT NULL,
  holidays     jsonb NOT NULL DEFAULT '[]',
  updated_at   timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE tickets ADD COLUMN sla_breach_at timestamptz;
-- The breach sweep, across workspaces, soonest first (like tickets_snoozed_idx).
CREATE INDEX tickets_sla_breach_idx ON tickets (sla_breach_at)
  WHERE sla_breach_at IS NOT NULL AND deleted_at IS NULL;
