-- Ticket q (src/modules/tickets/search.ts) picks how each tier finds its matches from the
-- planner's row estimates: how many messages and how many subjects of the workspace match the
-- words, out of how many tickets, and how many messages match in all workspaces. One call
-- answers all four, in the statement that parses q, instead of one EXPLAIN round trip each. The words are written into each EXPLAIN as literals
-- (format %L), so the estimates come from the columns' statistics of those words.
-- VOLATILE because PostgreSQL runs EXPLAIN only in volatile functions; it reads nothing else.
CREATE FUNCTION search_estimates(ws uuid, words tsquery,
    OUT messages float8, OUT subjects float8, OUT tickets float8, OUT everywhere float8)
  LANGUAGE plpgsql VOLATILE STRICT
  AS $$
DECLARE
  p json;
BEGIN
  EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM messages WHERE workspace_id = %L AND search @@ %L::tsquery',
    ws, words::text) INTO p;
  messages := (p -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
  EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM tickets WHERE workspace_id = %L AND search @@ %L::tsquery',
    ws, words::text) INTO p;
  subjects := (p -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
  EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM tickets WHERE workspace_id = %L', ws) INTO p;
  tickets := (p -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
  EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM messages WHERE search @@ %L::tsquery', words::text) INTO p;
  everywhere := (p -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END
$$;
