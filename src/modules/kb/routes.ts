// /v1/kb/collections and /v1/kb/articles: the knowledge base as agents manage it. Read by any
// member, drafts included (keys kb:read or kb:write); written by agents and above (keys
// kb:write): articles are support work, like saved replies, not workspace settings.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { createArticle, deleteArticle, getArticle, updateArticle } from './articles.js';
import { createCollection, deleteCollection, getCollection, listCollections, updateCollection } from './collections.js';
import { listArticles } from './list.js';
import {
  CreateKbArticleBody,
  CreateKbCollectionBody,
  KbArticle,
  KbArticleHit,
  KbCollection,
  ListKbArticlesQuery,
  ListKbCollectionsQuery,
  PatchKbArticleBody,
  PatchKbCollectionBody,
} from './schemas.js';

export default async function kbRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'kb:read', 'kb:write');
  const write = access.member('agent', 'kb:write');
  const tags = ['knowledge-base'];

  app.get(
    '/v1/kb/collections',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List collections in position order',
        querystring: ListKbCollectionsQuery,
        response: { 200: PageOf(KbCollection) },
      },
    },
    async (req) => listCollections(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/kb/collections',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a collection (slug from the name unless given; position after the last unless given)',
        body: CreateKbCollectionBody,
        response: { 201: KbCollection },
      },
    },
    async (req, reply) => {
      const c = await createCollection(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/kb/collections/${c.id}`);
      return c;
    },
  );

  app.get(
    '/v1/kb/collections/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A collection', params: IdParams, response: { 200: KbCollection } },
    },
    async (req) => getCollection(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/kb/collections/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a collection (its slug changes only when given)',
        params: IdParams,
        body: PatchKbCollectionBody,
        response: { 200: KbCollection },
      },
    },
    async (req) => updateCollection(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/kb/collections/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Delete an empty collection (409 while it holds articles)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteCollection(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/kb/articles',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List articles, drafts included: newest first, or with q best match first with a snippet',
        querystring: ListKbArticlesQuery,
        response: { 200: PageOf(KbArticleHit) },
      },
    },
    async (req) => listArticles(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/kb/articles',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create an article (title required; status draft unless given; slug from the title unless given)',
        body: CreateKbArticleBody,
        response: { 201: KbArticle },
      },
    },
    async (req, reply) => {
      const a = await createArticle(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/kb/articles/${a.id}`);
      return a;
    },
  );

  app.get(
    '/v1/kb/articles/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'An article', params: IdParams, response: { 200: KbArticle } },
    },
    async (req) => getArticle(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/kb/articles/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change an article (a new title without a slug moves the slug; old slugs keep resolving)',
        params: IdParams,
        body: PatchKbArticleBody,
        response: { 200: KbArticle },
      },
    },
    async (req) => updateArticle(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/kb/articles/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete an article', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteArticle(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
