// /v1/csat/{token}: a solved ticket's customer reads and gives their rating. Public: the signed
// token in the path is the credential (src/modules/csat/service.ts); rate-limited per address.
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { CsatRating, CsatTokenParams, RateBody } from './schemas.js';
import { getRating, rate } from './service.js';

export default async function csatRoutes(app: App, deps: Deps) {
  const tags = ['csat'];
  app.get(
    '/v1/csat/:token',
    {
      config: { access: access.public() },
      schema: {
        tags,
        summary: "A rating link's ticket and its rating so far",
        description: '404 for a token that is tampered, expired or names a deleted ticket.',
        params: CsatTokenParams,
        response: { 200: CsatRating },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return getRating(deps, req.params.token);
    },
  );

  app.post(
    '/v1/csat/:token',
    {
      // Rating twice is a replacement, not a duplicate: no Idempotency-Key needed.
      config: { access: access.public(), idempotent: false },
      schema: {
        tags,
        summary: 'Rate the ticket (1 to 5, an optional comment)',
        description:
          'Stores the rating; rating again within 7 days of the first rating replaces it, later 409 conflict. ' +
          'Adds a csat_received activity and ticket.updated (changes: csat).',
        params: CsatTokenParams,
        body: RateBody,
        response: { 200: CsatRating },
      },
    },
    async (req) => rate(deps, req.params.token, req.body),
  );
}
