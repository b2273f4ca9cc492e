-- Every event row is updated exactly once (published = true, by the publisher after commit).
-- 0005 left a fifth of each page free, and only about half of those updates found room on
-- their page (measured: 12,135 HOT of 24,870): the others wrote a new row version elsewhere
-- with an entry in each of the table's three indexes. With half of each page free, every row
-- of a page has room for its second version: the update stays on the page, with no index
-- writes. The table takes up to twice the pages, for the retention window only.
ALTER TABLE events SET (fillfactor = 50);
