// The Stripe client (src/modules/billing/stripe/client.ts) against the stand-in: the exact paths
// and form fields the official SDK sends for each checkout mode, the portal, seat sync, the
// prices read (and kept), and the off-session recharge with each failure code of gaps.md.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import {
  apiAddress,
  StripeClient,
  type StripeSettings,
  stripeSettingsFrom,
} from '../../../src/modules/billing/stripe/client.js';
import { type StripeStandIn, startStripeStandIn } from '../../support/stripe-standin/index.js';

let stripe: StripeStandIn;
let client: StripeClient;
const PUBLIC = 'https://desk.example.com';

const settings = (s: StripeStandIn, more: Partial<StripeSettings> = {}): StripeSettings => ({
  secretKey: s.secretKey,
  apiBase: s.url,
  publicUrl: PUBLIC,
  prices: { proMonth: 'price_pro_month', proYear: 'price_pro_year', aiTopUp: 'price_ai_top_up' },
  maxNetworkRetries: 0,
  timeoutMs: 2000,
  ...more,
});

function addPrices(s: StripeStandIn) {
  s.addPrice({ id: 'price_pro_month', unit_amount: 1500, currency: 'usd', interval: 'month' });
  s.addPrice({ id: 'price_pro_year', unit_amount: 15000, currency: 'usd', interval: 'year' });
  s.addPrice({ id: 'price_ai_top_up', unit_amount: 1000, currency: 'usd', interval: null });
}

beforeAll(async () => {
  stripe = await startStripeStandIn();
});
afterAll(async () => {
  await stripe.stop();
});
beforeEach(() => {
  stripe.reset();
  addPrices(stripe);
  client = new StripeClient(settings(stripe));
});

async function customer(ws = 'ws-1') {
  return client.ensureCustomer({ workspaceId: ws, customerId: null, name: 'Acme', email: 'o@example.com' });
}

describe('checkout sessions', () => {
  it('plan: mode subscription, the interval price × billed seats, the return URLs, the workspace in metadata', async () => {
    const cus = await customer();
    const out = await client.createCheckout('ws-1', cus, { kind: 'plan', interval: 'year', seats: 3 });
    expect(out.url).toBe(`${stripe.url}/checkout/${out.id}`);
    const [req] = stripe.calls('/v1/checkout/sessions');
    expect(req?.headers.authorization).toBe(`Bearer ${stripe.secretKey}`);
    expect(req?.form).toMatchObject({
      mode: 'subscription',
      customer: cus,
      line_items: [{ price: 'price_pro_year', quantity: '3' }],
      success_url: `${PUBLIC}/settings/billing?checkout=success`,
      cancel_url: `${PUBLIC}/settings/billing?checkout=canceled`,
      metadata: { workspace_id: 'ws-1', kind: 'plan' },
      subscription_data: { metadata: { workspace_id: 'ws-1' } },
    });
    expect(stripe.sessions.get(out.id)?.amount_total).toBe(45000);
  });

  it('top-up: mode payment, the top-up price × top_ups; card: mode setup in the top-up currency', async () => {
    const cus = await customer();
    await client.createCheckout('ws-1', cus, { kind: 'top_up', topUps: 4 });
    await client.createCheckout('ws-1', cus, { kind: 'card' });
    const [topUp, card] = stripe.calls('/v1/checkout/sessions');
    expect(topUp?.form).toMatchObject({
      mode: 'payment',
      line_items: [{ price: 'price_ai_top_up', quantity: '4' }],
      success_url: `${PUBLIC}/settings/billing?top_up=success`,
      cancel_url: `${PUBLIC}/settings/billing?top_up=canceled`,
      payment_intent_data: { metadata: { workspace_id: 'ws-1', kind: 'top_up', top_ups: '4' } },
    });
    expect(card?.form).toMatchObject({
      mode: 'setup',
      currency: 'usd',
      success_url: `${PUBLIC}/settings/billing?payment_method=success`,
      cancel_url: `${PUBLIC}/settings/billing?payment_method=canceled`,
    });
    expect(card?.form.line_items).toBeUndefined();
  });

  it('refuses a checkout whose price is not configured, without calling Stripe', async () => {
    const c = new StripeClient(settings(stripe, { prices: { proMonth: null, proYear: null, aiTopUp: null } }));
    await expect(c.createCheckout('ws-1', 'cus_x', { kind: 'top_up', topUps: 1 })).rejects.toThrow(/ai_top_up/);
    await expect(c.createCheckout('ws-1', 'cus_x', { kind: 'plan', interval: 'month', seats: 1 })).rejects.toThrow(
      /pro_month/,
    );
    expect(stripe.requests).toHaveLength(0);
  });

  it('makes one customer per workspace, even when asked twice (idempotency key)', async () => {
    const a = await customer('ws-2');
    const b = await customer('ws-2');
    expect(a).toBe(b);
    expect(stripe.customers.size).toBe(1);
    expect(stripe.calls('/v1/customers')[0]?.form.metadata).toEqual({ workspace_id: 'ws-2' });
  });
});

describe('portal, seats, prices', () => {
  it('opens the customer portal returning to the billing settings', async () => {
    const cus = await customer();
    const p = await client.portal(cus);
    expect(p.url).toMatch(`${stripe.url}/portal/`);
    expect(stripe.calls('/v1/billing_portal/sessions')[0]?.form).toEqual({
      customer: cus,
      return_url: `${PUBLIC}/settings/billing`,
    });
  });

  it('syncs seats to the subscription item quantity, and sends nothing when it is right', async () => {
    const cus = await customer();
    const s = await client.createCheckout('ws-1', cus, { kind: 'plan', interval: 'month', seats: 2 });
    stripe.completeCheckout(s.id);
    const subId = stripe.sessions.get(s.id)?.subscription as string;
    const itemId = stripe.subscriptions.get(subId)?.items.data[0].id;
    expect(await client.syncSeats(subId, 5)).toEqual({ changed: true, quantity: 5 });
    expect(stripe.calls(`/v1/subscriptions/${subId}`)[0]?.form).toEqual({ items: [{ id: itemId, quantity: '5' }] });
    expect(stripe.subscriptions.get(subId)?.items.data[0].quantity).toBe(5);
    expect(stripe.events.at(-1)?.type).toBe('customer.subscription.updated');
    expect(await client.syncSeats(subId, 5)).toEqual({ changed: false, quantity: 5 });
    expect(stripe.calls(`/v1/subscriptions/${subId}`)).toHaveLength(1);
  });

  it('reads the prices as Billing.prices shows them, once while cached; an unset one is null', async () => {
    const c = new StripeClient(
      settings(stripe, { prices: { proMonth: 'price_pro_month', proYear: null, aiTopUp: 'price_ai_top_up' } }),
    );
    const p = await c.prices();
    expect(p).toEqual({
      pro_month: { id: 'price_pro_month', unit_amount: 1500, currency: 'usd', interval: 'month' },
      pro_year: null,
      ai_top_up: { id: 'price_ai_top_up', unit_amount: 1000, currency: 'usd', interval: null, usd: 10 },
    });
    await c.prices();
    expect(stripe.requests.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual([
      '/v1/prices/price_pro_month',
      '/v1/prices/price_ai_top_up',
    ]);
  });
});

describe('the recharge payment', () => {
  async function withCard() {
    const cus = await customer();
    return { cus, pm: stripe.attachCard(cus).id as string };
  }
  const charge = (cus: string | null, pm: string | null, key = 'recharge-ws-1-2026-11-1') =>
    client.recharge({ workspaceId: 'ws-1', customerId: cus, paymentMethodId: pm, topUps: 3, idempotencyKey: key });

  it('is one off-session confirmed PaymentIntent of top_ups × the top-up price', async () => {
    const { cus, pm } = await withCard();
    const r = await charge(cus, pm);
    expect(r).toMatchObject({ ok: true, amount: 3000, currency: 'usd' });
    const [req] = stripe.calls('/v1/payment_intents');
    expect(req?.idempotencyKey).toBe('recharge-ws-1-2026-11-1');
    expect(req?.form).toMatchObject({
      amount: '3000',
      currency: 'usd',
      customer: cus,
      payment_method: pm,
      off_session: 'true',
      confirm: 'true',
      metadata: { workspace_id: 'ws-1', kind: 'recharge', top_ups: '3' },
    });
    // The same recharge asked again is the same payment (Stripe replays the key).
    const again = await charge(cus, pm);
    expect(again).toEqual(r);
    expect(stripe.paymentIntents.size).toBe(1);
  });

  it('maps a declined card, a card needing authentication, and another failure', async () => {
    const { cus, pm } = await withCard();
    stripe.paymentOutcomes.push('card_declined', 'authentication_required', 'processing_error');
    expect(await charge(cus, pm, 'k1')).toMatchObject({ ok: false, code: 'card_declined' });
    expect(await charge(cus, pm, 'k2')).toMatchObject({ ok: false, code: 'authentication_required' });
    const third = await charge(cus, pm, 'k3');
    expect(third).toMatchObject({ ok: false, code: 'payment_failed' });
    expect(third.paymentIntentId).toMatch(/^pi_/);
  });

  it('is no_payment_method without a saved card, and calls nothing', async () => {
    expect(await charge(null, null)).toMatchObject({ ok: false, code: 'no_payment_method' });
    expect(stripe.requests).toHaveLength(0);
  });

  it('is unavailable when Stripe cannot be reached', async () => {
    const { cus, pm } = await withCard();
    await client.prices();
    stripe.unreachable = true;
    expect(await charge(cus, pm)).toMatchObject({ ok: false, code: 'unavailable' });
    const nowhere = new StripeClient(settings(stripe, { apiBase: 'http://127.0.0.1:9' }));
    expect(
      await nowhere.recharge({
        workspaceId: 'w',
        customerId: cus,
        paymentMethodId: pm,
        topUps: 1,
        idempotencyKey: 'x',
      }),
    ).toMatchObject({ ok: false, code: 'unavailable' });
  });
});

describe('settings', () => {
  it('come from STRIPE_* and PUBLIC_URL; none without STRIPE_SECRET_KEY', () => {
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'stripe-cfg-')), PUBLIC_URL: 'https://help.example.com/' };
    expect(stripeSettingsFrom(loadConfig(env))).toBeNull();
    const c = loadConfig({
      ...env,
      STRIPE_SECRET_KEY: 'sk_test_1',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
      STRIPE_PRICE_PRO_MONTH: 'price_m',
      STRIPE_PRICE_AI_TOP_UP: 'price_t',
    });
    expect(stripeSettingsFrom(c)).toEqual({
      secretKey: 'sk_test_1',
      apiBase: 'http://127.0.0.1:12111',
      publicUrl: 'https://help.example.com',
      prices: { proMonth: 'price_m', proYear: null, aiTopUp: 'price_t' },
    });
    expect(apiAddress('http://127.0.0.1:12111')).toEqual({ host: '127.0.0.1', port: 12111, protocol: 'http' });
    expect(apiAddress('https://api.stripe.com')).toEqual({ host: 'api.stripe.com', port: 443, protocol: 'https' });
    expect(apiAddress(null)).toEqual({});
  });
});
