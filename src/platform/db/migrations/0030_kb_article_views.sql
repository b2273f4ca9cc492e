-- Recent views of help center articles, one mark per (article, visitor): a view counts in
-- kb_articles.views when the visitor has no mark for the article or its mark is older than 30
-- minutes (the mark then moves to now). visitor is a keyed hash of the client's address and user
-- agent (src/modules/help-center/views.ts), never the address itself. Marks older than the window
-- are pruned by the hourly maintenance job.
CREATE TABLE kb_article_views (
  workspace_id uuid NOT NULL,
  article_id   uuid NOT NULL,
  visitor      text NOT NULL,
  viewed_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, article_id, visitor),
  FOREIGN KEY (workspace_id, article_id) REFERENCES kb_articles (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX kb_article_views_viewed_idx ON kb_article_views (viewed_at);
