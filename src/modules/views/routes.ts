// /v1/views: saved ticket filters. Read by any member and by keys with a tickets or settings
// scope (keys see shared views only). Writes: a person manages their own personal views
// (viewers included); shared views need an admin or a key with settings:write (checked in the
// service, since it depends on the view).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams } from '../../platform/http/schemas.js';
import { CreateViewBody, PatchViewBody, View, ViewList } from './schemas.js';
import { createView, deleteView, getView, listViews, updateView } from './service.js';

export default async function viewRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'tickets:read', 'tickets:write', 'settings:read', 'settings:write');
  const write = access.member('viewer', 'settings:write');
  const tags = ['views'];

  app.get(
    '/v1/views',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "The caller's views: shared ones and their own personal ones, by position (one complete list)",
        response: { 200: ViewList },
      },
    },
    async (req) => listViews(deps, req.ctx),
  );

  app.post(
    '/v1/views',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a view (shared: admins and keys with settings:write)',
        body: CreateViewBody,
        response: { 201: View },
      },
    },
    async (req, reply) => {
      const view = await createView(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/views/${view.id}`);
      return view;
    },
  );

  app.get(
    '/v1/views/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A view', params: IdParams, response: { 200: View } },
    },
    async (req) => getView(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/views/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a view (filters are replaced as a whole)',
        params: IdParams,
        body: PatchViewBody,
        response: { 200: View },
      },
    },
    async (req) => updateView(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/views/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete a view', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteView(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
