// Setup shared by the Stripe webhook and recharge tests: a service (its database, writer and
// workspaces), the Stripe stand-in with the three prices, and a ledger that records what the
// Stripe side asks of the billing core (src/modules/billing/stripe/ports.ts `BillingCore`).
//
// The recording ledger stands in for the billing core (src/modules/billing, built in parallel
// on another branch) until it lands: it keeps each workspace's balance, settings and the calls
// made, so the tests can say "credited once", "plan pro with 3 seats", "auto-recharge off with
// card_declined". Once the core's provider is merged these tests run against it instead.
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { RechargeFailureCode } from '../../../src/modules/billing/stripe/client.js';
import { StripeClient } from '../../../src/modules/billing/stripe/client.js';
import type {
  BillingAccount,
  BillingCore,
  RechargeState,
  SubscriptionState,
  TopUpCredit,
} from '../../../src/modules/billing/stripe/ports.js';
import type { StripeContext } from '../../../src/modules/billing/stripe/recharge.js';
import { receiveWebhook, type WebhookContext } from '../../../src/modules/billing/stripe/webhook.js';
import { ApiError } from '../../../src/platform/http/errors.js';
import { newTenant, type Service, startService } from '../../support/helpers.js';
import { type StripeEvent, type StripeStandIn, startStripeStandIn } from '../../support/stripe-standin/index.js';

export const PUBLIC_URL = 'https://desk.example.com';

export interface Ledger {
  balanceUsd: number;
  account: BillingAccount;
  settings: Omit<RechargeState, 'balanceUsd'>;
  credits: TopUpCredit[];
  subscriptions: SubscriptionState[];
  cards: Array<{ customerId: string; paymentMethodId: string }>;
  failures: Array<{ code: RechargeFailureCode; at: Date }>;
}

/** The billing core's side, recorded per workspace. */
export class RecordingCore implements BillingCore {
  readonly ledgers = new Map<string, Ledger>();

  of(workspaceId: string): Ledger {
    let l = this.ledgers.get(workspaceId);
    if (!l) {
      l = {
        balanceUsd: 5,
        account: { customerId: null, subscriptionId: null, billedSeats: 1, name: 'Acme', email: 'owner@example.com' },
        settings: {
          enabled: false,
          thresholdUsd: 2,
          topUps: 1,
          monthlyLimit: 5,
          customerId: null,
          paymentMethodId: null,
        },
        credits: [],
        subscriptions: [],
        cards: [],
        failures: [],
      };
      this.ledgers.set(workspaceId, l);
    }
    return l;
  }

  async account(unit: { workspaceId: string }): Promise<BillingAccount> {
    return { ...this.of(unit.workspaceId).account };
  }
  async setCustomer(unit: { workspaceId: string }, customerId: string) {
    this.of(unit.workspaceId).account.customerId = customerId;
  }
  async creditTopUp(unit: { workspaceId: string }, credit: TopUpCredit) {
    const l = this.of(unit.workspaceId);
    l.credits.push(credit);
    l.balanceUsd += credit.usd;
  }
  async applySubscription(unit: { workspaceId: string }, state: SubscriptionState) {
    const l = this.of(unit.workspaceId);
    l.subscriptions.push(state);
    l.account.subscriptionId = state.subscriptionId;
    l.account.customerId = state.customerId;
  }
  async savePaymentMethod(unit: { workspaceId: string }, card: { customerId: string; paymentMethodId: string }) {
    const l = this.of(unit.workspaceId);
    l.cards.push(card);
    l.settings.customerId = card.customerId;
    l.settings.paymentMethodId = card.paymentMethodId;
  }
  async rechargeState(unit: { workspaceId: string }): Promise<RechargeState> {
    const l = this.of(unit.workspaceId);
    return { ...l.settings, balanceUsd: l.balanceUsd };
  }
  async rechargeFailed(unit: { workspaceId: string }, failure: { code: RechargeFailureCode; at: Date }) {
    const l = this.of(unit.workspaceId);
    l.failures.push(failure);
    l.settings.enabled = false;
  }
}

export function addPrices(s: StripeStandIn) {
  s.addPrice({ id: 'price_pro_month', unit_amount: 1500, currency: 'usd', interval: 'month' });
  s.addPrice({ id: 'price_pro_year', unit_amount: 15000, currency: 'usd', interval: 'year' });
  s.addPrice({ id: 'price_ai_top_up', unit_amount: 1000, currency: 'usd', interval: null });
}

export function stripeSuite() {
  let svc: Service;
  let stripe: StripeStandIn;
  let client: StripeClient;
  const core = new RecordingCore();

  beforeAll(async () => {
    svc = await startService();
    stripe = await startStripeStandIn();
    client = new StripeClient({
      secretKey: stripe.secretKey,
      apiBase: stripe.url,
      publicUrl: PUBLIC_URL,
      prices: { proMonth: 'price_pro_month', proYear: 'price_pro_year', aiTopUp: 'price_ai_top_up' },
      maxNetworkRetries: 0,
      timeoutMs: 3000,
    });
  });
  afterAll(async () => {
    await stripe?.stop();
    await svc?.stop();
  });
  beforeEach(() => {
    stripe.reset();
    addPrices(stripe);
    core.ledgers.clear();
  });

  const ctx = (): StripeContext & WebhookContext => ({
    deps: svc.rt.deps,
    core,
    client,
    webhookSecret: stripe.webhookSecret,
  });

  /** Delivers an event as Stripe would (signed), or badly signed: the answer's status and body. */
  async function deliver(
    event: StripeEvent,
    opts: { secret?: string; timestamp?: number; signature?: string | null } = {},
  ): Promise<{ status: number; body: any }> {
    const payload = JSON.stringify(event, null, 2);
    const signature =
      opts.signature === undefined
        ? stripe.sign(payload, { secret: opts.secret, timestamp: opts.timestamp })
        : opts.signature;
    try {
      return { status: 200, body: await receiveWebhook(ctx(), payload, signature ?? undefined) };
    } catch (err) {
      if (err instanceof ApiError) return { status: err.status, body: err.toBody() };
      throw err;
    }
  }

  /** A workspace with a Stripe customer. */
  async function workspace(): Promise<{ id: string; customer: string }> {
    const t = await newTenant(svc.api);
    const customer = await client.ensureCustomer({ workspaceId: t.workspaceId, customerId: null, name: 'Acme' });
    return { id: t.workspaceId, customer };
  }

  async function rows(table: 'stripe_events' | 'stripe_payments' | 'stripe_recharges', workspaceId?: string) {
    let q = svc.rt.deps.database.db.selectFrom(table).selectAll();
    if (workspaceId) q = q.where('workspace_id', '=', workspaceId);
    return q.execute();
  }

  return {
    get svc() {
      return svc;
    },
    get stripe() {
      return stripe;
    },
    get client() {
      return client;
    },
    core,
    ctx,
    deliver,
    workspace,
    rows,
  };
}
