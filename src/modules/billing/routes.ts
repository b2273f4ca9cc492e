// /v1/billing, /v1/billing/usage, the checkout, portal, top-up and card routes, the auto-recharge
// settings and the payment provider's webhook (interface.md "Billing (hosted offering only)";
// docs/billing.md). Who: GET /v1/billing any member (keys settings:read or settings:write); the
// usage report and everything else owners and admins (usage: settings:read or write; the rest
// settings:write). Self-hosted (no STRIPE_SECRET_KEY): all but GET billing and usage answer 404
// billing_disabled. The routes that need the payment provider call the registered BillingProvider
// (provider.ts): 503 unavailable while none is registered.
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { conflict } from '../../platform/http/errors.js';
import { requireHosted, requireProvider } from './provider.js';
import {
  AutoRechargeBody,
  Billing,
  CheckoutBody,
  TopUpBody,
  Url,
  UsageQuery,
  UsageReport,
  WebhookReceipt,
} from './schemas.js';
import { getBilling, patchAutoRecharge } from './service.js';
import { usageReport } from './usage.js';

/**
 * A workspace in these states has a subscription at the provider (a new checkout would be a
 * second), whatever its plan (unpaid, incomplete and paused ones are on free: docs/billing.md).
 */
const SUBSCRIBED = new Set(['active', 'trialing', 'past_due', 'unpaid', 'incomplete', 'paused']);

export default async function billingRoutes(app: App, deps: Deps) {
  const tags = ['billing'];
  const read = access.member('viewer', 'settings:read', 'settings:write');
  const adminRead = access.member('admin', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');

  app.get(
    '/v1/billing',
    {
      config: { access: read },
      schema: {
        tags,
        summary:
          "The workspace's plan, seats, limits, AI balance, prices and auto-recharge (self_hosted without billing)",
        response: { 200: Billing },
      },
    },
    async (req) => getBilling(deps, req.ctx.workspaceId),
  );

  app.get(
    '/v1/billing/usage',
    {
      config: { access: adminRead },
      schema: {
        tags,
        summary:
          'AI usage over a range (default this UTC month, at most a year): totals, by feature, day, member, model',
        querystring: UsageQuery,
        response: { 200: UsageReport },
      },
    },
    async (req) => usageReport(deps, req.ctx.workspaceId, req.query),
  );

  app.post(
    '/v1/billing/checkout',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'A checkout for the pro plan (monthly or yearly), seats = owners + admins + agents; its url',
        body: CheckoutBody,
        response: { 200: Url },
      },
    },
    async (req) => {
      requireHosted(deps);
      // One subscription per workspace: a second checkout would charge for the plan twice.
      const now = await getBilling(deps, req.ctx.workspaceId);
      if (SUBSCRIBED.has(now.status)) {
        throw conflict(
          `This workspace already has a subscription (status ${now.status}): pay it, or change its interval, seats or card, in the customer portal (POST /v1/billing/portal).`,
        );
      }
      return requireProvider().checkout(deps, req.ctx, req.body);
    },
  );

  app.post(
    '/v1/billing/portal',
    {
      config: { access: write },
      schema: { tags, summary: "The payment provider's customer portal; its url", response: { 200: Url } },
    },
    async (req) => {
      requireHosted(deps);
      return requireProvider().portal(deps, req.ctx);
    },
  );

  app.post(
    '/v1/billing/top-up/checkout',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'A one-time checkout for AI top-ups (1 to 20, each adds 10 dollars); its url',
        body: TopUpBody,
        response: { 200: Url },
      },
    },
    async (req) => {
      requireHosted(deps);
      return requireProvider().topUpCheckout(deps, req.ctx, req.body);
    },
  );

  app.post(
    '/v1/billing/payment-method',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'A setup-mode checkout that saves a card (for auto-recharge); its url',
        response: { 200: Url },
      },
    },
    async (req) => {
      requireHosted(deps);
      return requireProvider().setupCheckout(deps, req.ctx);
    },
  );

  app.patch(
    '/v1/billing/auto-recharge',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Auto-recharge settings: enabled (needs a saved card), threshold_usd, top_ups, monthly_limit',
        body: AutoRechargeBody,
        response: { 200: Billing },
      },
    },
    async (req) => {
      requireHosted(deps);
      return patchAutoRecharge(deps, req.ctx, req.body);
    },
  );

  // The payment provider's events: no service credentials; the provider's signature over the raw
  // body (Stripe-Signature) is checked by the provider's handler. The body goes through the
  // service's JSON parser (malformed JSON or UTF-8: 400), which keeps the exact text it parsed
  // (req.rawBody), so the bytes signed are the bytes checked. Every verified event answers 200
  // with its receipt (result processed, ignored or duplicate); a bad signature 400 bad_request.
  app.post(
    '/v1/billing/webhook',
    {
      config: { access: access.public(), rateLimited: false, idempotent: false },
      schema: {
        tags,
        summary:
          "The payment provider's webhook (signed events): 200 with what became of a verified event (processed, ignored, duplicate), 400 on a bad signature; 404 billing_disabled without billing",
        response: { 200: WebhookReceipt },
      },
    },
    async (req) => {
      requireHosted(deps);
      const provider = requireProvider();
      const sig = req.headers['stripe-signature'];
      const body = Buffer.from(req.rawBody ?? '', 'utf8');
      return provider.handleWebhook(deps, body, typeof sig === 'string' ? sig : undefined);
    },
  );
}
