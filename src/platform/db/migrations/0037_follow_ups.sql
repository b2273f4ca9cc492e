-- The follow-ups of a ticket (GET /v1/tickets?follow_up_of=<id>): a customer's message on a
-- closed ticket opens a new one that links back in custom.follow_up_of (mail, portal, widget).
-- Few tickets carry the link, so the index holds only those.
CREATE INDEX tickets_follow_up_of ON tickets (workspace_id, ((custom -> 'follow_up_of' ->> 'id')))
  WHERE custom ? 'follow_up_of';
