// /v1/search: tickets, contacts and knowledge base articles, five of each.

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { SearchQuery, SearchResult } from './schemas.js';
import { search } from './service.js';

export default async function searchRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/search',
    {
      config: {
        access: access.member(
          'viewer',
          'tickets:read',
          'tickets:write',
          'contacts:read',
          'contacts:write',
          'kb:read',
          'kb:write',
        ),
      },
      schema: {
        tags: ['search'],
        summary: 'Search tickets, contacts and knowledge base articles: up to five of each, best match first',
        querystring: SearchQuery,
        response: { 200: SearchResult },
      },
    },
    async (req) => search(deps, req.ctx, req.query.q),
  );
}
