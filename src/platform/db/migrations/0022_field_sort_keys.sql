-- Sorting tickets by a number, date or checkbox field (sort=field.<key>) without reading every
-- match: each such value of tickets.fields is copied, by a trigger, into a row of its own whose
-- index is in sort order, so a page walks that index and stops after `limit` matches. The
-- values are the JSON values as tickets.fields holds them (numbers, true/false, YYYY-MM-DD
-- strings), so the order is jsonb's: the same as sorting on `fields -> key` itself. Text and
-- select fields keep sorting on the expression (lower-case text; option position).
CREATE TABLE ticket_field_sort_keys (
  workspace_id uuid  NOT NULL,
  ticket_id    uuid  NOT NULL,
  field_key    text  NOT NULL,
  value        jsonb NOT NULL,
  PRIMARY KEY (workspace_id, ticket_id, field_key),
  FOREIGN KEY (workspace_id, ticket_id) REFERENCES tickets (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX ticket_field_sort_keys_order ON ticket_field_sort_keys (workspace_id, field_key, value, ticket_id);

-- The values kept: numbers, booleans and dates (a text field's value that looks like a date is
-- kept too; text sorts never read this table).
CREATE FUNCTION ticket_field_sort_value(v jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_typeof(v) IN ('number', 'boolean')
      OR (jsonb_typeof(v) = 'string' AND (v #>> '{}') ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')
$$;

CREATE FUNCTION ticket_field_sort_keys_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.fields IS NOT DISTINCT FROM OLD.fields THEN
      RETURN NULL;
    END IF;
    DELETE FROM ticket_field_sort_keys k
     WHERE k.workspace_id = OLD.workspace_id AND k.ticket_id = OLD.id
       AND (NEW.fields -> k.field_key) IS DISTINCT FROM k.value;
  END IF;
  INSERT INTO ticket_field_sort_keys (workspace_id, ticket_id, field_key, value)
  SELECT NEW.workspace_id, NEW.id, e.key, e.value
    FROM jsonb_each(coalesce(NEW.fields, '{}'::jsonb)) e
   WHERE ticket_field_sort_value(e.value)
  ON CONFLICT (workspace_id, ticket_id, field_key) DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER tickets_field_sort_keys AFTER INSERT OR UPDATE OF fields ON tickets
  FOR EACH ROW EXECUTE FUNCTION ticket_field_sort_keys_sync();

INSERT INTO ticket_field_sort_keys (workspace_id, ticket_id, field_key, value)
SELECT t.workspace_id, t.id, e.key, e.value
  FROM tickets t, jsonb_each(coalesce(t.fields, '{}'::jsonb)) e
 WHERE ticket_field_sort_value(e.value);
