// /v1/webhooks: endpoints (admin users, or keys with settings:read / settings:write), their
// delivery records, a test event and redelivery.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  Delivery,
  DeliveryParams,
  DeliveryWithBody,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  PatchWebhookBody,
  RotateSecretBody,
  Webhook,
} from './schemas.js';
import {
  createWebhook,
  deleteWebhook,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
} from './service.js';

export default async function webhookRoutes(app: App, deps: Deps) {
  const read = access.member('admin', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');
  const tags = ['webhooks'];

  app.get(
    '/v1/webhooks',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List webhook endpoints (newest first)',
        querystring: ListWebhooksQuery,
        response: { 200: PageOf(Webhook) },
      },
    },
    async (req) => listWebhooks(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/webhooks',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a webhook endpoint (the signing `secret` is in this response only)',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook },
      },
    },
    async (req, reply) => {
      const w = await createWebhook(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/webhooks/${w.id}`).header('cache-control', 'no-store');
      return w;
    },
  );

  app.get(
    '/v1/webhooks/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A webhook endpoint', params: IdParams, response: { 200: Webhook } },
    },
    async (req) => getWebhook(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a webhook endpoint (enabled: false pauses it)',
        params: IdParams,
        body: PatchWebhookBody,
        response: { 200: Webhook },
      },
    },
    async (req) => updateWebhook(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Delete a webhook endpoint and its delivery records',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteWebhook(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      // The answer holds the new secret: never stored for an Idempotency-Key replay.
      config: { access: write, idempotent: false },
      schema: {
        tags,
        summary:
          'A new signing secret for this endpoint (in this response only); the old one signs beside it for a while',
        description:
          'The replaced secret keeps signing deliveries as a second `v1` in SVC-Signature for ' +
          '`previous_secret_hours` (default 24), so the receiver can switch to the new secret without a failed ' +
          'delivery; `previous_secret_expires_at` says until when. 0 ends the old secret at once (it leaked). ' +
          'Audit-logged as webhook.secret_rotated.',
        params: IdParams,
        body: RotateSecretBody,
        response: { 200: CreatedWebhook },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return rotateWebhookSecret(deps, req.ctx, req.params.id, req.body);
    },
  );

  app.post(
    '/v1/webhooks/:id/test',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Send a webhook.test event to this endpoint only',
        params: IdParams,
        response: { 202: Delivery },
      },
    },
    async (req, reply) => {
      const d = await testWebhook(deps, req.ctx, req.params.id);
      reply.code(202);
      return d;
    },
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Delivery records of an endpoint (newest first)',
        params: IdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: PageOf(Delivery) },
      },
    },
    async (req) => listDeliveries(deps, req.ctx, req.params.id, req.query),
  );

  app.get(
    '/v1/webhooks/:id/deliveries/:delivery_id',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'A delivery record with the body it sends',
        params: DeliveryParams,
        response: { 200: DeliveryWithBody },
      },
    },
    async (req) => getDelivery(deps, req.ctx, req.params.id, req.params.delivery_id),
  );

  app.post(
    '/v1/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Send a finished delivery again (a new delivery record, same event and body)',
        params: DeliveryParams,
        response: { 202: Delivery },
      },
    },
    async (req, reply) => {
      const d = await redeliver(deps, req.ctx, req.params.id, req.params.delivery_id);
      reply.code(202);
      return d;
    },
  );
}
