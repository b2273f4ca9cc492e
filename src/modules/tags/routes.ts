// /v1/tags: label definitions. Read by every member (keys with settings, tickets or contacts
// scopes, read or write); changed by admins (keys settings:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams } from '../../platform/http/schemas.js';
import { CreateTagBody, ListTagsQuery, MergeTagBody, PatchTagBody, ReorderBody, Tag, TagList } from './schemas.js';
import { createTag, deleteTag, getTag, listTags, MAX_TAGS, mergeTag, reorderTags, updateTag } from './service.js';

/** Who may read and change label and label group definitions (tag-groups uses the same). */
export const definitionsRead = access.member(
  'viewer',
  'settings:read',
  'settings:write',
  'tickets:read',
  'tickets:write',
  'contacts:read',
  'contacts:write',
);
export const definitionsWrite = access.member('admin', 'settings:write');

export default async function tagRoutes(app: App, deps: Deps) {
  const tags = ['labels'];

  app.get(
    '/v1/tags',
    {
      config: { access: definitionsRead },
      schema: {
        tags,
        summary: 'Every label (one list, no pages): by group position, then position, then name',
        querystring: ListTagsQuery,
        response: { 200: TagList },
      },
    },
    async (req) => listTags(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/tags',
    {
      config: { access: definitionsWrite },
      schema: { tags, summary: 'Create a label', body: CreateTagBody, response: { 201: Tag } },
    },
    async (req, reply) => {
      const tag = await createTag(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/tags/${tag.id}`);
      return tag;
    },
  );

  app.post(
    '/v1/tags/reorder',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Reorder labels: every label id once; position becomes the index',
        body: ReorderBody(MAX_TAGS),
        response: { 200: TagList },
      },
    },
    async (req) => reorderTags(deps, req.ctx, req.body.ids),
  );

  app.get(
    '/v1/tags/:id',
    {
      config: { access: definitionsRead },
      schema: { tags, summary: 'A label', params: IdParams, response: { 200: Tag } },
    },
    async (req) => getTag(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/tags/:id',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Change a label (a rename also renames it in views)',
        params: IdParams,
        body: PatchTagBody,
        response: { 200: Tag },
      },
    },
    async (req) => updateTag(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/tags/:id',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Delete a label (it is removed from every record)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteTag(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/tags/:id/merge',
    {
      config: { access: definitionsWrite },
      schema: {
        tags,
        summary: 'Merge a label into another: its records get `into`, then it is deleted; returns the into label',
        params: IdParams,
        body: MergeTagBody,
        response: { 200: Tag },
      },
    },
    async (req) => mergeTag(deps, req.ctx, req.params.id, req.body),
  );
}
