import { Type } from '@sinclair/typebox';
import { Contact } from '../contacts/schemas.js';
import { Ticket } from '../tickets/schemas.js';

export const SearchQuery = Type.Object(
  { q: Type.String({ minLength: 1, maxLength: 200, description: 'Words to look for.' }) },
  { additionalProperties: false },
);

export const SearchResult = Type.Object(
  {
    tickets: Type.Array(Ticket, { maxItems: 5 }),
    contacts: Type.Array(Contact, { maxItems: 5 }),
    articles: Type.Array(
      Type.Object({
        id: Type.String(),
        title: Type.String(),
        slug: Type.String(),
        excerpt: Type.String(),
        status: Type.Union([Type.Literal('draft'), Type.Literal('published')]),
        snippet: Type.String({
          description: 'HTML: the passages of the article’s text where q matched, escaped, the words in <mark>.',
        }),
      }),
      {
        maxItems: 5,
        description:
          'Knowledge base articles, drafts included, each searched in its own language, best match first ' +
          '(as GET /v1/kb/articles?q=).',
      },
    ),
  },
  { title: 'SearchResult' },
);
