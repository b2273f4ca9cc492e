// /v1/sla-policies: workspace settings (admins, or keys with settings:read / settings:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams } from '../../platform/http/schemas.js';
import { CreateSlaPolicyBody, PatchSlaPolicyBody, SlaPolicy, SlaPolicyList } from './schemas.js';
import { createSlaPolicy, deleteSlaPolicy, getSlaPolicy, listSlaPolicies, updateSlaPolicy } from './service.js';

export default async function slaPolicyRoutes(app: App, deps: Deps) {
  const read = access.member('admin', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');
  const tags = ['sla-policies'];

  app.get(
    '/v1/sla-policies',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Every SLA policy in evaluation order (position, then oldest first; at most 100)',
        response: { 200: SlaPolicyList },
      },
    },
    async (req) => listSlaPolicies(deps, req.ctx),
  );

  app.post(
    '/v1/sla-policies',
    {
      config: { access: write },
      schema: { tags, summary: 'Create an SLA policy', body: CreateSlaPolicyBody, response: { 201: SlaPolicy } },
    },
    async (req, reply) => {
      const policy = await createSlaPolicy(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/sla-policies/${policy.id}`);
      return policy;
    },
  );

  app.get(
    '/v1/sla-policies/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'An SLA policy', params: IdParams, response: { 200: SlaPolicy } },
    },
    async (req) => getSlaPolicy(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/sla-policies/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change an SLA policy (applies to clocks set from then on)',
        params: IdParams,
        body: PatchSlaPolicyBody,
        response: { 200: SlaPolicy },
      },
    },
    async (req) => updateSlaPolicy(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/sla-policies/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete an SLA policy', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteSlaPolicy(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
