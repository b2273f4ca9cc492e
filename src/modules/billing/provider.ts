// The payment provider behind the hosted offering's billing routes (docs/billing.md "The
// provider"). The billing module (this folder) owns the routes, their validation and access, the
// ledger and the Billing object; what needs the payment provider (checkout sessions, the customer
// portal, the webhook, the off-session recharge, the prices' amounts) is a BillingProvider that
// src/modules/billing/stripe/ registers at start-up with registerBillingProvider.
//
// Without STRIPE_SECRET_KEY the routes answer 404 billing_disabled and no provider is asked.
// With it but none registered (a build without the Stripe side), the provider's routes answer
// 503 unavailable, prices show null, and a balance under the threshold recharges nothing.
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';

/** A provider's Price as Billing.prices shows it (interface.md "Billing objects"). */
export interface PriceView {
  id: string;
  unit_amount: number | null;
  currency: string | null;
  interval: 'month' | 'year' | null;
  /** ai_top_up only: the AI usage one top-up adds (10). */
  usd?: number;
}

export interface PricesView {
  pro_month: PriceView | null;
  pro_year: PriceView | null;
  ai_top_up: PriceView | null;
}

/**
 * What a verified webhook delivery answers (200, whatever became of the event: gaps.md): the
 * event's id and type, and `result`: `processed` (acted on now), `ignored` (a type not acted on,
 * or naming no workspace here: recorded, nothing changed) or `duplicate` (the id was received
 * before: nothing changed). A missing or bad signature: the handler throws ApiError bad_request
 * (400), nothing changes; the provider unreachable while processing: a 5xx, and it retries.
 */
export interface WebhookOutcome {
  received: true;
  id: string;
  type: string;
  result: 'processed' | 'ignored' | 'duplicate';
}

export interface BillingProvider {
  /** POST /v1/billing/checkout: a subscription checkout for the plan's interval; its url. */
  checkout(deps: Deps, ctx: RequestContext, input: { interval: 'month' | 'year' }): Promise<{ url: string }>;
  /** POST /v1/billing/portal: a customer portal session; its url. */
  portal(deps: Deps, ctx: RequestContext): Promise<{ url: string }>;
  /**
   * POST /v1/billing/top-up/checkout: a one-time checkout for `top_ups` (1 to 20, validated
   * already); throws 422 top_up_unavailable without the top-up price.
   */
  topUpCheckout(deps: Deps, ctx: RequestContext, input: { top_ups: number }): Promise<{ url: string }>;
  /** POST /v1/billing/payment-method: a setup-mode checkout that saves a card; its url. */
  setupCheckout(deps: Deps, ctx: RequestContext): Promise<{ url: string }>;
  /**
   * POST /v1/billing/webhook: the raw body as received and the Stripe-Signature header. Credits
   * payments with creditTopUp, changes the plan with updateAccount (service.ts). Throws ApiError
   * bad_request on a missing or bad signature.
   */
  handleWebhook(deps: Deps, rawBody: Buffer, signature: string | undefined): Promise<WebhookOutcome>;
  /**
   * The prices of STRIPE_PRICE_* as the provider describes them. Called for every Billing object,
   * also inside open transactions (billing.updated after a charge): answer from memory (fetched
   * once and kept), never with a request per call.
   */
  prices?(deps: Deps): Promise<PricesView>;
  /**
   * afterCharge: a charged AI call left the balance below the workspace's auto-recharge
   * threshold while auto-recharge is on (called after the charge committed, awaited by the AI
   * call's metering: enqueue the payment, do not pay inline). The provider decides, exactly once
   * for many concurrent calls, whether a recharge is due (monthly_limit) and pays it.
   */
  afterCharge?(deps: Deps, workspaceId: string): Promise<void>;
  /** The billed seats (owners, admins, agents) of a workspace changed: sync the subscription's quantity. */
  seatsChanged?(deps: Deps, workspaceId: string): Promise<void>;
}

let registered: BillingProvider | null = null;

/** Called once by the Stripe side at start-up (a second call replaces the first: tests). */
export function registerBillingProvider(p: BillingProvider | null): void {
  registered = p;
}

export function billingProvider(): BillingProvider | null {
  return registered;
}

/** The registered provider, or 503 unavailable (a hosted instance built without one). */
export function requireProvider(): BillingProvider {
  if (!registered) throw new ApiError('unavailable', 'Payments are not available on this instance right now.');
  return registered;
}

/** Whether this instance is the hosted offering: exactly when STRIPE_SECRET_KEY is set. */
export const isHosted = (deps: Deps): boolean => Boolean(deps.config.stripe.secretKey);

/** 404 billing_disabled on a self-hosted instance (every billing route but GET billing and usage). */
export function requireHosted(deps: Deps): void {
  if (!isHosted(deps)) {
    throw new ApiError('billing_disabled', 'Billing is off on this instance (self-hosted: no plans, no AI balance).');
  }
}
