// Row types: the knowledge base (0029, src/modules/kb).
import type { Generated, GeneratedAlways } from 'kysely';
import type { DefaultTimestamp, NullableTimestamp } from './columns.js';

export interface KbCollectionsTable {
  workspace_id: string;
  id: string;
  name: string;
  slug: string;
  description: string | null;
  position: Generated<number>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface KbArticlesTable {
  workspace_id: string;
  id: string;
  collection_id: string | null;
  title: string;
  slug: string;
  /** The excerpt given; NULL: derived from body_text when read. */
  excerpt: string | null;
  body_html: Generated<string>;
  body_text: Generated<string>;
  status: Generated<string>;
  /** A language code (kb_search_config maps it to a text search configuration). */
  language: Generated<string>;
  author_id: string | null;
  views: Generated<number>;
  published_at: NullableTimestamp;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  /** The collection's name, kept by triggers for the search vector (migration 0043); '' without one. */
  collection_name: Generated<string>;
  search: GeneratedAlways<string>;
}

export interface KbArticleSlugsTable {
  workspace_id: string;
  slug: string;
  article_id: string;
  created_at: DefaultTimestamp;
}

/** Recent help center views (0030): one mark per article and visitor, pruned after the window. */
export interface KbArticleViewsTable {
  workspace_id: string;
  article_id: string;
  /** A keyed hash of the client's address and user agent (help-center/views.ts). */
  visitor: string;
  viewed_at: DefaultTimestamp;
}
