-- Marking an event published must not cost a second row version with new index entries.
-- An UPDATE can be "HOT" (in place on its page, no index writes) only when no index
-- involves the changed column, not even in a partial index's WHERE, and the page has room:
-- drop the partial index on `published`, leave room on each page, and let the sweeper find
-- recent unpublished events by time instead.
DROP INDEX events_unpublished_idx;
ALTER TABLE events SET (fillfactor = 80);
-- The sweeper's scan across workspaces (recent events only); a per-shard index when the
-- schema is distributed by workspace.
CREATE INDEX events_time_idx ON events (occurred_at);
