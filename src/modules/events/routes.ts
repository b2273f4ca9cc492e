// GET /v1/events: replay by seq.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access, SCOPES } from '../../platform/http/context.js';
import { Timestamp } from '../../platform/http/schemas.js';
import { replay } from './service.js';

export const Envelope = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    seq: Type.Integer(),
    workspace_id: Type.String(),
    type: Type.String(),
    visibility: Type.Union([Type.Literal('agents'), Type.Literal('public')]),
    topics: Type.Array(Type.String()),
    data: Type.Object({}, { additionalProperties: true }),
    occurred_at: Timestamp,
  },
  { title: 'EventEnvelope' },
);

export default async function eventRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/events',
    {
      config: { access: access.member('viewer', ...SCOPES) },
      schema: {
        tags: ['events'],
        summary: 'Replay events after a seq (stand-ins for what you may not see)',
        querystring: Type.Object(
          {
            since: Type.Integer({
              minimum: 0,
              maximum: Number.MAX_SAFE_INTEGER,
              description: 'Last seq you have; 0 for none.',
            }),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ data: Type.Array(Envelope), latest_seq: Type.Integer(), resync: Type.Boolean() }),
        },
      },
    },
    async (req) => replay(deps, req.ctx, req.query.since, req.query.limit ?? 100),
  );
}
