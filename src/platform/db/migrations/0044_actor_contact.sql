-- The contact who acted (issue 33): a chat visitor's or a customer's message reopening a ticket is
-- recorded as the system on the wire (the contract's actor types), with the contact beside it
-- (an activity's actor.contact_id; docs/decisions.md "Who a customer's message names as its
-- actor"). Null for every other actor, and for rows written before.
ALTER TABLE ticket_activities ADD COLUMN actor_contact_id uuid;
ALTER TABLE audit_logs ADD COLUMN actor_contact_id uuid;
