// /v1/api-keys: list, create (secret shown once), delete (revokes at once).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { PageQuerySchema } from '../../platform/http/pagination.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { ApiKey, CreateApiKeyBody, CreatedApiKey } from './schemas.js';
import { createApiKey, deleteApiKey, listApiKeys } from './service.js';

export default async function apiKeyRoutes(app: App, deps: Deps) {
  const who = access.member('admin', 'settings:write');

  app.get(
    '/v1/api-keys',
    {
      config: { access: who },
      schema: {
        tags: ['api-keys'],
        summary: 'List API keys',
        querystring: PageQuerySchema,
        response: { 200: PageOf(ApiKey) },
      },
    },
    async (req) => listApiKeys(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/api-keys',
    {
      config: { access: who },
      schema: {
        tags: ['api-keys'],
        summary: 'Create an API key (the secret `key` is in this response only)',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey },
      },
    },
    async (req, reply) => {
      const k = await createApiKey(deps, req.ctx, req.body);
      reply.code(201).header('cache-control', 'no-store');
      return k;
    },
  );

  app.delete(
    '/v1/api-keys/:id',
    {
      config: { access: who },
      schema: { tags: ['api-keys'], summary: 'Revoke an API key', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteApiKey(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
