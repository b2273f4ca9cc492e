// /v1/teams: read by any member (keys settings:read), written by admins (keys settings:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { CreateTeamBody, ListTeamsQuery, PatchTeamBody, Team } from './schemas.js';
import { createTeam, deleteTeam, getTeam, listTeams, updateTeam } from './service.js';

export default async function teamRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');

  app.get(
    '/v1/teams',
    {
      config: { access: read },
      schema: {
        tags: ['teams'],
        summary: 'List teams (in the order they were created)',
        querystring: ListTeamsQuery,
        response: { 200: PageOf(Team) },
      },
    },
    async (req) => listTeams(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/teams',
    {
      config: { access: write },
      schema: { tags: ['teams'], summary: 'Create a team', body: CreateTeamBody, response: { 201: Team } },
    },
    async (req, reply) => {
      const team = await createTeam(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/teams/${team.id}`);
      return team;
    },
  );

  app.get(
    '/v1/teams/:id',
    {
      config: { access: read },
      schema: { tags: ['teams'], summary: 'A team', params: IdParams, response: { 200: Team } },
    },
    async (req) => getTeam(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/teams/:id',
    {
      config: { access: write },
      schema: {
        tags: ['teams'],
        summary: 'Rename a team, make it private or public, or replace its members',
        params: IdParams,
        body: PatchTeamBody,
        response: { 200: Team },
      },
    },
    async (req) => updateTeam(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/teams/:id',
    {
      config: { access: write },
      schema: { tags: ['teams'], summary: 'Delete a team', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteTeam(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
