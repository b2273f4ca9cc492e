// /v1/ai/config, /v1/ai/models, /v1/ai/settings (GET, PATCH), /v1/ai/key (interface.md "AI"; docs/ai.md).
// Read by any member (keys settings:read or settings:write); changed by admins (settings:write).
// The feature routes (draft, summary, ask, rewrite, translate, article draft) are in features/.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { deleteOwnKey, putOwnKey } from './own-key.js';
import { AiConfig, AiModels, AiOwnKey, AiSettings, PatchAiSettingsBody, PutAiKeyBody } from './schemas.js';
import { getConfig, getModels, requireAi } from './service.js';
import { loadAiRow, presentSettings, updateSettings } from './settings.js';

export default async function aiRoutes(app: App, deps: Deps) {
  const tags = ['ai'];
  const read = access.member('viewer', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');

  app.get(
    '/v1/ai/config',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "The workspace's AI: provider, models, features, typical costs, own key",
        response: { 200: AiConfig },
      },
    },
    async (req) => getConfig(deps, req.ctx.workspaceId),
  );

  app.get(
    '/v1/ai/models',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "Models of the workspace's provider, with prices (404 ai_disabled without a provider)",
        response: { 200: AiModels },
      },
    },
    async (req) => getModels(deps, req.ctx.workspaceId),
  );

  // Not in interface.md (which shows PATCH only): the stored choices (models as set, "" for the
  // instance's default; the widget cap) that /v1/ai/config does not show, for the settings screen.
  app.get(
    '/v1/ai/settings',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'The AI settings as stored (404 ai_disabled without a provider)',
        response: { 200: AiSettings },
      },
    },
    async (req) => {
      await requireAi(deps, req.ctx.workspaceId, { evenWhenOff: true });
      return presentSettings(deps, await loadAiRow(deps.database.db, req.ctx.workspaceId));
    },
  );

  app.patch(
    '/v1/ai/settings',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change AI settings: any subset of the features, the models, the widget cap',
        body: PatchAiSettingsBody,
        response: { 200: AiSettings },
      },
    },
    async (req) => {
      const ws = await requireAi(deps, req.ctx.workspaceId, { evenWhenOff: true });
      return updateSettings(deps, req.ctx, req.body, new Set(ws.models.map((m) => m.id)));
    },
  );

  app.put(
    '/v1/ai/key',
    {
      config: { access: write },
      schema: {
        tags,
        summary: "Set the workspace's own provider key (its calls cost 0); stored encrypted, never returned",
        body: PutAiKeyBody,
        response: { 200: AiOwnKey },
      },
    },
    async (req) => putOwnKey(deps, req.ctx, req.body),
  );

  app.delete(
    '/v1/ai/key',
    {
      config: { access: write },
      schema: { tags, summary: "Remove the workspace's own provider key", response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteOwnKey(deps, req.ctx);
      return reply.code(204).send(null);
    },
  );
}
