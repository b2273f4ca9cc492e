// The knowledge base: search_articles (best match first, with the passages that matched) and
// get_article (one article's text), through the kb module's reads: every member reads the
// workspace's articles, drafts included, as GET /v1/kb/articles shows them.
import { Type } from '@sinclair/typebox';
import { htmlToText } from '../../../platform/html/index.js';
import { getArticle, type KbArticleView } from '../../kb/articles.js';
import { listArticles } from '../../kb/list.js';
import { bounded, plural, refusalsAsToolErrors } from './common.js';
import { UUID_PATTERN } from './ticket-filters.js';
import { type ReadTool, type RefT, ToolError } from './types.js';

const articleRef = (a: Pick<KbArticleView, 'id' | 'title'>): RefT => ({ kind: 'article', id: a.id, label: a.title });

const SearchArgs = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200, description: 'Words to find in titles and bodies.' }),
    status: Type.Optional(
      Type.Union([Type.Literal('published'), Type.Literal('draft')], {
        description: 'Only published articles, or only drafts (default: both).',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'At most this many (default 5).' })),
  },
  { additionalProperties: false },
);

export const searchArticles: ReadTool<typeof SearchArgs> = {
  kind: 'read',
  name: 'search_articles',
  description:
    'Search the knowledge base (help center articles, drafts included): best match first, each with its excerpt and the passages that matched.',
  parameters: SearchArgs,
  label: (args) => `Searching articles for “${args.query}”`,
  async run(env, args) {
    const q = args.query.trim();
    if (q === '') throw new ToolError('query must not be blank.');
    const page = await refusalsAsToolErrors(() =>
      listArticles(env.deps, env.ctx, {
        q,
        limit: Math.min(args.limit ?? 5, 10),
        ...(args.status ? { status: args.status } : {}),
      }),
    );
    return {
      content: {
        articles: page.data.map((a) => ({
          id: a.id,
          title: a.title,
          status: a.status,
          language: a.language,
          excerpt: a.excerpt,
          matched: a.snippet ? htmlToText(a.snippet) : null,
          updated_at: a.updated_at,
        })),
      },
      summary: `${plural(page.data.length, 'article')} found`,
      refs: page.data.map(articleRef),
    };
  },
};

const GetArgs = Type.Object(
  { article: Type.String({ pattern: UUID_PATTERN, description: 'The article’s id (from search_articles).' }) },
  { additionalProperties: false },
);

export const getArticleTool: ReadTool<typeof GetArgs> = {
  kind: 'read',
  name: 'get_article',
  description: 'Read one knowledge base article: its title, status and body as plain text.',
  parameters: GetArgs,
  label: () => 'Reading an article',
  async run(env, args) {
    const a = await refusalsAsToolErrors(() => getArticle(env.deps, env.ctx, args.article));
    return {
      content: {
        article: {
          id: a.id,
          title: a.title,
          status: a.status,
          language: a.language,
          collection_id: a.collection_id,
          body_text: bounded(htmlToText(a.body_html), 12_000),
          published_at: a.published_at,
          updated_at: a.updated_at,
        },
      },
      summary: a.title,
      refs: [articleRef(a)],
    };
  },
};
