-- At most one pending invitation per email in a workspace: a new invitation for the same
-- address replaces (revokes) the pending one in the same transaction, and two concurrent
-- invitations for one address cannot both stay pending.
CREATE UNIQUE INDEX invitations_pending_email_key ON invitations (workspace_id, lower(email))
  WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- The audit log filtered by action (GET /v1/audit-logs?action=), newest first.
CREATE INDEX audit_logs_action_idx ON audit_logs (workspace_id, action, created_at DESC, id DESC);

-- Members listed in the order they joined (GET /v1/members).
CREATE INDEX members_created_idx ON members (workspace_id, created_at, user_id);
