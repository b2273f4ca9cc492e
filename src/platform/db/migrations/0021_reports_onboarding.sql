-- Reports (GET /v1/reports/overview), the onboarding checklist's dismissals, and the auto-close
-- of solved tickets (issue 9, parts 6 and 7).
--
-- Reports read two cohorts of live tickets per range: those created in it (tickets_created_idx,
-- 0007) and those solved in it (below). solved_at is only ever set on solved and closed tickets.
CREATE INDEX tickets_solved_idx ON tickets (workspace_id, solved_at)
  WHERE deleted_at IS NULL AND solved_at IS NOT NULL;

-- Auto-close: each workspace's solved (not yet closed) tickets, oldest solve first. Only the
-- tickets waiting to close are in it, not the closed history.
CREATE INDEX tickets_auto_close_idx ON tickets (workspace_id, solved_at)
  WHERE status = 'solved' AND deleted_at IS NULL;

-- Onboarding's install_widget step: has the workspace ever had a chat ticket.
CREATE INDEX tickets_chat_idx ON tickets (workspace_id) WHERE channel = 'chat';

-- A member who hid the onboarding checklist (per person and workspace).
CREATE TABLE onboarding_dismissals (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  user_id      uuid NOT NULL,
  dismissed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id),
  -- Leaving the workspace forgets the choice.
  FOREIGN KEY (workspace_id, user_id) REFERENCES members (workspace_id, user_id) ON DELETE CASCADE
);
