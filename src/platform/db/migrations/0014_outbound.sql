-- Outbound email (issue 8 part 6) and auto-replies (part 5).
--
-- A reply on an email ticket is its own delivery record: the message row, written pending in
-- the transaction that creates it. A job sends it after COMMIT; a sweep queues again pending
-- messages whose job was lost (the process died between COMMIT and queueing, or mid-attempt).
-- The lease stops two workers from sending the same message at once.
ALTER TABLE messages
  ADD COLUMN delivery_attempts    int4 NOT NULL DEFAULT 0,
  ADD COLUMN delivery_next_at     timestamptz,
  ADD COLUMN delivery_lease_until timestamptz,
  -- The last temporary failure while retries remain (delivery_error is set only once the
  -- message has failed for good, with its message.updated event).
  ADD COLUMN delivery_last_error  text;
-- The recovery sweep: pending deliveries by when they are due (null: due since creation).
CREATE INDEX messages_delivery_pending_idx ON messages ((coalesce(delivery_next_at, created_at)))
  WHERE delivery_status = 'pending';

-- Auto-replies: at most one per contact per mailbox in 24 hours. The row is claimed with one
-- upsert (only when the last one is older than a day), so two mails at once send one.
CREATE TABLE email_auto_replies (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  mailbox_id   uuid NOT NULL,
  contact_id   uuid NOT NULL,
  last_sent_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, mailbox_id, contact_id)
);
