// /v1/workspaces (create) and /v1/workspace (the selected workspace).

import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { PICTURE_RULES, pictureBody, withMultipart } from '../images/http.js';
import { pictureFromUpload } from '../images/service.js';
import { Member } from '../members/schemas.js';
import {
  CreateWorkspaceBody,
  DeleteWorkspaceBody,
  PatchWorkspaceBody,
  TransferBody,
  WidgetSecret,
  Workspace,
} from './schemas.js';
import {
  createWorkspace,
  deleteWorkspace,
  getWorkspace,
  rotateWidgetSecret,
  setWorkspaceImage,
  transferOwnership,
  updateWorkspace,
  type WorkspaceImageSlot,
} from './service.js';

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

  app.delete(
    '/v1/workspace',
    {
      config: { access: access.usersOnly('owner') },
      schema: {
        tags: ['workspace'],
        summary: 'Delete the workspace and all its data (owner with two-factor, signed in within 10 minutes)',
        body: DeleteWorkspaceBody,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteWorkspace(deps, req.ctx, req.body.confirm_name);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/workspace/transfer',
    {
      config: { access: access.usersOnly('owner') },
      schema: {
        tags: ['workspace'],
        summary: 'Make another member the owner (you become admin); needs your two-factor code',
        body: TransferBody,
        response: { 200: Type.Object({ owner: Member, previous_owner: Member }) },
      },
    },
    async (req) => transferOwnership(deps, req.ctx, req.body),
  );

  app.post(
    '/v1/workspace/widget-secret/rotate',
    {
      config: { access: access.member('admin', 'settings:write'), idempotent: false },
      schema: {
        tags: ['workspace'],
        summary: 'A new widget secret for verified visitor identities (shown once)',
        response: { 200: WidgetSecret },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return { widget_secret: await rotateWidgetSecret(deps, req.ctx) };
    },
  );

  await workspaceImageRoutes(app, deps);
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images): the workspace's logo and brand images, PUT and DELETE by slot.

const SLOTS = ['logo', 'help_center_logo', 'help_center_favicon', 'widget_avatar', 'widget_launcher'] as const;
const SlotParams = Type.Object({
  slot: Type.Union(
    SLOTS.map((s) => Type.Literal(s)),
    { description: "logo is the workspace's avatar_url; the others are its `images`." },
  ),
});

/** The widget's avatar is a face or a mascot: cropped. Logos, the favicon and the launcher icon are fitted. */
const fitOf = (slot: WorkspaceImageSlot) => (slot === 'widget_avatar' ? ('crop' as const) : ('fit' as const));

async function workspaceImageRoutes(app: App, deps: Deps) {
  const admin = access.member('admin', 'settings:write');
  await withMultipart(app, (scope) => {
    scope.put(
      '/v1/workspace/images/:slot',
      {
        config: { access: admin, idempotent: false, swaggerTransform: pictureBody },
        schema: {
          tags: ['workspace'],
          summary: "Upload the workspace's logo or a brand image (multipart/form-data, one field named file)",
          description: PICTURE_RULES,
          consumes: ['multipart/form-data'],
          params: SlotParams,
          response: { 200: Workspace },
        },
      },
      async (req) => {
        const slot = req.params.slot as WorkspaceImageSlot;
        const owner = { kind: 'workspace' as const, id: req.ctx.workspaceId, workspaceId: req.ctx.workspaceId };
        const picture = await pictureFromUpload(deps, req, owner, fitOf(slot));
        return setWorkspaceImage(deps, req.ctx, slot, { picture });
      },
    );
  });

  app.delete(
    '/v1/workspace/images/:slot',
    {
      config: { access: admin },
      schema: {
        tags: ['workspace'],
        summary: "Remove the workspace's logo or a brand image",
        params: SlotParams,
        response: { 200: Workspace },
      },
    },
    async (req) => setWorkspaceImage(deps, req.ctx, req.params.slot as WorkspaceImageSlot, { picture: null }),
  );
}
