-- The knowledge base: collections, articles, and the slugs articles had before (a link to an old
-- slug still finds its article). Slugs are unique per workspace, collections and articles apart.
-- An article is searched in its own language: kb_search_config maps the article's language code
-- to PostgreSQL's text search configuration (snowball stemmers; 'simple' for any other language),
-- and the stored vector holds the title (weight A) and the body's text (weight B).

CREATE FUNCTION kb_search_config(language text) RETURNS regconfig
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE language
    WHEN 'ar' THEN 'pg_catalog.arabic'::regconfig
    WHEN 'hy' THEN 'pg_catalog.armenian'::regconfig
    WHEN 'eu' THEN 'pg_catalog.basque'::regconfig
    WHEN 'ca' THEN 'pg_catalog.catalan'::regconfig
    WHEN 'da' THEN 'pg_catalog.danish'::regconfig
    WHEN 'nl' THEN 'pg_catalog.dutch'::regconfig
    WHEN 'en' THEN 'pg_catalog.english'::regconfig
    WHEN 'fi' THEN 'pg_catalog.finnish'::regconfig
    WHEN 'fr' THEN 'pg_catalog.french'::regconfig
    WHEN 'de' THEN 'pg_catalog.german'::regconfig
    WHEN 'el' THEN 'pg_catalog.greek'::regconfig
    WHEN 'hi' THEN 'pg_catalog.hindi'::regconfig
    WHEN 'hu' THEN 'pg_catalog.hungarian'::regconfig
    WHEN 'id' THEN 'pg_catalog.indonesian'::regconfig
    WHEN 'ga' THEN 'pg_catalog.irish'::regconfig
    WHEN 'it' THEN 'pg_catalog.italian'::regconfig
    WHEN 'lt' THEN 'pg_catalog.lithuanian'::regconfig
    WHEN 'ne' THEN 'pg_catalog.nepali'::regconfig
    WHEN 'no' THEN 'pg_catalog.norwegian'::regconfig
    WHEN 'pt' THEN 'pg_catalog.portuguese'::regconfig
    WHEN 'ro' THEN 'pg_catalog.romanian'::regconfig
    WHEN 'ru' THEN 'pg_catalog.russian'::regconfig
    WHEN 'sr' THEN 'pg_catalog.serbian'::regconfig
    WHEN 'es' THEN 'pg_catalog.spanish'::regconfig
    WHEN 'sv' THEN 'pg_catalog.swedish'::regconfig
    WHEN 'ta' THEN 'pg_catalog.tamil'::regconfig
    WHEN 'tr' THEN 'pg_catalog.turkish'::regconfig
    WHEN 'yi' THEN 'pg_catalog.yiddish'::regconfig
    ELSE 'pg_catalog.simple'::regconfig
  END;

CREATE TABLE kb_collections (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id           uuid NOT NULL,
  name         text NOT NULL,
  slug         text NOT NULL,
  description  text,
  position     int4 NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE UNIQUE INDEX kb_collections_slug_key ON kb_collections (workspace_id, slug);
CREATE INDEX kb_collections_position_idx ON kb_collections (workspace_id, position, id);

-- collection_id: a collection of the same workspace or none; a collection holding articles cannot
-- be deleted (NO ACTION), which also settles a delete racing an article moved into it.
-- excerpt: the one given, or NULL for one derived from the body's text when read.
CREATE TABLE kb_articles (
  workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id            uuid NOT NULL,
  collection_id uuid,
  title         text NOT NULL,
  slug          text NOT NULL,
  excerpt       text,
  body_html     text NOT NULL DEFAULT '',
  body_text     text NOT NULL DEFAULT '',
  status        text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published')),
  language      text NOT NULL DEFAULT 'en',
  author_id     uuid REFERENCES users (id) ON DELETE SET NULL,
  views         int4 NOT NULL DEFAULT 0,
  published_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  search        tsvector NOT NULL GENERATED ALWAYS AS (
                  setweight(to_tsvector(kb_search_config(language), title), 'A')
                  || setweight(to_tsvector(kb_search_config(language), left(body_text, 200000)), 'B')) STORED,
  PRIMARY KEY (workspace_id, id),
  FOREIGN KEY (workspace_id, collection_id) REFERENCES kb_collections (workspace_id, id)
);
CREATE UNIQUE INDEX kb_articles_slug_key ON kb_articles (workspace_id, slug);
CREATE INDEX kb_articles_created_idx ON kb_articles (workspace_id, created_at DESC, id DESC);
CREATE INDEX kb_articles_collection_idx ON kb_articles (workspace_id, collection_id, created_at DESC, id DESC);

-- Slugs an article had before: each resolves to the article it belonged to last. A slug in use
-- by an article (kb_articles.slug) comes first; the service removes a row here when its slug is
-- taken again.
CREATE TABLE kb_article_slugs (
  workspace_id uuid NOT NULL,
  slug         text NOT NULL,
  article_id   uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, slug),
  FOREIGN KEY (workspace_id, article_id) REFERENCES kb_articles (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX kb_article_slugs_article_idx ON kb_article_slugs (workspace_id, article_id);
