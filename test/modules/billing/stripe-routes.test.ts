// Billing end to end over HTTP: the service configured with STRIPE_* against the stand-in, the
// billing routes (src/modules/billing) with Stripe registered as their provider, and webhook
// events signed as Stripe signs them, POSTed to /v1/billing/webhook. What a user sees in
// GET /v1/billing after paying a top-up, subscribing, saving a card, and after an auto-recharge
// that succeeds or fails.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stripeBillingProvider } from '../../../src/modules/billing/stripe/provider.js';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { until } from '../../support/pictures.js';
import { type StripeStandIn, startStripeStandIn } from '../../support/stripe-standin/index.js';
import { addPrices } from './stripe-setup.js';

let svc: Service;
let stripe: StripeStandIn;
let ai: OpenAiStandIn;

beforeAll(async () => {
  stripe = await startStripeStandIn();
  ai = await startOpenAiStandIn({ keys: ['sk-test'] });
  svc = await startService({
    AI_PROVIDER: 'openai',
    AI_BASE_URL: ai.url,
    AI_API_KEY: 'sk-test',
    AI_MODEL: 'gpt-4.1',
    AI_FAST_MODEL: 'gpt-4.1-mini',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_API_BASE: stripe.url,
    STRIPE_PRICE_PRO_MONTH: 'price_pro_month',
    STRIPE_PRICE_PRO_YEAR: 'price_pro_year',
    STRIPE_PRICE_AI_TOP_UP: 'price_ai_top_up',
    PUBLIC_URL: 'https://desk.example.com',
  });
  stripe.webhookUrl = `${svc.url}/v1/billing/webhook`;
});
afterAll(async () => {
  await svc?.stop();
  await stripe?.stop();
  await ai?.stop();
});
beforeEach(() => {
  stripe.reset();
  addPrices(stripe);
});

const billing = async (t: Tenant) => {
  const r = await svc.api.get('/v1/billing', t.as);
  expect(r.status, r.text).toBe(200);
  return r.body;
};
const sessionOf = (url: string) => url.split('/').pop() as string;

/** Saves a card through the setup-mode checkout and its events. */
async function saveCard(t: Tenant) {
  const r = await svc.api.post('/v1/billing/payment-method', {}, t.as);
  expect(r.status, r.text).toBe(200);
  for (const e of stripe.completeCheckout(sessionOf(r.body.url))) expect((await stripe.send(e)).status).toBe(200);
}

/** Subscribes through a checkout and its events; the subscription's id at Stripe. */
async function subscribe(t: Tenant): Promise<string> {
  const r = await svc.api.post('/v1/billing/checkout', { interval: 'month' }, t.as);
  expect(r.status, r.text).toBe(200);
  const session = sessionOf(r.body.url);
  for (const e of stripe.completeCheckout(session)) expect((await stripe.send(e)).status).toBe(200);
  return stripe.sessions.get(session)?.subscription as string;
}

/** The subscription as the customer portal (or Stripe's dunning) changes it, delivered signed. */
async function change(subId: string, changes: Record<string, unknown>, opts?: { deleted?: boolean }) {
  const out = await stripe.send(stripe.updateSubscription(subId, changes, opts));
  expect(out.status, out.body).toBe(200);
}

let boxes = 0;
const mailbox = (t: Tenant) =>
  svc.api.post('/v1/mailboxes', { name: `Box ${++boxes}`, email: `box${boxes}-${Date.now()}@acme.test` }, t.as);

describe('a top-up', () => {
  it('is credited once when Stripe says it is paid, whatever the order, replays included', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/billing/top-up/checkout', { top_ups: 2 }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.url).toMatch(`${stripe.url}/checkout/`);
    const before = await billing(t);
    expect(before.ai.purchased_usd).toBe(0);
    const [succeeded, completed] = stripe.completeCheckout(sessionOf(r.body.url));
    for (const e of [completed!, succeeded!, completed!, succeeded!]) {
      const out = await stripe.send(e);
      expect(out.status, out.body).toBe(200);
    }
    const after = await billing(t);
    expect(after.ai.purchased_usd).toBe(20);
    expect(after.ai.remaining_usd).toBeCloseTo(before.ai.remaining_usd + 20, 6);
  });

  it('answers each verified event with its receipt; a replay answers 200 duplicate and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/billing/top-up/checkout', { top_ups: 1 }, t.as);
    const [succeeded, completed] = stripe.completeCheckout(sessionOf(r.body.url));
    const first = await stripe.send(completed!);
    expect(first.status, first.body).toBe(200);
    expect(JSON.parse(first.body)).toEqual({
      received: true,
      id: completed!.id,
      type: 'checkout.session.completed',
      result: 'processed',
    });
    const before = await billing(t);
    expect(before.ai.purchased_usd).toBe(10);
    const since = await latestSeqOf(svc, t);
    // Stripe delivers it again (a lost answer, a retry), twice at once.
    const again = await Promise.all([stripe.send(completed!), stripe.send(completed!)]);
    for (const a of again) {
      expect(a.status, a.body).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({ received: true, id: completed!.id, result: 'duplicate' });
    }
    expect(await billing(t)).toEqual(before);
    expect((await eventsAfterOf(svc, t, since)).filter((e) => e.type === 'billing.updated')).toEqual([]);
    // A type the service does not act on: 200, ignored.
    const other = { ...succeeded!, id: `${succeeded!.id}_invoice`, type: 'invoice.paid' };
    const ignored = await stripe.send(other);
    expect(ignored.status, ignored.body).toBe(200);
    expect(JSON.parse(ignored.body)).toMatchObject({ type: 'invoice.paid', result: 'ignored' });
  });

  it('answers 400 to a badly signed, unsigned or old event over HTTP, and credits nothing', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/billing/top-up/checkout', { top_ups: 1 }, t.as);
    const [succeeded] = stripe.completeCheckout(sessionOf(r.body.url));
    const old = Math.floor(Date.now() / 1000) - 600;
    for (const bad of [{ secret: 'whsec_wrong' }, { signature: null }, { timestamp: old }]) {
      const out = await stripe.send(succeeded!, bad);
      expect(out.status).toBe(400);
      expect(isErrorBody(JSON.parse(out.body), 400, 'bad_request'), out.body).toBe(true);
    }
    expect((await billing(t)).ai.purchased_usd).toBe(0);
  });
});

describe('the plan', () => {
  it('a subscription checkout bills the seats and, once Stripe confirms, the workspace is on pro', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/billing/checkout', { interval: 'year' }, t.as);
    expect(r.status, r.text).toBe(200);
    const form = stripe.calls('/v1/checkout/sessions')[0]?.form;
    expect(form).toMatchObject({
      mode: 'subscription',
      line_items: [{ price: 'price_pro_year', quantity: '1' }],
      success_url: 'https://desk.example.com/settings/billing?checkout=success',
    });
    expect((await billing(t)).plan).toBe('free');
    for (const e of stripe.completeCheckout(sessionOf(r.body.url))) expect((await stripe.send(e)).status).toBe(200);
    const b = await billing(t);
    expect(b).toMatchObject({ plan: 'pro', status: 'active', interval: 'year', seats: 1, cancel_at_period_end: false });
    expect(Date.parse(b.current_period_end)).toBeGreaterThan(Date.now() + 300 * 86_400_000);
    expect(b.prices).toEqual({
      pro_month: { id: 'price_pro_month', unit_amount: 1500, currency: 'usd', interval: 'month' },
      pro_year: { id: 'price_pro_year', unit_amount: 15000, currency: 'usd', interval: 'year' },
      ai_top_up: { id: 'price_ai_top_up', unit_amount: 1000, currency: 'usd', interval: null, usd: 10 },
    });
    // Canceled in the portal: back to free.
    const subId = [...stripe.subscriptions.keys()][0] as string;
    expect((await stripe.send(stripe.updateSubscription(subId, {}, { deleted: true }))).status).toBe(200);
    expect(await billing(t)).toMatchObject({ plan: 'free', status: 'canceled', interval: null });
  });
});

describe('the plan limits follow the subscription', () => {
  it('past_due keeps pro and its limits while Stripe retries; deleted is limited again, nothing removed', async () => {
    const t = await newTenant(svc.api);
    const subId = await subscribe(t);
    for (const _ of [1, 2]) expect((await mailbox(t)).status).toBe(201);
    // The renewal's payment failed: Stripe retries (past_due).
    await change(subId, { status: 'past_due' });
    expect(await billing(t)).toMatchObject({
      plan: 'pro',
      status: 'past_due',
      limits: { max_mailboxes: 0, max_members: 0 },
    });
    expect((await mailbox(t)).status).toBe(201);
    for (const role of ['admin', 'agent', 'agent'] as const) await addMember(svc, t, role);
    const v = await addMember(svc, t, 'viewer');
    const promote = await svc.api.patch(`/v1/members/${v.userId}`, { role: 'agent' }, t.as);
    expect(promote.status, promote.text).toBe(200);

    // The retries ran out and Stripe canceled it (deleted): free, its limits again.
    await change(subId, {}, { deleted: true });
    const b = await billing(t);
    expect(b).toMatchObject({
      plan: 'free',
      status: 'canceled',
      interval: null,
      seats: 0,
      limits: { max_mailboxes: 1, max_members: 3 },
      usage: { mailboxes: 3, members: 5 },
    });
    const more = await mailbox(t);
    expect(isErrorBody(more.body, 402, 'plan_limit'), more.text).toBe(true);
    const v2 = await addMember(svc, t, 'viewer');
    const seat = await svc.api.patch(`/v1/members/${v2.userId}`, { role: 'agent' }, t.as);
    expect(isErrorBody(seat.body, 402, 'plan_limit'), seat.text).toBe(true);
    // Nothing existing was removed.
    expect((await svc.api.get('/v1/mailboxes', t.as)).body.data).toHaveLength(3);
    expect((await billing(t)).usage).toEqual({ mailboxes: 3, members: 5 });
  });

  it('unpaid (retries ran out, the subscription kept) gets the free limits until it is paid again', async () => {
    const t = await newTenant(svc.api);
    const subId = await subscribe(t);
    await change(subId, { status: 'unpaid' });
    expect(await billing(t)).toMatchObject({
      plan: 'free',
      status: 'unpaid',
      interval: 'month',
      seats: 1,
      limits: { max_mailboxes: 1, max_members: 3 },
    });
    expect((await mailbox(t)).status).toBe(201);
    expect(isErrorBody((await mailbox(t)).body, 402, 'plan_limit')).toBe(true);
    // Still one subscription: paying it is the portal's, not a second checkout.
    const again = await svc.api.post('/v1/billing/checkout', { interval: 'month' }, t.as);
    expect(isErrorBody(again.body, 409, 'conflict'), again.text).toBe(true);
    // The open invoice paid in the portal: pro again.
    await change(subId, { status: 'active' });
    expect(await billing(t)).toMatchObject({ plan: 'pro', status: 'active', limits: { max_mailboxes: 0 } });
    expect((await mailbox(t)).status).toBe(201);
  });
});

describe('seats', () => {
  it('follow the members: a viewer made agent raises the subscription quantity at Stripe', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/billing/checkout', { interval: 'month' }, t.as);
    for (const e of stripe.completeCheckout(sessionOf(r.body.url))) expect((await stripe.send(e)).status).toBe(200);
    const subId = [...stripe.subscriptions.keys()][0] as string;
    const viewer = await addMember(svc, t, 'viewer');
    const p = await svc.api.patch(`/v1/members/${viewer.userId}`, { role: 'agent' }, t.as);
    expect(p.status, p.text).toBe(200);
    await until(
      async () => stripe.subscriptions.get(subId)?.items.data[0].quantity,
      (q) => q === 2,
      20_000,
    );
    expect(stripe.subscriptions.get(subId)?.items.data[0].quantity).toBe(2);
    // Stripe's subscription.updated brings the billed seats back to the plan.
    const updated = stripe.events.filter((e) => e.type === 'customer.subscription.updated').at(-1)!;
    expect((await stripe.send(updated)).status).toBe(200);
    expect((await billing(t)).seats).toBe(2);
  });
});

describe('auto-recharge (a job after the charged call)', () => {
  it('after a saved card, a balance under the threshold buys top_ups once', async () => {
    const t = await newTenant(svc.api);
    await saveCard(t);
    const on = await svc.api.patch('/v1/billing/auto-recharge', { enabled: true, threshold_usd: 2, top_ups: 1 }, t.as);
    expect(on.status, on.text).toBe(200);
    // The free allowance (0.50) is under the threshold: the next charged call's hook recharges.
    await Promise.all([1, 2, 3].map(() => stripeBillingProvider.afterCharge?.(svc.rt.deps, t.workspaceId)));
    const b = await until(
      () => billing(t),
      (x) => x.auto_recharge.recharges_this_month === 1,
      20_000,
    );
    expect(stripe.calls('/v1/payment_intents')).toHaveLength(1);
    expect(b.ai.purchased_usd).toBe(10);
    expect(b.auto_recharge).toMatchObject({
      enabled: true,
      recharges_this_month: 1,
      last_recharge: { top_ups: 1, usd: 10, amount: 1000, currency: 'usd' },
      failure: null,
    });
  });

  it('is set off by a charged AI call that leaves the balance under the threshold', async () => {
    const t = await newTenant(svc.api);
    await saveCard(t);
    await svc.api.patch('/v1/billing/auto-recharge', { enabled: true, threshold_usd: 2, top_ups: 2 }, t.as);
    ai.answer({ text: '<p>Hello Jane, it is done.</p>', usage: { input_tokens: 400, output_tokens: 50 } });
    const r = await svc.api.post('/v1/ai/rewrite', { html: '<p>hello jane its done</p>', mode: 'fix_grammar' }, t.as);
    expect(r.status, r.text).toBe(200);
    const b = await until(
      () => billing(t),
      (x) => x.auto_recharge.recharges_this_month === 1,
      20_000,
    );
    expect(b.ai.purchased_usd).toBe(20);
    expect(b.ai.used_usd).toBeGreaterThan(0);
    expect(stripe.calls('/v1/payment_intents')[0]?.form).toMatchObject({ amount: '2000', off_session: 'true' });
  });

  it('a declined card turns it off, records the failure and notifies the owner', async () => {
    const t = await newTenant(svc.api);
    await saveCard(t);
    await svc.api.patch('/v1/billing/auto-recharge', { enabled: true }, t.as);
    stripe.paymentOutcomes.push('card_declined');
    await stripeBillingProvider.afterCharge?.(svc.rt.deps, t.workspaceId);
    const b = await until(
      () => billing(t),
      (x) => x.auto_recharge.failure !== null,
      20_000,
    );
    expect(b.ai.purchased_usd).toBe(0);
    expect(b.auto_recharge).toMatchObject({ enabled: false, failure: { code: 'card_declined' } });
    const n = await svc.api.get('/v1/notifications', t.as);
    expect(n.status, n.text).toBe(200);
    const notice = n.body.data.find((x: any) => x.type === 'auto_recharge_failed');
    expect(notice?.data).toEqual({ reason: 'card_declined' });
  });
});
