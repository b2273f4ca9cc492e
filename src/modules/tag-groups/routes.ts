// /v1/tag-groups: label groups. Same access as labels: read by every member (keys with
// settings, tickets or contacts scopes), changed by admins (keys settings:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { IdParams } from '../../platform/http/schemas.js';
import { definitionsRead, definitionsWrite } from '../tags/routes.js';
import { ReorderBody } from '../tags/schemas.js';
import { CreateTagGroupBody, PatchTagGroupBody, TagGroup, TagGroupList } from './schemas.js';
import {
  createTagGroup,
  deleteTagGroup,
  getTagGroup,
  listTagGroups,
  MAX_TAG_GROUPS,
  reorderTagGroups,
  updateTagGroup,
} from './service.js';

export default async function tagGroupRoutes(app: App, deps: Deps) {
  const tags = ['labels'];

  app.get(
    '/v1/tag-groups',
    {
      config: { access: definitionsRead },
      schema: {
        tags,
        summary: 'Every label group (one list, no pages), by position then name',
        response: { 200: TagGroupList },
      },
    },
    async (req) => listTagGroups(deps, req.ctx),
  );

  app.post(
    '/v1/tag-groups',
    {
      config: { access: definitionsWrite },
      schema: { tags, summary: 'Create a label group', body: CreateTagGroupBody, response: { 201: TagGroup } },
    },
    async (req, reply) => {
      const group = await createTagGroup(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/tag-groups/${group.id}`);
      return group;
    },
  );

  app.post(
    '/v1/tag-groups/reorder',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Reorder label groups: every group id once; position becomes the index',
        body: ReorderBody(MAX_TAG_GROUPS),
        response: { 200: TagGroupList },
      },
    },
    async (req) => reorderTagGroups(deps, req.ctx, req.body.ids),
  );

  app.get(
    '/v1/tag-groups/:id',
    {
      config: { access: definitionsRead },
      schema: { tags, summary: 'A label group', params: IdParams, response: { 200: TagGroup } },
    },
    async (req) => getTagGroup(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/tag-groups/:id',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Change a label group (turning it exclusive leaves records as they are)',
        params: IdParams,
        body: PatchTagGroupBody,
        response: { 200: TagGroup },
      },
    },
    async (req) => updateTagGroup(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/tag-groups/:id',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Delete a label group (its labels stay, without a group)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteTagGroup(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
