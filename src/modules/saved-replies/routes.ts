// /v1/saved-replies: agents' canned answers. Read by any member (keys tickets:read or
// tickets:write), written by agents and above (keys tickets:write): they are tools for
// replying, not workspace settings.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { CreateSavedReplyBody, ListSavedRepliesQuery, PatchSavedReplyBody, SavedReply } from './schemas.js';
import { createSavedReply, deleteSavedReply, getSavedReply, listSavedReplies, updateSavedReply } from './service.js';

export default async function savedReplyRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'tickets:read', 'tickets:write');
  const write = access.member('agent', 'tickets:write');
  const tags = ['saved-replies'];

  app.get(
    '/v1/saved-replies',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List saved replies, newest first (q: part of the title or shortcut)',
        querystring: ListSavedRepliesQuery,
        response: { 200: PageOf(SavedReply) },
      },
    },
    async (req) => listSavedReplies(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/saved-replies',
    {
      config: { access: write },
      schema: { tags, summary: 'Create a saved reply', body: CreateSavedReplyBody, response: { 201: SavedReply } },
    },
    async (req, reply) => {
      const saved = await createSavedReply(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/saved-replies/${saved.id}`);
      return saved;
    },
  );

  app.get(
    '/v1/saved-replies/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A saved reply', params: IdParams, response: { 200: SavedReply } },
    },
    async (req) => getSavedReply(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/saved-replies/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a saved reply (shortcut null removes it)',
        params: IdParams,
        body: PatchSavedReplyBody,
        response: { 200: SavedReply },
      },
    },
    async (req) => updateSavedReply(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/saved-replies/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete a saved reply', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteSavedReply(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
