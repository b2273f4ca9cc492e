// The Stripe webhook (src/modules/billing/stripe/webhook.ts) with events the stand-in makes and
// signs the way Stripe does: signatures (bad, missing, too old: 400, nothing changes), an event id
// processed once (a replay answers 2xx and changes nothing), a paid top-up credited once whichever
// of checkout.session.completed and payment_intent.succeeded arrives first, the subscription's
// state (plan, seats, interval, period end, cancel at period end, deleted: free), the saved card.
import { describe, expect, it } from 'vitest';
import { stripeSuite } from './stripe-setup.js';

const suite = stripeSuite();

async function topUpCheckout(workspaceId: string, customer: string, topUps: number) {
  const s = await suite.client.createCheckout(workspaceId, customer, { kind: 'top_up', topUps });
  const events = suite.stripe.completeCheckout(s.id);
  const byType = (t: string) => events.find((e) => e.type === t)!;
  return { session: s, completed: byType('checkout.session.completed'), succeeded: byType('payment_intent.succeeded') };
}

describe('signatures', () => {
  it('answers 400 to a missing, wrongly signed or too old event, and changes nothing', async () => {
    const w = await suite.workspace();
    const { completed } = await topUpCheckout(w.id, w.customer, 2);
    const old = Math.floor(Date.now() / 1000) - 301;
    for (const bad of [
      { signature: null },
      { secret: 'whsec_not_the_secret' },
      { timestamp: old },
      { signature: 't=1,v1=00' },
    ]) {
      const r = await suite.deliver(completed, bad);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ status: 400, code: 'bad_request' });
    }
    expect(suite.core.of(w.id).credits).toEqual([]);
    expect(await suite.rows('stripe_events', w.id)).toEqual([]);
    // The same event, well signed, is then processed.
    expect((await suite.deliver(completed)).body).toMatchObject({ received: true, result: 'processed' });
    expect(suite.core.of(w.id).credits).toHaveLength(1);
  });

  it('accepts a signature 4 minutes old', async () => {
    const w = await suite.workspace();
    const { completed } = await topUpCheckout(w.id, w.customer, 1);
    const r = await suite.deliver(completed, { timestamp: Math.floor(Date.now() / 1000) - 240 });
    expect(r.status).toBe(200);
  });
});

describe('a paid top-up', () => {
  it('is credited once when checkout.session.completed comes first, then payment_intent.succeeded', async () => {
    const w = await suite.workspace();
    const { completed, succeeded } = await topUpCheckout(w.id, w.customer, 3);
    expect((await suite.deliver(completed)).status).toBe(200);
    expect((await suite.deliver(succeeded)).body).toMatchObject({ received: true, result: 'processed' });
    const l = suite.core.of(w.id);
    expect(l.credits).toEqual([
      {
        topUps: 3,
        usd: 30,
        paymentIntentId: succeeded.data.object.id,
        source: 'checkout',
        amount: 3000,
        currency: 'usd',
      },
    ]);
    expect(await suite.rows('stripe_payments', w.id)).toHaveLength(1);
  });

  it('is credited once when payment_intent.succeeded comes first, and when both are replayed', async () => {
    const w = await suite.workspace();
    const { completed, succeeded } = await topUpCheckout(w.id, w.customer, 2);
    await suite.deliver(succeeded);
    await suite.deliver(completed);
    expect((await suite.deliver(succeeded)).body).toMatchObject({ received: true, result: 'duplicate' });
    expect((await suite.deliver(completed)).body).toMatchObject({ received: true, result: 'duplicate' });
    expect(suite.core.of(w.id).credits.map((c) => c.usd)).toEqual([20]);
    expect(await suite.rows('stripe_events', w.id)).toHaveLength(2);
  });

  it('is credited once when the same events arrive together, many times', async () => {
    const w = await suite.workspace();
    const { completed, succeeded } = await topUpCheckout(w.id, w.customer, 1);
    const all = await Promise.all(
      [completed, succeeded, completed, succeeded, completed, succeeded].map((e) => suite.deliver(e)),
    );
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(all.filter((r) => r.body.result === 'processed')).toHaveLength(2);
    expect(suite.core.of(w.id).credits).toHaveLength(1);
  });

  it('credits nothing for a checkout that is not paid yet', async () => {
    const w = await suite.workspace();
    const { completed } = await topUpCheckout(w.id, w.customer, 1);
    completed.data.object.payment_status = 'unpaid';
    completed.id = `${completed.id}x`;
    expect((await suite.deliver(completed)).status).toBe(200);
    expect(suite.core.of(w.id).credits).toEqual([]);
  });
});

describe('the subscription', () => {
  async function subscribe(seats: number) {
    const w = await suite.workspace();
    const s = await suite.client.createCheckout(w.id, w.customer, { kind: 'plan', interval: 'month', seats });
    const events = suite.stripe.completeCheckout(s.id);
    const subId = suite.stripe.sessions.get(s.id)?.subscription as string;
    return { w, events, subId };
  }

  it('checkout.session.completed and customer.subscription.created set plan pro, seats, interval and period', async () => {
    const { w, events, subId } = await subscribe(3);
    for (const e of events) expect((await suite.deliver(e)).status).toBe(200);
    const applied = suite.core.of(w.id).subscriptions;
    expect(applied).toHaveLength(2);
    const end = suite.stripe.subscriptions.get(subId)?.items.data[0].current_period_end;
    for (const a of applied) {
      expect(a).toEqual({
        plan: 'pro',
        status: 'active',
        interval: 'month',
        seats: 3,
        currentPeriodEnd: new Date(end * 1000),
        cancelAtPeriodEnd: false,
        customerId: w.customer,
        subscriptionId: subId,
      });
    }
  });

  it('updated: seats and cancel at period end, read as they are now even when an older event comes last', async () => {
    const { w, subId } = await subscribe(2);
    await suite.client.syncSeats(subId, 4);
    const older = suite.stripe.events.at(-1)!;
    const newer = suite.stripe.updateSubscription(subId, { cancel_at_period_end: true });
    await suite.deliver(newer);
    await suite.deliver(older);
    const last = suite.core.of(w.id).subscriptions.at(-1);
    expect(last).toMatchObject({ plan: 'pro', seats: 4, cancelAtPeriodEnd: true });
  });

  it('past_due stays pro while Stripe retries; unpaid, incomplete and paused are free with the subscription kept', async () => {
    const { w, subId } = await subscribe(2);
    for (const [status, plan] of [
      ['past_due', 'pro'],
      ['unpaid', 'free'],
      ['incomplete', 'free'],
      ['paused', 'free'],
      ['active', 'pro'],
    ] as const) {
      expect((await suite.deliver(suite.stripe.updateSubscription(subId, { status }))).status).toBe(200);
      expect(suite.core.of(w.id).subscriptions.at(-1), status).toMatchObject({
        plan,
        status,
        seats: 2,
        interval: 'month',
        subscriptionId: subId,
      });
    }
  });

  it('deleted returns the workspace to free', async () => {
    const { w, subId } = await subscribe(1);
    const deleted = suite.stripe.updateSubscription(subId, {}, { deleted: true });
    expect((await suite.deliver(deleted)).status).toBe(200);
    expect(suite.core.of(w.id).subscriptions.at(-1)).toMatchObject({
      plan: 'free',
      status: 'canceled',
      subscriptionId: null,
    });
  });
});

describe('other events', () => {
  it('a setup-mode checkout saves the card', async () => {
    const w = await suite.workspace();
    const s = await suite.client.createCheckout(w.id, w.customer, { kind: 'card' });
    const events = suite.stripe.completeCheckout(s.id);
    for (const e of events) await suite.deliver(e);
    const pm = [...suite.stripe.paymentMethods.values()].find((p) => p.customer === w.customer);
    expect(suite.core.of(w.id).cards).toEqual([{ customerId: w.customer, paymentMethodId: pm?.id }]);
  });

  it('answers 2xx to types not acted on and to events naming no workspace, recording them once', async () => {
    const w = await suite.workspace();
    const { completed } = await topUpCheckout(w.id, w.customer, 1);
    const other = { ...completed, id: `evt_other_${w.id}`, type: 'invoice.paid' };
    const stranger = {
      ...completed,
      id: `evt_none_${w.id}`,
      data: { object: { ...completed.data.object, metadata: {} } },
    };
    const gone = {
      ...completed,
      id: `evt_gone_${w.id}`,
      data: {
        object: {
          ...completed.data.object,
          metadata: { workspace_id: '00000000-0000-4000-8000-000000000000', top_ups: '1' },
        },
      },
    };
    for (const e of [other, stranger, gone]) {
      expect((await suite.deliver(e)).body).toEqual({ received: true, id: e.id, type: e.type, result: 'ignored' });
      expect((await suite.deliver(e)).body).toMatchObject({ received: true, result: 'duplicate' });
    }
    expect(suite.core.of(w.id).credits).toEqual([]);
  });
});
