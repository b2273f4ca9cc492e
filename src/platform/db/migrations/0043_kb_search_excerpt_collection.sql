-- Search finds an article by the words of its excerpt and of its collection's name too (issue 32):
-- "refund" finds the articles of the collection "Refunds", a word only the excerpt says finds its
-- article. The stored vector gains both, in the article's language: the excerpt with the body's
-- weight (B), the collection's name with weight C, so a match in the title or the text still
-- ranks first. The collection's name is copied into the article's row (collection_name), since a
-- generated column reads its own row only: a trigger fills it when an article is written with a
-- collection, another one follows a collection's rename; a collection holding articles cannot be
-- deleted (0029), so no delete has to be followed.
ALTER TABLE kb_articles ADD COLUMN collection_name text NOT NULL DEFAULT '';

CREATE FUNCTION kb_articles_collection_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.collection_name := coalesce(
    (SELECT c.name FROM kb_collections c WHERE c.workspace_id = NEW.workspace_id AND c.id = NEW.collection_id),
    '');
  RETURN NEW;
END
$$;

-- BEFORE: the generated vector is computed after BEFORE triggers, so it sees the name.
CREATE TRIGGER kb_articles_collection_name BEFORE INSERT OR UPDATE OF collection_id ON kb_articles
  FOR EACH ROW EXECUTE FUNCTION kb_articles_collection_name();

CREATE FUNCTION kb_collections_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE kb_articles SET collection_name = NEW.name
   WHERE workspace_id = NEW.workspace_id AND collection_id = NEW.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER kb_collections_renamed AFTER UPDATE OF name ON kb_collections
  FOR EACH ROW WHEN (NEW.name IS DISTINCT FROM OLD.name) EXECUTE FUNCTION kb_collections_renamed();

UPDATE kb_articles a SET collection_name = c.name
  FROM kb_collections c
 WHERE c.workspace_id = a.workspace_id AND c.id = a.collection_id;

-- PostgreSQL 15 cannot change a generated column's expression: the column is made again (the
-- table is rewritten once), with its index (0031) and its in-row storage (0034).
ALTER TABLE kb_articles DROP COLUMN search;
ALTER TABLE kb_articles ADD COLUMN search tsvector NOT NULL GENERATED ALWAYS AS (
  setweight(to_tsvector(kb_search_config(language), title), 'A')
  || setweight(to_tsvector(kb_search_config(language), coalesce(excerpt, '')), 'B')
  || setweight(to_tsvector(kb_search_config(language), collection_name), 'C')
  || setweight(to_tsvector(kb_search_config(language), left(body_text, 200000)), 'B')) STORED;
ALTER TABLE kb_articles ALTER COLUMN search SET STORAGE MAIN;
-- The column was added with STORAGE EXTENDED: the rows written by the ADD keep their vectors out
-- of line until written again (0034); once more, so that they move in.
UPDATE kb_articles SET title = title;
CREATE INDEX kb_articles_search_idx ON kb_articles USING gin (search) WITH (fastupdate = off);
