-- q's subject tier walks the list newest first when its words are common in subjects
-- (src/modules/tickets/search.ts): for "refund" it reads about 1,500 tickets to find a page of
-- 50, each from its own heap page. With the subject's words (and what the walk filters on) in
-- the index, the walk reads the index alone (an index-only scan): 0.65 ms against 0.36 ms per
-- walk on the bench database (docs/performance.md).
--
-- Only subjects up to 400 bytes: a B-tree entry holds at most 2,704 bytes, and the words of a
-- 998-character subject can take more (3,352 bytes measured for random two-letter words, which
-- would make such a ticket impossible to save). Up to 400 bytes they take at most about 1,600.
-- Tickets with longer subjects, rare, are walked through their own small index, and the two
-- walks are merged.
CREATE INDEX tickets_subject_walk_idx ON tickets (workspace_id, last_message_at DESC, id DESC)
  INCLUDE (spam, team_id, search) WHERE deleted_at IS NULL AND octet_length(subject) <= 400;
CREATE INDEX tickets_long_subject_idx ON tickets (workspace_id, last_message_at DESC, id DESC)
  WHERE deleted_at IS NULL AND octet_length(subject) > 400;
