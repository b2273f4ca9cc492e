// /v1/workspaces (create) and /v1/workspace (the selected workspace).
import type { App } from '../../app.js';
import type { Deps } from '../../deps.js';
import { access } from '../../platform/http/context.js';
import { CreateWorkspaceBody, PatchWorkspaceBody, Workspace } from './schemas.js';
import { createWorkspace, getWorkspace, updateWorkspace } from './service.js';

export default async function workspaceRoutes(app: App, deps: Deps) {
  app.post(
    '/v1/workspaces',
    {
      config: { access: access.user() },
      schema: {
        tags: ['workspace'],
        summary: 'Create a workspace (you become its owner)',
        body: CreateWorkspaceBody,
        response: { 201: Workspace },
      },
    },
    async (req, reply) => {
      const w = await createWorkspace(deps, req.user, req.body);
      reply.code(201).header('location', '/v1/workspace');
      return w;
    },
  );

  app.get(
    '/v1/workspace',
    {
      config: { access: access.member('viewer', 'settings:read', 'settings:write') },
      schema: { tags: ['workspace'], summary: 'The selected workspace', response: { 200: Workspace } },
    },
    async (req) => getWorkspace(deps, req.ctx),
  );

  app.patch(
    '/v1/workspace',
    {
      config: { access: access.member('admin', 'settings:write') },
      schema: {
        tags: ['workspace'],
        summary: 'Rename the workspace or change settings (partial merge)',
        body: PatchWorkspaceBody,
        response: { 200: Workspace },
      },
    },
    async (req) => updateWorkspace(deps, req.ctx, req.body),
  );
}
