-- Knowledge-base search through an index: the stored vectors of every article, whatever its
-- language (the query is parsed once per language and matched per language: src/modules/kb/list.ts).
-- fastupdate off: articles change rarely, and a pending list (read in full by every search until
-- a vacuum merges it) made a search of 5,000 articles cost 20 ms instead of 0.1 ms.
CREATE INDEX kb_articles_search_idx ON kb_articles USING gin (search) WITH (fastupdate = off);
-- The languages a workspace writes in, read before each search: an index-only scan.
CREATE INDEX kb_articles_language_idx ON kb_articles (workspace_id, language);
