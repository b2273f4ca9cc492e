// /v1/companies: read by any member (keys contacts:read or contacts:write), written by agents
// and above (keys contacts:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { type Access, access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { PICTURE_RULES, pictureBody, withMultipart } from '../images/http.js';
import { pictureFromUpload } from '../images/service.js';
import { queuePictureLookup } from '../images/sources.js';
import { Company, CreateCompanyBody, ListCompaniesQuery, PatchCompanyBody } from './schemas.js';
import {
  createCompany,
  deleteCompany,
  getCompany,
  listCompanies,
  setCompanyPicture,
  updateCompany,
} from './service.js';

export default async function companyRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'contacts:read', 'contacts:write');
  const write = access.member('agent', 'contacts:write');

  app.get(
    '/v1/companies',
    {
      config: { access: read },
      schema: {
        tags: ['companies'],
        summary: 'List companies, newest first (q: part of the name or domain)',
        querystring: ListCompaniesQuery,
        response: { 200: PageOf(Company) },
      },
    },
    async (req) => listCompanies(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/companies',
    {
      config: { access: write },
      schema: { tags: ['companies'], summary: 'Create a company', body: CreateCompanyBody, response: { 201: Company } },
    },
    async (req, reply) => {
      const company = await createCompany(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/companies/${company.id}`);
      return company;
    },
  );

  app.get(
    '/v1/companies/:id',
    {
      config: { access: read },
      schema: { tags: ['companies'], summary: 'A company', params: IdParams, response: { 200: Company } },
    },
    async (req) => getCompany(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/companies/:id',
    {
      config: { access: write },
      schema: {
        tags: ['companies'],
        summary: 'Change a company (custom is merged; a null value removes its key)',
        params: IdParams,
        body: PatchCompanyBody,
        response: { 200: Company },
      },
    },
    async (req) => updateCompany(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/companies/:id',
    {
      config: { access: write },
      schema: {
        tags: ['companies'],
        summary: 'Delete a company (its contacts remain, without a company)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteCompany(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  await companyPictureRoutes(app, deps, write);
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images): the company's logo: PUT and DELETE, and a new automatic lookup.

async function companyPictureRoutes(app: App, deps: Deps, write: Access) {
  await withMultipart(app, (scope) => {
    scope.put(
      '/v1/companies/:id/avatar',
      {
        config: { access: write, idempotent: false, swaggerTransform: pictureBody },
        schema: {
          tags: ['companies'],
          summary: "Upload the company's logo (multipart/form-data, one field named file)",
          description: PICTURE_RULES,
          consumes: ['multipart/form-data'],
          params: IdParams,
          response: { 200: Company },
        },
      },
      async (req) => {
        const { id } = req.params;
        await getCompany(deps, req.ctx, id); // 404 before the body is read
        const owner = { kind: 'company' as const, id, workspaceId: req.ctx.workspaceId };
        const picture = await pictureFromUpload(deps, req, owner, 'fit');
        return (await setCompanyPicture(deps, req.ctx.workspaceId, req.ctx, id, { picture }))!;
      },
    );
  });

  app.delete(
    '/v1/companies/:id/avatar',
    {
      config: { access: write },
      schema: {
        tags: ['companies'],
        summary: "Remove the company's logo (avatar_url becomes null)",
        params: IdParams,
        response: { 200: Company },
      },
    },
    async (req) => (await setCompanyPicture(deps, req.ctx.workspaceId, req.ctx, req.params.id, { picture: null }))!,
  );

  app.post(
    '/v1/companies/:id/avatar/refresh',
    {
      config: { access: write },
      schema: {
        tags: ['companies'],
        summary: 'Look the logo up again from the domain (when the workspace setting domain_logos is on)',
        description:
          '202: a job looks the automatic source up. It changes nothing when it finds no picture, and never ' +
          'replaces an uploaded one; a new picture comes as company.updated.',
        params: IdParams,
        response: { 202: Type.Null() },
      },
    },
    async (req, reply) => {
      await getCompany(deps, req.ctx, req.params.id);
      await queuePictureLookup(deps, { kind: 'company', workspace_id: req.ctx.workspaceId, id: req.params.id });
      return reply.code(202).send(null);
    },
  );
}
