-- Inbound email (issue 8 parts 2 to 5): what an inbound message keeps for outbound threading
-- and for loop protection.
--
-- email_message_id (0007) is the normal form (lowercased, no brackets; message-id.ts) that
-- de-duplication and threading compare. Replies must repeat a customer's Message-ID exactly
-- as their client wrote it (clients compare ids as strings), so the as-sent form is kept
-- beside it; email_in_reply_to and email_references (0011) hold the as-sent forms too. For
-- outbound messages the two forms are equal (our ids are lowercase already).
ALTER TABLE messages
  ADD COLUMN email_message_id_sent text,
  -- Why an inbound mail is automatic (the email module's autoSubmitted: auto_submitted,
  -- auto_reply, bulk, mailing_list, bounce, no_reply_sender), or null for mail a person sent.
  -- Such mail never gets an auto-reply and never reopens a ticket.
  ADD COLUMN email_auto_submitted text;

-- The spool's operator view: mail of one status, newest first (unrouted has its own index).
CREATE INDEX inbound_emails_failed_idx ON inbound_emails (received_at DESC) WHERE status = 'failed';
