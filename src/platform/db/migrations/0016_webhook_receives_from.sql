-- An endpoint receives the events committed after it was created and, once paused, after it was
-- switched back on: events of the paused time are not delivered later by the sweep (which finds
-- committed events without deliveries) just because the endpoint is enabled again by then.
ALTER TABLE webhook_endpoints ADD COLUMN receives_from timestamptz;
UPDATE webhook_endpoints SET receives_from = created_at;
ALTER TABLE webhook_endpoints ALTER COLUMN receives_from SET NOT NULL;
ALTER TABLE webhook_endpoints ALTER COLUMN receives_from SET DEFAULT now();
