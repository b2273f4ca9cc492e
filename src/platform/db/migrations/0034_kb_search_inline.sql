-- Ranking a search reads the stored vector of every matching article (ts_rank_cd). A vector of
-- a typical article (350 words: about 2.8 KB) was stored out of line (TOAST), so ranking the 775
-- matches of a common word fetched 2,900 buffers through the TOAST index: 5 ms of the search's
-- 8. STORAGE MAIN keeps the vector in the article's row (the bodies go out of line first), which
-- measured 2.2 ms for the same search. Existing rows are rewritten once so that their vectors
-- move in: the vector is a generated column, recomputed by any UPDATE of the row.
ALTER TABLE kb_articles ALTER COLUMN search SET STORAGE MAIN;
UPDATE kb_articles SET title = title;
