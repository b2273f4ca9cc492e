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
      Type.Object({ id: Type.String(), title: Type.String(), slug: Type.String(), excerpt: Type.String() }),
      { maxItems: 5, description: 'Knowledge base articles (none until the knowledge base exists).' },
    ),
  },
  { title: 'SearchResult' },
);
