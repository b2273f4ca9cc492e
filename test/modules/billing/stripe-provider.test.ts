// The Stripe provider (src/modules/billing/stripe/provider.ts), what the billing routes call:
// checkouts make the workspace's customer once and bill its seats, a missing top-up price is
// 422 top_up_unavailable, Stripe unreachable is 503 unavailable, the webhook's answers (400 with
// the error body, 200 with the receipt), seat sync after members change, afterCharge.
import { describe, expect, it } from 'vitest';
import { createStripeProvider } from '../../../src/modules/billing/stripe/provider.js';
import { newTenant } from '../../support/helpers.js';
import { PUBLIC_URL, stripeSuite } from './stripe-setup.js';

const suite = stripeSuite();

function provider(
  prices = { proMonth: 'price_pro_month', proYear: 'price_pro_year', aiTopUp: 'price_ai_top_up' } as {
    proMonth: string | null;
    proYear: string | null;
    aiTopUp: string | null;
  },
) {
  const s = suite.stripe;
  return createStripeProvider(
    { secretKey: s.secretKey, apiBase: s.url, publicUrl: PUBLIC_URL, prices, maxNetworkRetries: 0, timeoutMs: 3000 },
    suite.core,
    s.webhookSecret,
  );
}

async function workspace() {
  const t = await newTenant(suite.svc.api);
  return { workspaceId: t.workspaceId };
}

describe('checkouts', () => {
  it('make the customer once, then bill the plan per seat, the top-ups and the card on it', async () => {
    const p = provider();
    const ctx = await workspace();
    suite.core.of(ctx.workspaceId).account.billedSeats = 4;
    const plan = await p.checkout(suite.svc.rt.deps, ctx, { interval: 'month' });
    const topUp = await p.topUpCheckout(suite.svc.rt.deps, ctx, { top_ups: 2 });
    const card = await p.setupCheckout(suite.svc.rt.deps, ctx);
    for (const c of [plan, topUp, card]) expect(c.url).toMatch(`${suite.stripe.url}/checkout/cs_test_`);
    expect(suite.stripe.customers.size).toBe(1);
    const customer = suite.core.of(ctx.workspaceId).account.customerId;
    expect(suite.stripe.calls('/v1/customers')[0]?.form).toEqual({
      name: 'Acme',
      email: 'owner@example.com',
      metadata: { workspace_id: ctx.workspaceId },
    });
    const sessions = suite.stripe.calls('/v1/checkout/sessions').map((r) => r.form);
    expect(sessions.map((f) => [f.mode, f.customer, f.line_items?.[0]?.quantity])).toEqual([
      ['subscription', customer, '4'],
      ['payment', customer, '2'],
      ['setup', customer, undefined],
    ]);
  });

  it('answers 422 top_up_unavailable without the top-up price, and 503 unavailable when Stripe is down', async () => {
    const ctx = await workspace();
    const none = provider({ proMonth: 'price_pro_month', proYear: null, aiTopUp: null });
    await expect(none.topUpCheckout(suite.svc.rt.deps, ctx, { top_ups: 1 })).rejects.toMatchObject({
      status: 422,
      code: 'top_up_unavailable',
    });
    suite.stripe.unreachable = true;
    await expect(provider().checkout(suite.svc.rt.deps, ctx, { interval: 'year' })).rejects.toMatchObject({
      status: 503,
      code: 'unavailable',
    });
    await expect(provider().portal(suite.svc.rt.deps, ctx)).rejects.toMatchObject({ status: 503 });
  });

  it('opens the portal on the customer', async () => {
    const ctx = await workspace();
    const out = await provider().portal(suite.svc.rt.deps, ctx);
    expect(out.url).toMatch(`${suite.stripe.url}/portal/`);
    expect(suite.stripe.calls('/v1/billing_portal/sessions')[0]?.form.customer).toBe(
      suite.core.of(ctx.workspaceId).account.customerId,
    );
  });
});

describe('the webhook, seats and recharges through the provider', () => {
  it('throws 400 bad_request to a bad or missing signature, and answers the receipt otherwise', async () => {
    const p = provider();
    const ctx = await workspace();
    const { url } = await p.topUpCheckout(suite.svc.rt.deps, ctx, { top_ups: 1 });
    const [succeeded] = suite.stripe.completeCheckout(url.split('/').pop() as string);
    const payload = JSON.stringify(succeeded);
    for (const sig of ['t=1,v1=abc', undefined]) {
      const bad = await p.handleWebhook(suite.svc.rt.deps, Buffer.from(payload), sig).catch((e: unknown) => e);
      expect(bad).toMatchObject({ status: 400, code: 'bad_request' });
    }
    const ok = await p.handleWebhook(suite.svc.rt.deps, Buffer.from(payload), suite.stripe.sign(payload));
    expect(ok).toEqual({ received: true, id: succeeded!.id, type: 'payment_intent.succeeded', result: 'processed' });
    expect(suite.core.of(ctx.workspaceId).credits).toHaveLength(1);
  });

  it('syncs the seats to the subscription when members change, and nothing without one', async () => {
    const p = provider();
    const ctx = await workspace();
    await p.seatsChanged(suite.svc.rt.deps, ctx.workspaceId);
    expect(suite.stripe.requests).toEqual([]);
    const { url } = await p.checkout(suite.svc.rt.deps, ctx, { interval: 'month' });
    for (const e of suite.stripe.completeCheckout(url.split('/').pop() as string)) {
      const payload = JSON.stringify(e);
      await p.handleWebhook(suite.svc.rt.deps, payload, suite.stripe.sign(payload));
    }
    const account = suite.core.of(ctx.workspaceId).account;
    expect(account.subscriptionId).toMatch(/^sub_/);
    account.billedSeats = 3;
    await p.seatsChanged(suite.svc.rt.deps, ctx.workspaceId);
    expect(suite.stripe.subscriptions.get(account.subscriptionId as string)?.items.data[0].quantity).toBe(3);
  });

  it('afterCharge recharges through the provider', async () => {
    const p = provider();
    const ctx = await workspace();
    const l = suite.core.of(ctx.workspaceId);
    const { url } = await p.setupCheckout(suite.svc.rt.deps, ctx);
    for (const e of suite.stripe.completeCheckout(url.split('/').pop() as string)) {
      const payload = JSON.stringify(e);
      await p.handleWebhook(suite.svc.rt.deps, payload, suite.stripe.sign(payload));
    }
    expect(l.settings.paymentMethodId).toMatch(/^pm_/);
    l.settings.enabled = true;
    l.balanceUsd = 0.5;
    expect(await p.afterCharge(suite.svc.rt.deps, ctx.workspaceId)).toMatchObject({ kind: 'succeeded' });
    expect(l.balanceUsd).toBe(10.5);
  });
});
