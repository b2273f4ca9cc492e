// /v1/members: list (any member), change a role and remove (admins); availability: availability.ts.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { PageOf } from '../../platform/http/schemas.js';
import availabilityRoutes from './availability.js';
import { ListMembersQuery, Member, MemberParams, PatchMemberBody } from './schemas.js';
import { changeMemberRole, listMembers, removeMember } from './service.js';

export default async function memberRoutes(app: App, deps: Deps) {
  const write = access.member('admin', 'settings:write');
  // PATCH /v1/members/{user_id}/availability and POST /v1/me/heartbeat.
  await availabilityRoutes(app, deps);

  app.get(
    '/v1/members',
    {
      config: { access: access.member('viewer', 'settings:read', 'settings:write') },
      schema: {
        tags: ['members'],
        summary: 'List the members of the workspace (in the order they joined)',
        querystring: ListMembersQuery,
        response: { 200: PageOf(Member) },
      },
    },
    async (req) => listMembers(deps, req.ctx, req.query),
  );

  app.patch(
    '/v1/members/:user_id',
    {
      config: { access: write },
      schema: {
        tags: ['members'],
        summary: "Change a member's role (admin, agent or viewer; ownership moves only by transfer)",
        params: MemberParams,
        body: PatchMemberBody,
        response: { 200: Member },
      },
    },
    async (req) => changeMemberRole(deps, req.ctx, req.params.user_id, req.body.role),
  );

  app.delete(
    '/v1/members/:user_id',
    {
      config: { access: write },
      schema: {
        tags: ['members'],
        summary: 'Remove a member from the workspace (and from its teams)',
        params: MemberParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await removeMember(deps, req.ctx, req.params.user_id);
      return reply.code(204).send(null);
    },
  );
}
