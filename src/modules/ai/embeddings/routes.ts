// GET /v1/ai/search: /v1/search ranked by meaning too (search.ts). Any member; a key reads the
// kinds its scopes read (as /v1/search). 404 ai_disabled without AI (interface.md "AI").
import type { Deps } from '../../../deps.js';
import type { App } from '../../../platform/http/app-type.js';
import { access } from '../../../platform/http/context.js';
import { AiSearchQuery, AiSearchResult } from '../schemas.js';
import { semanticFor } from './index.js';
import { semanticSearch } from './search.js';

export default async function aiSearchRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/ai/search',
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
        tags: ['ai'],
        summary:
          'Search by meaning and by words: tickets, contacts and knowledge base articles, up to five of each, best first',
        querystring: AiSearchQuery,
        response: { 200: AiSearchResult },
      },
    },
    async (req) => semanticSearch(deps, semanticFor(deps), req.ctx, req.query.q),
  );
}
