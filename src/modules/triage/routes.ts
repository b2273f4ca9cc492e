// /v1/triage: what AI triage may do on its own. Read by any member (keys settings:read or
// settings:write), changed by admins (keys settings:write).

import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { TicketParams } from '../tickets/schemas.js';
import { triageTicket } from './run.js';
import { PatchTriageBody, SuggestionParams, TriageBody, TriageResult, TriageSettings } from './schemas.js';
import { getTriage, updateTriage } from './service.js';
import { dismissSuggestion } from './suggestions.js';

export default async function triageRoutes(app: App, deps: Deps) {
  const tags = ['triage'];

  app.get(
    '/v1/triage',
    {
      config: { access: access.member('viewer', 'settings:read', 'settings:write') },
      schema: {
        tags,
        summary: 'Triage settings, with the decision engine this instance has',
        response: { 200: TriageSettings },
      },
    },
    async (req) => getTriage(deps, req.ctx),
  );

  app.patch(
    '/v1/triage',
    {
      config: { access: access.member('admin', 'settings:write') },
      schema: {
        tags,
        summary: 'Change triage settings (any subset)',
        body: PatchTriageBody,
        response: { 200: TriageSettings },
      },
    },
    async (req) => updateTriage(deps, req.ctx, req.body),
  );

  // AI triage of one ticket, and its suggestions (docs/ai.md "Triage").
  const agent = access.member('agent', 'tickets:write');
  app.post(
    '/v1/tickets/:id/ai/triage',
    {
      config: { access: agent },
      schema: {
        tags: ['ai'],
        summary: 'Triage the ticket: decisions applied per the triage settings (or all with apply), the rest suggested',
        params: TicketParams,
        body: TriageBody,
        response: { 200: TriageResult },
      },
    },
    async (req) => triageTicket(deps, req.ctx, req.params.id, req.body ?? {}),
  );

  app.delete(
    '/v1/tickets/:id/ai/suggestions/:field',
    {
      config: { access: agent },
      schema: {
        tags: ['ai'],
        summary: 'Dismiss a pending AI suggestion (priority, severity, labels, team or spam)',
        params: SuggestionParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await dismissSuggestion(deps, req.ctx, req.params.id, req.params.field);
      return reply.code(204).send(null);
    },
  );
}
