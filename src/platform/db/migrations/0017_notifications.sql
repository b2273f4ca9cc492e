-- Notifications: one row per recipient. Ticket notices carry the ticket (its number and subject
-- are read live when listed); workspace notices (AI balance, keys) have none.
CREATE TABLE notifications (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type         text NOT NULL,
  ticket_id    uuid,
  data         jsonb NOT NULL DEFAULT '{}'::jsonb,
  read_at      timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
-- A person's list, newest first; and unread first.
CREATE INDEX notifications_user_created ON notifications (workspace_id, user_id, created_at DESC, id DESC);
CREATE INDEX notifications_user_unread ON notifications (workspace_id, user_id, created_at DESC, id DESC)
  WHERE read_at IS NULL;
