-- IMAP polling and Google / Microsoft mailboxes (issue 8 parts 7 and 8).
--
-- One poller per mailbox across all processes: a process polls a mailbox only while it holds
-- its lease (renewed every few seconds; a process that dies lets it lapse and another takes
-- over). The position updates (imap_uidvalidity, imap_last_uid) are fenced by the lease owner,
-- so a process that lost its lease cannot move the position back.
ALTER TABLE mailboxes
  ADD COLUMN imap_lease_owner text,
  ADD COLUMN imap_lease_until timestamptz;

-- The pollers' scan: mailboxes that receive through IMAP (by password or OAuth) and are not
-- disabled, in every workspace.
CREATE INDEX mailboxes_pollable_idx ON mailboxes (inbound_kind, status)
  WHERE inbound_kind <> 'forwarding' AND status <> 'disabled';
