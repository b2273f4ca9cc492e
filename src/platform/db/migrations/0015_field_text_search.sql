-- q over ticket text fields without reading every ticket: the string values of a ticket's
-- custom fields, joined, under a trigram index (leading with workspace_id through btree_gin).
-- The list filters with `field_text(fields) ILIKE pattern` first (the index) and then with the
-- exact per-field predicate, so values of other types or across two values never match alone.
CREATE FUNCTION field_text(f jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT coalesce(string_agg(v.value, E'\n'), '') FROM jsonb_each_text(f) AS v $$;

CREATE INDEX tickets_field_text_trgm_idx ON tickets USING gin (workspace_id, field_text(fields) gin_trgm_ops)
  WHERE deleted_at IS NULL;
