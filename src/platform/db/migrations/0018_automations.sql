-- Automations: rules run inside a ticket's transaction on ticket_created, customer_replied,
-- agent_replied and ticket_updated (src/modules/automations). Conditions and actions are
-- validated when saved and stored as JSON arrays.
CREATE TABLE automations (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  trigger      text NOT NULL
                 CHECK (trigger IN ('ticket_created', 'customer_replied', 'agent_replied', 'ticket_updated')),
  conditions   jsonb NOT NULL DEFAULT '[]'::jsonb,
  actions      jsonb NOT NULL DEFAULT '[]'::jsonb,
  enabled      boolean NOT NULL DEFAULT true,
  position     integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- The engine's one query per ticket change: the enabled automations of a trigger, in order.
CREATE INDEX automations_run ON automations (workspace_id, trigger, position, id) WHERE enabled;
-- The list, by position.
CREATE INDEX automations_list ON automations (workspace_id, position, id);

-- run_count: runs whose conditions held. A narrow row of its own, updated after each ticket
-- change commits, so the counter's row versions never bloat the table and index the engine
-- reads on every ticket change; free space on each page keeps its updates HOT.
CREATE TABLE automation_run_counts (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  automation_id uuid NOT NULL,
  run_count     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, automation_id),
  FOREIGN KEY (workspace_id, automation_id) REFERENCES automations (workspace_id, id) ON DELETE CASCADE
) WITH (fillfactor = 50);
