// /v1/automations: workspace settings. Read by admins and keys with settings:read or
// settings:write; written by admins and keys with settings:write.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { Automation, CreateAutomationBody, ListAutomationsQuery, PatchAutomationBody } from './schemas.js';
import { createAutomation, deleteAutomation, getAutomation, listAutomations, updateAutomation } from './service.js';

export default async function automationRoutes(app: App, deps: Deps) {
  const read = access.member('admin', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');
  const tags = ['automations'];

  app.get(
    '/v1/automations',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List automations in run order (position, then id)',
        querystring: ListAutomationsQuery,
        response: { 200: PageOf(Automation) },
      },
    },
    async (req) => listAutomations(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/automations',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create an automation (conditions and actions are checked now)',
        body: CreateAutomationBody,
        response: { 201: Automation },
      },
    },
    async (req, reply) => {
      const created = await createAutomation(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/automations/${created.id}`);
      return created;
    },
  );

  app.get(
    '/v1/automations/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'An automation', params: IdParams, response: { 200: Automation } },
    },
    async (req) => getAutomation(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/automations/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change an automation (conditions or actions sent replace the lists)',
        params: IdParams,
        body: PatchAutomationBody,
        response: { 200: Automation },
      },
    },
    async (req) => updateAutomation(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/automations/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete an automation', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteAutomation(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
