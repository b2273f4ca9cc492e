// /v1/custom-fields: definitions readable by every member and by keys with settings:read,
// tickets:read or contacts:read; changed by admins and keys with settings:write.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { IdParams } from '../../platform/http/schemas.js';
import { definitionsRead, definitionsWrite } from '../tags/routes.js';
import {
  CreateCustomFieldBody,
  CustomField,
  ListCustomFieldsQuery,
  PatchCustomFieldBody,
  ReorderCustomFieldsBody,
} from './schemas.js';
import {
  createCustomField,
  deleteCustomField,
  getCustomField,
  listCustomFields,
  reorderCustomFields,
  updateCustomField,
} from './service.js';

export default async function customFieldRoutes(app: App, deps: Deps) {
  // The same access as label definitions (docs/api.md "Custom fields").
  const read = definitionsRead;
  const write = definitionsWrite;
  const tags = ['custom-fields'];
  const List = Type.Object({ data: Type.Array(CustomField) });

  app.get(
    '/v1/custom-fields',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Every custom field (by entity, then position); filters entity, archived',
        querystring: ListCustomFieldsQuery,
        response: { 200: List },
      },
    },
    async (req) => listCustomFields(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/custom-fields',
    {
      config: { access: write },
      schema: { tags, summary: 'Define a custom field', body: CreateCustomFieldBody, response: { 201: CustomField } },
    },
    async (req, reply) => {
      const field = await createCustomField(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/custom-fields/${field.id}`);
      return field;
    },
  );

  app.post(
    '/v1/custom-fields/reorder',
    {
      config: { access: write },
      schema: {
        tags,
        summary: "Reorder one entity's fields: position becomes the index in ids",
        body: ReorderCustomFieldsBody,
        response: { 200: List },
      },
    },
    async (req) => reorderCustomFields(deps, req.ctx, req.body),
  );

  app.get(
    '/v1/custom-fields/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A custom field', params: IdParams, response: { 200: CustomField } },
    },
    async (req) => getCustomField(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/custom-fields/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a custom field (entity, key and type are fixed; removed options leave stored values)',
        params: IdParams,
        body: PatchCustomFieldBody,
        response: { 200: CustomField },
      },
    },
    async (req) => updateCustomField(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/custom-fields/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Delete a custom field and its values on every record',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteCustomField(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
