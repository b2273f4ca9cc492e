// /v1/companies: read by any member (keys contacts:read or contacts:write), written by agents
// and above (keys contacts:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { Company, CreateCompanyBody, ListCompaniesQuery, PatchCompanyBody } from './schemas.js';
import { createCompany, deleteCompany, getCompany, listCompanies, updateCompany } from './service.js';

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
}
