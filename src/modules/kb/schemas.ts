import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';

/** Lower-case ASCII letters and digits in groups joined by single hyphens. */
export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
export const SLUG_MAX = 100;

/**
 * Language codes an article can be searched in (ISO 639-1), each with PostgreSQL's stemmer of
 * that language (migration 0029 kb_search_config); `other` matches words as written.
 */
export const LANGUAGES = [
  'ar',
  'ca',
  'da',
  'de',
  'el',
  'en',
  'es',
  'eu',
  'fi',
  'fr',
  'ga',
  'hi',
  'hu',
  'hy',
  'id',
  'it',
  'lt',
  'ne',
  'nl',
  'no',
  'pt',
  'ro',
  'ru',
  'sr',
  'sv',
  'ta',
  'tr',
  'yi',
  'other',
] as const;
export type Language = (typeof LANGUAGES)[number];

const LanguageSchema = Type.Union(
  LANGUAGES.map((l) => Type.Literal(l)),
  {
    description:
      'The language the article is written in (ISO 639-1 code): q finds its words by their stems in that ' +
      'language. `other`: words are matched as written. Default `en`.',
  },
);

export const KbCollection = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    position: Type.Integer(),
    article_count: Type.Integer({ minimum: 0, description: 'All of its articles, drafts included.' }),
  },
  { title: 'KbCollection' },
);

export const KbArticle = Type.Object(
  {
    id: Type.String(),
    collection_id: Nullable(Type.String()),
    title: Type.String(),
    slug: Type.String(),
    excerpt: Type.String({ description: 'The excerpt given, or the start of the body’s text (about 200 characters).' }),
    body_html: Type.String({ description: 'Sanitized HTML.' }),
    status: Type.Union([Type.Literal('draft'), Type.Literal('published')]),
    language: LanguageSchema,
    author: Nullable(UserRef),
    views: Type.Integer({ minimum: 0 }),
    published_at: Nullable(
      Type.String({ format: 'date-time', description: 'Set when first published; unpublishing keeps it.' }),
    ),
    updated_at: Timestamp,
  },
  { title: 'KbArticle' },
);

/** An article found by q: the article, and where q matched. */
export const KbArticleHit = Type.Object(
  {
    ...KbArticle.properties,
    snippet: Type.Optional(
      Type.String({
        description:
          'Only with q: HTML, the passages of the body’s text where q matched, escaped, the matched words in <mark>.',
      }),
    ),
  },
  { title: 'KbArticleListItem' },
);

const Name = Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters, trimmed.' });
const Slug = Type.String({
  minLength: 1,
  maxLength: SLUG_MAX,
  pattern: SLUG_PATTERN,
  description: 'Lower-case ASCII letters, digits and single hyphens; unique in the workspace.',
});
const Description = Nullable(Type.String({ maxLength: 1000 }));
const Position = Type.Integer({ minimum: 0, maximum: 1_000_000 });

export const CreateKbCollectionBody = Body({
  name: Name,
  slug: Type.Optional(Slug),
  description: Type.Optional(Description),
  position: Type.Optional(Position),
});

export const PatchKbCollectionBody = Body({
  name: Type.Optional(Name),
  slug: Type.Optional(Slug),
  description: Type.Optional(Description),
  position: Type.Optional(Position),
});

const Title = Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters, trimmed.' });
const Excerpt = Nullable(
  Type.String({
    maxLength: 500,
    description: 'Plain text, up to 500 characters; null (or blank) derives it from the body.',
  }),
);
const ArticleHtml = Type.String({
  maxLength: 500_000,
  description: 'HTML, sanitized with an allowlist before storage.',
});
const Status = Type.Union([Type.Literal('draft'), Type.Literal('published')]);
const CollectionRef = Nullable(Type.String({ maxLength: 64, description: 'A collection of the workspace, or null.' }));

export const CreateKbArticleBody = Body({
  collection_id: Type.Optional(CollectionRef),
  title: Title,
  slug: Type.Optional(Slug),
  excerpt: Type.Optional(Excerpt),
  body_html: Type.Optional(ArticleHtml),
  status: Type.Optional(Status),
  language: Type.Optional(LanguageSchema),
});

export const PatchKbArticleBody = Body({
  collection_id: Type.Optional(CollectionRef),
  title: Type.Optional(Title),
  slug: Type.Optional(Slug),
  excerpt: Type.Optional(Excerpt),
  body_html: Type.Optional(ArticleHtml),
  status: Type.Optional(Status),
  language: Type.Optional(LanguageSchema),
});

export const ListKbCollectionsQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);

export const ListKbArticlesQuery = Type.Object(
  {
    collection_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'Articles of this collection; `none`: articles in no collection.' }),
    ),
    status: Type.Optional(Status),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Words to find in the title and body, each article in its own language (stems: "Rechnungen" finds ' +
          '"Rechnung" in German); best match first, with a snippet.',
      }),
    ),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false },
);
