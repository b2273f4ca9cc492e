-- Semantic search (docs/ai.md "Semantic search"): one vector per ticket (its subject), message
-- (its text) and published article (title and text), with the model that made it, so a model
-- change embeds again. Vectors are float32, little-endian, of unit length; the search reads
-- them into each process and scans them exactly (no pgvector here: docs/decisions.md).
CREATE TABLE embeddings (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('ticket', 'message', 'article')),
  object_id    uuid NOT NULL,
  -- The ticket of a ticket or message row (null for articles): results are tickets.
  ticket_id    uuid,
  model        text NOT NULL,
  -- SHA-256 of the text embedded: the same text is not embedded twice.
  digest       text NOT NULL,
  vector       bytea NOT NULL,
  -- Bumped on every write: a process reads only the rows it has not seen.
  seq          bigint NOT NULL,
  PRIMARY KEY (workspace_id, kind, object_id)
);
CREATE SEQUENCE embeddings_seq;
CREATE INDEX embeddings_by_seq ON embeddings (workspace_id, model, seq);

-- What waits to be embedded (written after the change commits, read in batches by the job).
CREATE TABLE embedding_queue (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('ticket', 'message', 'article')),
  object_id    uuid NOT NULL,
  queued_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, kind, object_id)
);
