// The payment provider's side of billing (docs/billing.md "Connecting Stripe"): every call to
// Stripe goes through the official SDK from here, configured by STRIPE_SECRET_KEY and
// STRIPE_API_BASE (the origin of the API; a stand-in in tests, test/support/stripe-standin).
// gaps.md "Billing (hosted offering)" fixes what each call sends: checkout sessions in three modes
// and their return URLs, the portal, seat sync, and the off-session recharge PaymentIntent with its
// failure codes.
import Stripe from 'stripe';

/** What the client needs, as plain values (config.stripe plus the price ids and PUBLIC_URL). */
export interface StripeSettings {
  secretKey: string;
  /** STRIPE_API_BASE: `http(s)://host:port` of the API (null: api.stripe.com). */
  apiBase: string | null;
  /** PUBLIC_URL: where checkout returns the browser (`/settings/billing?...`). */
  publicUrl: string;
  /** STRIPE_PRICE_PRO_MONTH, STRIPE_PRICE_PRO_YEAR, STRIPE_PRICE_AI_TOP_UP (null: not offered). */
  prices: { proMonth: string | null; proYear: string | null; aiTopUp: string | null };
  /** One request's limit (default 20 s) and the SDK's retries of a failed connection or 5xx (default 2). */
  timeoutMs?: number;
  maxNetworkRetries?: number;
  /** How long a read price is kept before it is read again (default 10 minutes). */
  priceCacheMs?: number;
}

/** The client's settings from the service's configuration; null on a self-hosted instance. */
export function stripeSettingsFrom(config: {
  publicUrl: string;
  stripe: { secretKey: string | null; apiBase: string | null; prices: StripeSettings['prices'] };
}): StripeSettings | null {
  if (!config.stripe.secretKey) return null;
  return {
    secretKey: config.stripe.secretKey,
    apiBase: config.stripe.apiBase,
    publicUrl: config.publicUrl,
    prices: config.stripe.prices,
  };
}

/** interface.md Billing objects "Price". */
export interface BillingPrice {
  id: string;
  unit_amount: number;
  currency: string;
  interval: 'month' | 'year' | null;
  /** ai_top_up only: the AI usage one top-up adds, in dollars. */
  usd?: number;
}

export interface BillingPrices {
  pro_month: BillingPrice | null;
  pro_year: BillingPrice | null;
  ai_top_up: BillingPrice | null;
}

/** interface.md: each top-up adds 10 dollars of AI usage. */
export const TOP_UP_USD = 10;

export type CheckoutRequest =
  | { kind: 'plan'; interval: 'month' | 'year'; seats: number }
  | { kind: 'top_up'; topUps: number }
  | { kind: 'card' };

/** AutoRecharge.failure.code (gaps.md). */
export type RechargeFailureCode =
  | 'card_declined'
  | 'authentication_required'
  | 'no_payment_method'
  | 'payment_failed'
  | 'unavailable';

export type RechargeResult =
  | { ok: true; paymentIntentId: string; amount: number; currency: string }
  | { ok: false; code: RechargeFailureCode; paymentIntentId: string | null; message: string };

/** A checkout that cannot be made: the price it needs is not configured (the route's 422). */
export class PriceUnavailableError extends Error {
  constructor(readonly which: keyof BillingPrices) {
    super(`the ${which} price is not configured`);
  }
}

/** Stripe's API origin split as the SDK takes it. */
export function apiAddress(apiBase: string | null): { host?: string; port?: number; protocol?: 'http' | 'https' } {
  if (!apiBase) return {};
  const u = new URL(apiBase);
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return { host: u.hostname, port: u.port ? Number(u.port) : protocol === 'http' ? 80 : 443, protocol };
}

export function createStripe(s: StripeSettings): Stripe {
  return new Stripe(s.secretKey, {
    ...apiAddress(s.apiBase),
    timeout: s.timeoutMs ?? 20_000,
    maxNetworkRetries: s.maxNetworkRetries ?? 2,
    telemetry: false,
    appInfo: { name: 'helpdesk' },
  });
}

/** The return URL of a checkout (interface.md Billing rule 1). */
export function returnUrl(publicUrl: string, param: 'checkout' | 'top_up' | 'payment_method', outcome: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/settings/billing?${param}=${outcome}`;
}

/** Maps an SDK error of an off-session payment to AutoRecharge.failure.code (gaps.md). */
export function failureCode(err: unknown): RechargeFailureCode {
  const e = err as { type?: string; code?: string; decline_code?: string } | null;
  if (e?.type === 'StripeConnectionError') return 'unavailable';
  if (e?.code === 'authentication_required' || e?.decline_code === 'authentication_required') {
    return 'authentication_required';
  }
  if (e?.code === 'card_declined') return 'card_declined';
  return 'payment_failed';
}

export class StripeClient {
  readonly stripe: Stripe;
  private readonly priceCache = new Map<string, { at: number; price: Promise<BillingPrice | null> }>();

  constructor(readonly settings: StripeSettings) {
    this.stripe = createStripe(settings);
  }

  /** A configured price as Billing.prices shows it (read from Stripe, kept a while); null when unset. */
  async price(which: keyof BillingPrices): Promise<BillingPrice | null> {
    const id =
      which === 'pro_month'
        ? this.settings.prices.proMonth
        : which === 'pro_year'
          ? this.settings.prices.proYear
          : this.settings.prices.aiTopUp;
    if (!id) return null;
    const ttl = this.settings.priceCacheMs ?? 10 * 60_000;
    const hit = this.priceCache.get(id);
    if (hit && Date.now() - hit.at < ttl) return hit.price;
    const price = this.stripe.prices.retrieve(id).then((p): BillingPrice => {
      const interval = p.recurring?.interval;
      return {
        id: p.id,
        unit_amount: p.unit_amount ?? 0,
        currency: p.currency,
        interval: interval === 'month' ? 'month' : interval === 'year' ? 'year' : null,
        ...(which === 'ai_top_up' ? { usd: TOP_UP_USD } : {}),
      };
    });
    this.priceCache.set(id, { at: Date.now(), price });
    // A failed read is not kept: the next one asks again.
    price.catch(() => this.priceCache.delete(id));
    return price;
  }

  /** Billing.prices; a price Stripe cannot answer for now is null rather than failing the page. */
  async prices(): Promise<BillingPrices> {
    const read = (w: keyof BillingPrices) => this.price(w).catch(() => null);
    const [pro_month, pro_year, ai_top_up] = await Promise.all([
      read('pro_month'),
      read('pro_year'),
      read('ai_top_up'),
    ]);
    return { pro_month, pro_year, ai_top_up };
  }

  /** The workspace's customer: the one it has, or a new one (the same one when retried). */
  async ensureCustomer(w: { workspaceId: string; customerId: string | null; name: string; email?: string | null }) {
    if (w.customerId) return w.customerId;
    const c = await this.stripe.customers.create(
      { name: w.name, ...(w.email ? { email: w.email } : {}), metadata: { workspace_id: w.workspaceId } },
      { idempotencyKey: `customer-${w.workspaceId}` },
    );
    return c.id;
  }

  /**
   * A Checkout Session (gaps.md): plan = mode subscription with the interval's price × seats;
   * top-up = mode payment with the top-up price × top_ups; card = mode setup. Every session and
   * what it creates carries the workspace in its metadata, which the webhook reads.
   */
  async createCheckout(
    workspaceId: string,
    customerId: string,
    req: CheckoutRequest,
  ): Promise<{ id: string; url: string }> {
    const metadata = { workspace_id: workspaceId, kind: req.kind };
    const base = { customer: customerId, client_reference_id: workspaceId, metadata };
    let params: Stripe.Checkout.SessionCreateParams;
    if (req.kind === 'plan') {
      const which = req.interval === 'month' ? 'pro_month' : 'pro_year';
      const price = which === 'pro_month' ? this.settings.prices.proMonth : this.settings.prices.proYear;
      if (!price) throw new PriceUnavailableError(which);
      params = {
        ...base,
        mode: 'subscription',
        line_items: [{ price, quantity: Math.max(1, req.seats) }],
        subscription_data: { metadata: { workspace_id: workspaceId } },
        success_url: returnUrl(this.settings.publicUrl, 'checkout', 'success'),
        cancel_url: returnUrl(this.settings.publicUrl, 'checkout', 'canceled'),
      };
    } else if (req.kind === 'top_up') {
      const price = this.settings.prices.aiTopUp;
      if (!price) throw new PriceUnavailableError('ai_top_up');
      params = {
        ...base,
        metadata: { ...metadata, top_ups: String(req.topUps) },
        mode: 'payment',
        line_items: [{ price, quantity: req.topUps }],
        payment_intent_data: {
          metadata: { workspace_id: workspaceId, kind: 'top_up', top_ups: String(req.topUps) },
          setup_future_usage: 'off_session',
        },
        success_url: returnUrl(this.settings.publicUrl, 'top_up', 'success'),
        cancel_url: returnUrl(this.settings.publicUrl, 'top_up', 'canceled'),
      };
    } else {
      const topUp = await this.price('ai_top_up').catch(() => null);
      params = {
        ...base,
        mode: 'setup',
        currency: topUp?.currency ?? 'usd',
        setup_intent_data: { metadata: { workspace_id: workspaceId } },
        success_url: returnUrl(this.settings.publicUrl, 'payment_method', 'success'),
        cancel_url: returnUrl(this.settings.publicUrl, 'payment_method', 'canceled'),
      };
    }
    const s = await this.stripe.checkout.sessions.create(params);
    if (!s.url) throw new Error(`checkout session ${s.id} has no url`);
    return { id: s.id, url: s.url };
  }

  /** The customer portal (plan changes, cards, invoices), returning to the billing settings. */
  async portal(customerId: string): Promise<{ url: string }> {
    const p = await this.stripe.billingPortal.sessions.create({
      customer: customerId,
      return_url: `${this.settings.publicUrl.replace(/\/+$/, '')}/settings/billing`,
    });
    return { url: p.url };
  }

  /**
   * Seat sync: the subscription's item gets quantity = billed seats (owners, admins, agents), with
   * proration as the account's default. Nothing is sent when the quantity is already right.
   */
  async syncSeats(subscriptionId: string, seats: number): Promise<{ changed: boolean; quantity: number }> {
    const sub = await this.stripe.subscriptions.retrieve(subscriptionId);
    const item = sub.items.data[0];
    if (!item) throw new Error(`subscription ${subscriptionId} has no item`);
    const quantity = Math.max(1, seats);
    if (item.quantity === quantity) return { changed: false, quantity };
    await this.stripe.subscriptions.update(subscriptionId, { items: [{ id: item.id, quantity }] });
    return { changed: true, quantity };
  }

  /**
   * The auto-recharge payment (gaps.md): one off-session PaymentIntent, confirmed at once, on the
   * workspace's customer and saved card, amount = top_ups × the top-up price's unit_amount in its
   * currency. `idempotencyKey` names the recharge, so a retry never pays twice. Never throws.
   */
  async recharge(r: {
    workspaceId: string;
    customerId: string | null;
    paymentMethodId: string | null;
    topUps: number;
    idempotencyKey: string;
    /** Which recharge of the month (`<YYYY-MM>:<seq>`), in the payment's metadata for the webhook. */
    ref?: string;
  }): Promise<RechargeResult> {
    if (!r.customerId || !r.paymentMethodId) {
      return { ok: false, code: 'no_payment_method', paymentIntentId: null, message: 'no saved card' };
    }
    let price: BillingPrice | null;
    try {
      price = await this.price('ai_top_up');
    } catch (err) {
      return { ok: false, code: failureCode(err), paymentIntentId: null, message: (err as Error).message };
    }
    if (!price) return { ok: false, code: 'payment_failed', paymentIntentId: null, message: 'no top-up price' };
    try {
      const pi = await this.stripe.paymentIntents.create(
        {
          amount: price.unit_amount * r.topUps,
          currency: price.currency,
          customer: r.customerId,
          payment_method: r.paymentMethodId,
          off_session: true,
          confirm: true,
          description: `AI usage: ${r.topUps} top-up${r.topUps === 1 ? '' : 's'} (auto-recharge)`,
          metadata: {
            workspace_id: r.workspaceId,
            kind: 'recharge',
            top_ups: String(r.topUps),
            ...(r.ref ? { recharge: r.ref } : {}),
          },
        },
        { idempotencyKey: r.idempotencyKey },
      );
      if (pi.status === 'succeeded')
        return { ok: true, paymentIntentId: pi.id, amount: pi.amount, currency: pi.currency };
      const code = pi.status === 'requires_action' ? 'authentication_required' : 'payment_failed';
      return { ok: false, code, paymentIntentId: pi.id, message: `payment ${pi.status}` };
    } catch (err) {
      const raw = (err as { raw?: { payment_intent?: { id?: string } } }).raw;
      return {
        ok: false,
        code: failureCode(err),
        paymentIntentId: raw?.payment_intent?.id ?? null,
        message: (err as Error).message,
      };
    }
  }
}
