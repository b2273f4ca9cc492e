// The billing routes' payment provider backed by Stripe: what src/modules/billing's
// `BillingProvider` asks (checkout, portal, top-up and card checkouts, the webhook, prices,
// afterCharge, seatsChanged), built from the client (client.ts), the webhook (webhook.ts) and the
// recharge (recharge.ts) over the billing core's port (ports.ts). Registered at start-up when
// STRIPE_SECRET_KEY is set.
import type { Deps } from '../../../deps.js';
import { ApiError } from '../../../platform/http/errors.js';
import { type BillingProvider, registerBillingProvider } from '../provider.js';
import {
  type BillingPrices,
  type CheckoutRequest,
  PriceUnavailableError,
  StripeClient,
  type StripeSettings,
  stripeSettingsFrom,
} from './client.js';
import { accountCore } from './core.js';
import type { BillingCore } from './ports.js';
import { afterCharge, type RechargeOutcome } from './recharge.js';
import { receiveWebhook, type WebhookReceipt } from './webhook.js';

export interface StripeProvider {
  readonly client: StripeClient;
  checkout(deps: Deps, ctx: { workspaceId: string }, input: { interval: 'month' | 'year' }): Promise<{ url: string }>;
  portal(deps: Deps, ctx: { workspaceId: string }): Promise<{ url: string }>;
  topUpCheckout(deps: Deps, ctx: { workspaceId: string }, input: { top_ups: number }): Promise<{ url: string }>;
  setupCheckout(deps: Deps, ctx: { workspaceId: string }): Promise<{ url: string }>;
  /** A verified event's receipt; throws ApiError bad_request (400) on a missing or bad signature. */
  handleWebhook(deps: Deps, rawBody: Buffer | string, signature: string | undefined): Promise<WebhookReceipt>;
  prices(deps: Deps): Promise<BillingPrices>;
  /** Resolves once the recharge (if one was due) is done; never throws. */
  afterCharge(deps: Deps, workspaceId: string): Promise<RechargeOutcome | null>;
  seatsChanged(deps: Deps, workspaceId: string): Promise<void>;
}

/** A Stripe failure in a request: 503 unavailable when Stripe cannot be reached or answers 5xx. */
function asApiError(err: unknown): unknown {
  if (err instanceof PriceUnavailableError) {
    return err.which === 'ai_top_up'
      ? new ApiError('top_up_unavailable', 'This instance offers no AI top-ups.')
      : new ApiError('unavailable', `The ${err.which} price is not configured on this instance.`);
  }
  const type = (err as { type?: string } | null)?.type;
  if (type === 'StripeConnectionError' || type === 'StripeAPIError' || type === 'StripeRateLimitError') {
    return new ApiError('unavailable', 'The payment provider cannot be reached right now; try again shortly.');
  }
  return err;
}

export function createStripeProvider(settings: StripeSettings, core: BillingCore, webhookSecret: string | null) {
  const client = new StripeClient(settings);

  /** The workspace's customer at Stripe, made (once, idempotently) the first time it is needed. */
  async function customerOf(deps: Deps, workspaceId: string) {
    const account = await deps.writer.run(workspaceId, (unit) => core.account(unit));
    if (account.customerId) return { account, customerId: account.customerId };
    const customerId = await client.ensureCustomer({
      workspaceId,
      customerId: null,
      name: account.name,
      email: account.email,
    });
    await deps.writer.run(workspaceId, (unit) => core.setCustomer(unit, customerId));
    return { account, customerId };
  }

  async function checkoutFor(deps: Deps, workspaceId: string, req: (seats: number) => CheckoutRequest) {
    try {
      const { account, customerId } = await customerOf(deps, workspaceId);
      const { url } = await client.createCheckout(workspaceId, customerId, req(account.billedSeats));
      return { url };
    } catch (err) {
      throw asApiError(err);
    }
  }

  const provider: StripeProvider = {
    client,
    checkout: (deps, ctx, input) =>
      checkoutFor(deps, ctx.workspaceId, (seats) => ({ kind: 'plan', interval: input.interval, seats })),
    topUpCheckout: (deps, ctx, input) =>
      checkoutFor(deps, ctx.workspaceId, () => ({ kind: 'top_up', topUps: input.top_ups })),
    setupCheckout: (deps, ctx) => checkoutFor(deps, ctx.workspaceId, () => ({ kind: 'card' })),

    async portal(deps, ctx) {
      try {
        const { customerId } = await customerOf(deps, ctx.workspaceId);
        return await client.portal(customerId);
      } catch (err) {
        throw asApiError(err);
      }
    },

    async handleWebhook(deps, rawBody, signature) {
      if (!webhookSecret) throw new ApiError('bad_request', 'STRIPE_WEBHOOK_SECRET is not set.');
      return receiveWebhook({ deps, core, client, webhookSecret }, rawBody, signature);
    },

    prices: () => client.prices(),

    async afterCharge(deps, workspaceId) {
      try {
        return await afterCharge({ deps, core, client }, workspaceId);
      } catch (err) {
        deps.log.error({ err, workspaceId }, 'auto-recharge failed to run');
        return null;
      }
    },

    async seatsChanged(deps, workspaceId) {
      const account = await deps.writer.run(workspaceId, (unit) => core.account(unit));
      if (!account.subscriptionId) return;
      try {
        await client.syncSeats(account.subscriptionId, account.billedSeats);
      } catch (err) {
        // The next change syncs again; Stripe's subscription.updated tells the plan what it bills.
        deps.log.warn({ err, workspaceId }, 'seat sync with Stripe failed');
      }
    },
  };
  return provider;
}

/**
 * The provider the billing routes use: one object for the process (the registry is global), whose
 * every call works with the calling service's configuration and database (`deps`), so services
 * with different Stripe settings (tests) can share a process.
 */
const perService = new WeakMap<Deps, StripeProvider | null>();

function providerOf(deps: Deps): StripeProvider | null {
  let p = perService.get(deps);
  if (p === undefined) {
    const settings = stripeSettingsFrom(deps.config);
    const secret = deps.config.stripe.webhookSecret;
    p = settings && secret ? createStripeProvider(settings, accountCore(deps), secret) : null;
    perService.set(deps, p);
  }
  return p;
}

/** This service's provider; a service without Stripe's key and webhook secret has none (503, as unregistered). */
function forDeps(deps: Deps): StripeProvider {
  const p = providerOf(deps);
  if (!p) throw new ApiError('unavailable', 'Payments are not available on this instance right now.');
  return p;
}

export const stripeBillingProvider: BillingProvider = {
  checkout: (deps, ctx, input) => forDeps(deps).checkout(deps, ctx, input),
  portal: (deps, ctx) => forDeps(deps).portal(deps, ctx),
  topUpCheckout: (deps, ctx, input) => forDeps(deps).topUpCheckout(deps, ctx, input),
  setupCheckout: (deps, ctx) => forDeps(deps).setupCheckout(deps, ctx),
  handleWebhook: (deps, rawBody, signature) => forDeps(deps).handleWebhook(deps, rawBody, signature),
  prices: (deps) => forDeps(deps).prices(deps),
  // Not paid inline (the AI call that crossed the threshold is not held up): one waiting job per
  // workspace (a `short` queue keyed by it), which claims the recharge exactly once.
  async afterCharge(deps, workspaceId) {
    if (!providerOf(deps)) return;
    await deps.jobs.send<RechargeJob>(RECHARGE_JOB, { w: workspaceId }, { policy: 'short', singletonKey: workspaceId });
  },
  seatsChanged: async (deps, workspaceId) => providerOf(deps)?.seatsChanged(deps, workspaceId),
};

export const RECHARGE_JOB = 'billing-recharge';
interface RechargeJob {
  w: string;
}

/** The auto-recharge worker (runtime.ts): a recharge job runs the claim, the payment and the finish. */
export async function registerRechargeJobs(deps: Deps): Promise<void> {
  if (!providerOf(deps)) return;
  await deps.jobs.work<RechargeJob>(RECHARGE_JOB, async (job) => void (await forDeps(deps).afterCharge(deps, job.w)), {
    concurrency: 1,
    policy: 'short',
  });
}

/**
 * Registers Stripe as the billing provider when this service has STRIPE_SECRET_KEY and
 * STRIPE_WEBHOOK_SECRET: without the webhook's secret no payment could ever be confirmed, so no
 * checkout is offered (the payment routes answer 503 unavailable).
 */
export function registerStripe(deps: Deps): void {
  if (deps.config.stripe.secretKey && deps.config.stripe.webhookSecret) registerBillingProvider(stripeBillingProvider);
}

/** In the app's module list, after the billing routes: registers Stripe for this service's configuration. */
export default async function stripeBilling(_app: unknown, deps: Deps): Promise<void> {
  registerStripe(deps);
}
