-- Generated columns carry no NOT NULL of their own, so the catalog called these nullable while
-- their expressions never give NULL (a CASE with an ELSE, a coalesce, to_tsvector of a NOT NULL
-- column) and the row types say so. The constraint states it in the database too; the row-type
-- check (test/db-schema.test.ts) compares the two.
ALTER TABLE tickets ALTER COLUMN priority_rank SET NOT NULL;
ALTER TABLE tickets ALTER COLUMN severity_rank SET NOT NULL;
ALTER TABLE tickets ALTER COLUMN search SET NOT NULL;
ALTER TABLE messages ALTER COLUMN search SET NOT NULL;
