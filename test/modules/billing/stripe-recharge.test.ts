// Auto-recharge payments (src/modules/billing/stripe/recharge.ts) against the Stripe stand-in:
// the transitions of interface.md "Auto-recharge" (on, under the threshold: top_ups bought with
// the saved card; a failure: off, failure recorded), each failure code of gaps.md, exactly one
// payment when many charged calls cross the threshold together, at most monthly_limit a UTC
// month, and a recharge credited once when the webhook announces it too.
import { describe, expect, it } from 'vitest';
import { afterCharge, rechargeSummary } from '../../../src/modules/billing/stripe/recharge.js';
import { stripeSuite } from './stripe-setup.js';

const suite = stripeSuite();

/** A workspace with auto-recharge on, a saved card, and a balance under the threshold. */
async function armed(over: { balanceUsd?: number; topUps?: number; monthlyLimit?: number; card?: boolean } = {}) {
  const w = await suite.workspace();
  const l = suite.core.of(w.id);
  const pm = over.card === false ? null : (suite.stripe.attachCard(w.customer).id as string);
  l.balanceUsd = over.balanceUsd ?? 1.5;
  l.settings = {
    enabled: true,
    thresholdUsd: 2,
    topUps: over.topUps ?? 2,
    monthlyLimit: over.monthlyLimit ?? 5,
    customerId: w.customer,
    paymentMethodId: pm,
  };
  return { w, l, pm };
}

describe('a recharge', () => {
  it('pays top_ups × the top-up price off-session with the saved card, and credits it once', async () => {
    const { w, l, pm } = await armed({ topUps: 3 });
    const out = await afterCharge(suite.ctx(), w.id);
    expect(out).toMatchObject({ kind: 'succeeded', seq: 1 });
    const [req] = suite.stripe.calls('/v1/payment_intents');
    expect(req?.form).toMatchObject({
      amount: '3000',
      currency: 'usd',
      customer: w.customer,
      payment_method: pm,
      off_session: 'true',
      confirm: 'true',
      metadata: { workspace_id: w.id, kind: 'recharge', top_ups: '3' },
    });
    expect(req?.idempotencyKey).toMatch(new RegExp(`^recharge-${w.id}-\\d{4}-\\d{2}-1$`));
    expect(l.credits).toMatchObject([{ topUps: 3, usd: 30, source: 'recharge', amount: 3000, currency: 'usd' }]);
    expect(l.balanceUsd).toBe(31.5);
    expect(l.settings.enabled).toBe(true);
    // Stripe's payment_intent.succeeded for it changes nothing more.
    const succeeded = suite.stripe.events.find((e) => e.type === 'payment_intent.succeeded')!;
    expect((await suite.deliver(succeeded)).body).toMatchObject({ received: true, result: 'processed' });
    expect(l.credits).toHaveLength(1);
    const summary = await rechargeSummary(suite.svc.rt.deps, w.id);
    expect(summary).toMatchObject({
      recharges_this_month: 1,
      last_recharge: { top_ups: 3, usd: 30, amount: 3000, currency: 'usd' },
    });
  });

  it('does nothing when off or when the balance is not under the threshold', async () => {
    const { w, l } = await armed({ balanceUsd: 2 });
    expect(await afterCharge(suite.ctx(), w.id)).toEqual({ kind: 'none', why: 'above_threshold' });
    l.balanceUsd = 0.5;
    l.settings.enabled = false;
    expect(await afterCharge(suite.ctx(), w.id)).toEqual({ kind: 'none', why: 'off' });
    expect(suite.stripe.calls('/v1/payment_intents')).toEqual([]);
  });

  it('is one payment when many charged calls cross the threshold together', async () => {
    const { w, l } = await armed();
    const outs = await Promise.all(Array.from({ length: 8 }, () => afterCharge(suite.ctx(), w.id)));
    expect(outs.filter((o) => o.kind === 'succeeded')).toHaveLength(1);
    expect(outs.filter((o) => o.kind === 'none').every((o) => o.kind === 'none' && o.why !== 'off')).toBe(true);
    expect(suite.stripe.calls('/v1/payment_intents')).toHaveLength(1);
    expect(l.credits).toHaveLength(1);
    expect(await suite.rows('stripe_recharges', w.id)).toHaveLength(1);
  });

  it('happens at most monthly_limit times a UTC month, and again the next month', async () => {
    const { w, l } = await armed({ monthlyLimit: 2 });
    const now = new Date('2026-03-31T23:59:00Z');
    for (let i = 0; i < 2; i++) {
      l.balanceUsd = 0.2;
      expect(await afterCharge(suite.ctx(), w.id, now)).toMatchObject({ kind: 'succeeded', seq: i + 1 });
    }
    l.balanceUsd = 0.2;
    expect(await afterCharge(suite.ctx(), w.id, now)).toEqual({ kind: 'none', why: 'monthly_limit' });
    expect(await afterCharge(suite.ctx(), w.id, new Date('2026-04-01T00:00:00Z'))).toMatchObject({
      kind: 'succeeded',
      month: '2026-04',
      seq: 1,
    });
    expect(suite.stripe.calls('/v1/payment_intents')).toHaveLength(3);
  });
});

describe('a recharge left pending', () => {
  it('blocks the next one while in flight, and no longer after 15 minutes (marked failed: unavailable)', async () => {
    const { w, l } = await armed();
    const db = suite.svc.rt.deps.database.db;
    const month = new Date().toISOString().slice(0, 7);
    await db
      .insertInto('stripe_recharges')
      .values({ workspace_id: w.id, month, seq: 1, status: 'pending', top_ups: 2 })
      .execute();
    expect(await afterCharge(suite.ctx(), w.id)).toEqual({ kind: 'none', why: 'in_flight' });
    await db
      .updateTable('stripe_recharges')
      .set({ created_at: new Date(Date.now() - 16 * 60_000) })
      .where('workspace_id', '=', w.id)
      .execute();
    expect(await afterCharge(suite.ctx(), w.id)).toMatchObject({ kind: 'succeeded', seq: 2 });
    const rows = (await suite.rows('stripe_recharges', w.id)) as Array<{ seq: number }>;
    expect(rows.sort((a, b) => a.seq - b.seq)).toMatchObject([
      { seq: 1, status: 'failed', failure_code: 'unavailable' },
      { seq: 2, status: 'succeeded' },
    ]);
    expect(l.credits).toHaveLength(1);
    expect(l.failures).toEqual([]);
  });
});

describe('a failed recharge turns auto-recharge off and records the code', () => {
  for (const [outcome, code] of [
    ['card_declined', 'card_declined'],
    ['authentication_required', 'authentication_required'],
    ['processing_error', 'payment_failed'],
  ] as const) {
    it(`${code} (Stripe: ${outcome})`, async () => {
      const { w, l } = await armed();
      suite.stripe.paymentOutcomes.push(outcome);
      expect(await afterCharge(suite.ctx(), w.id)).toMatchObject({ kind: 'failed', code });
      expect(l.failures.map((f) => f.code)).toEqual([code]);
      expect(l.settings.enabled).toBe(false);
      expect(l.credits).toEqual([]);
      const rows = (await suite.rows('stripe_recharges', w.id)) as Array<{ seq: number }>;
      expect(rows.sort((a, b) => a.seq - b.seq)).toMatchObject([{ status: 'failed', failure_code: code }]);
      // Stripe's payment_intent.payment_failed for it changes nothing more.
      const failed = suite.stripe.events.find((e) => e.type === 'payment_intent.payment_failed')!;
      expect((await suite.deliver(failed)).status).toBe(200);
      expect(l.failures).toHaveLength(1);
      // Off now: the next charged call does not pay.
      expect(await afterCharge(suite.ctx(), w.id)).toEqual({ kind: 'none', why: 'off' });
    });
  }

  it('no_payment_method without a saved card (Stripe is not asked)', async () => {
    const { w, l } = await armed({ card: false });
    expect(await afterCharge(suite.ctx(), w.id)).toMatchObject({ kind: 'failed', code: 'no_payment_method' });
    expect(l.failures.map((f) => f.code)).toEqual(['no_payment_method']);
    expect(l.settings.enabled).toBe(false);
    expect(suite.stripe.calls('/v1/payment_intents')).toEqual([]);
  });

  it('unavailable when Stripe cannot be reached', async () => {
    const { w, l } = await armed();
    suite.stripe.unreachable = true;
    expect(await afterCharge(suite.ctx(), w.id)).toMatchObject({ kind: 'failed', code: 'unavailable' });
    expect(l.failures.map((f) => f.code)).toEqual(['unavailable']);
    expect(l.settings.enabled).toBe(false);
  });

  it('a failure announced again by another event changes nothing more', async () => {
    const { w, l } = await armed();
    suite.stripe.paymentOutcomes.push('card_declined');
    await afterCharge(suite.ctx(), w.id);
    const failed = suite.stripe.events.find((e) => e.type === 'payment_intent.payment_failed')!;
    // Replayed under another id (Stripe's retry of a new event for the same payment): still once.
    expect((await suite.deliver({ ...failed, id: `${failed.id}_again` })).status).toBe(200);
    expect(l.failures).toHaveLength(1);
  });
});
