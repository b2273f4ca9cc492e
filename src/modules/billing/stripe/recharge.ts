// Auto-recharge payments (interface.md "Auto-recharge", gaps.md "Billing (hosted offering)"):
// after a charged AI call leaves the balance under threshold_usd, the billing core calls
// `afterCharge`, which makes at most one off-session payment of `top_ups` with the saved card.
//
// Exactly once, however many calls cross the threshold together:
// 1. the claim: one transaction takes the workspace's row lock (FOR NO KEY UPDATE: inserts that
//    reference the workspace are not held up), reads the balance and settings again, and inserts
//    the month's next stripe_recharges row as `pending`. A second pending row of the workspace is
//    refused by a partial unique index; a claim after a finished recharge sees its credit.
// 2. the payment, outside any transaction, with the Idempotency-Key `recharge-<ws>-<month>-<seq>`
//    (a retry of the same recharge is the same payment at Stripe).
// 3. the finish, under the same lock: success credits the payment once (stripe_payments, shared
//    with the webhook, which may announce it too); failure marks the row, and the core turns
//    auto-recharge off, records {code, at} and notifies owners and admins.
// At most monthly_limit recharges that did not fail per UTC month.
import { sql } from 'kysely';
import type { Deps } from '../../../deps.js';
import type { Unit } from '../../../platform/db/tx.js';
import { type RechargeFailureCode, type StripeClient, TOP_UP_USD } from './client.js';
import type { BillingCore } from './ports.js';

/** The UTC month a recharge counts in: YYYY-MM. */
export const rechargeMonth = (at: Date): string => at.toISOString().slice(0, 7);

/** What `recharge` metadata names: `<month>:<seq>`. */
export const rechargeRef = (month: string, seq: number) => `${month}:${seq}`;

/** How long a pending recharge may block the next one (a process that died mid-payment). */
export const STALE_PENDING_MS = 15 * 60_000;

export interface StripeContext {
  deps: Deps;
  core: BillingCore;
  client: StripeClient;
}

/** Takes the workspace's row lock for the rest of the transaction (claims and finishes one at a time). */
export async function lockWorkspace(unit: Unit): Promise<void> {
  await sql`SELECT id FROM workspaces WHERE id = ${unit.workspaceId} FOR NO KEY UPDATE`.execute(unit.trx);
}

/**
 * Credits a payment once: the first announcement (the recharge's own answer, the checkout's
 * completion or payment_intent.succeeded) inserts its PaymentIntent and credits; later ones find
 * it and change nothing. True when this call credited.
 */
export async function creditOnce(
  unit: Unit,
  core: BillingCore,
  p: {
    paymentIntentId: string;
    kind: 'top_up' | 'recharge';
    topUps: number;
    amount: number | null;
    currency: string | null;
  },
): Promise<boolean> {
  const inserted = await unit.trx
    .insertInto('stripe_payments')
    .values({
      payment_intent: p.paymentIntentId,
      workspace_id: unit.workspaceId,
      kind: p.kind,
      top_ups: p.topUps,
      amount: p.amount,
      currency: p.currency,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'payment_intent']).doNothing())
    .returning('payment_intent')
    .executeTakeFirst();
  if (!inserted) return false;
  await core.creditTopUp(unit, {
    topUps: p.topUps,
    usd: p.topUps * TOP_UP_USD,
    paymentIntentId: p.paymentIntentId,
    source: p.kind === 'recharge' ? 'recharge' : 'checkout',
    amount: p.amount,
    currency: p.currency,
  });
  return true;
}

/** A recharge's success (from its answer or the webhook): the row succeeded, the payment credited once. */
export async function rechargeSucceeded(
  unit: Unit,
  core: BillingCore,
  r: { ref: string | null; paymentIntentId: string; topUps: number; amount: number | null; currency: string | null },
): Promise<boolean> {
  const at = r.ref ? parseRef(r.ref) : null;
  if (at) {
    await unit.trx
      .updateTable('stripe_recharges')
      .set({
        status: 'succeeded',
        payment_intent: r.paymentIntentId,
        amount: r.amount,
        currency: r.currency,
        failure_code: null,
        finished_at: new Date(),
      })
      .where('workspace_id', '=', unit.workspaceId)
      .where('month', '=', at.month)
      .where('seq', '=', at.seq)
      .execute();
  }
  return creditOnce(unit, core, { ...r, kind: 'recharge' });
}

/**
 * A recharge's failure (from its answer or payment_intent.payment_failed): only a pending
 * recharge fails, once; then the core turns auto-recharge off and tells owners and admins.
 */
export async function rechargeFailed(
  unit: Unit,
  core: BillingCore,
  r: { ref: string; code: RechargeFailureCode; paymentIntentId: string | null },
): Promise<boolean> {
  const at = parseRef(r.ref);
  if (!at) return false;
  const updated = await unit.trx
    .updateTable('stripe_recharges')
    .set({
      status: 'failed',
      failure_code: r.code,
      finished_at: new Date(),
      ...(r.paymentIntentId ? { payment_intent: r.paymentIntentId } : {}),
    })
    .where('workspace_id', '=', unit.workspaceId)
    .where('month', '=', at.month)
    .where('seq', '=', at.seq)
    .where('status', '=', 'pending')
    .returning('seq')
    .executeTakeFirst();
  if (!updated) return false;
  await core.rechargeFailed(unit, { code: r.code, at: new Date() });
  return true;
}

function parseRef(ref: string): { month: string; seq: number } | null {
  const m = /^(\d{4}-\d{2}):(\d+)$/.exec(ref);
  return m ? { month: m[1] as string, seq: Number(m[2]) } : null;
}

export type RechargeOutcome =
  | { kind: 'none'; why: 'off' | 'above_threshold' | 'in_flight' | 'monthly_limit' }
  | { kind: 'succeeded'; month: string; seq: number; paymentIntentId: string }
  | { kind: 'failed'; month: string; seq: number; code: RechargeFailureCode };

/**
 * Called by the billing core after a charged AI call committed. Makes the recharge when the
 * balance is under the threshold and none is in flight; resolves when it is done (the core
 * need not wait for it: it never throws, and what happened is in the tables and events).
 */
export async function afterCharge(ctx: StripeContext, workspaceId: string, now = new Date()): Promise<RechargeOutcome> {
  const { deps, core, client } = ctx;
  const month = rechargeMonth(now);
  const claim = await deps.writer.run(workspaceId, async (unit) => {
    await lockWorkspace(unit);
    const st = await core.rechargeState(unit);
    if (!st?.enabled) return { none: 'off' as const };
    if (st.balanceUsd >= st.thresholdUsd) return { none: 'above_threshold' as const };
    // A recharge left pending by a process that stopped mid-payment stops blocking after 15
    // minutes (its payment, if Stripe made it, is still credited by payment_intent.succeeded).
    await unit.trx
      .updateTable('stripe_recharges')
      .set({ status: 'failed', failure_code: 'unavailable', finished_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', 'pending')
      .where('created_at', '<', new Date(now.getTime() - STALE_PENDING_MS))
      .execute();
    const rows = await unit.trx
      .selectFrom('stripe_recharges')
      .select(['seq', 'status'])
      .where('workspace_id', '=', workspaceId)
      .where('month', '=', month)
      .execute();
    if (rows.some((r) => r.status === 'pending')) return { none: 'in_flight' as const };
    if (rows.filter((r) => r.status === 'succeeded').length >= st.monthlyLimit) {
      return { none: 'monthly_limit' as const };
    }
    const seq = rows.reduce((n, r) => Math.max(n, r.seq), 0) + 1;
    const inserted = await unit.trx
      .insertInto('stripe_recharges')
      .values({ workspace_id: workspaceId, month, seq, status: 'pending', top_ups: st.topUps })
      .onConflict((oc) => oc.doNothing())
      .returning('seq')
      .executeTakeFirst();
    if (!inserted) return { none: 'in_flight' as const };
    return { seq, topUps: st.topUps, customerId: st.customerId, paymentMethodId: st.paymentMethodId };
  });
  if ('none' in claim) return { kind: 'none', why: claim.none ?? 'off' };

  const ref = rechargeRef(month, claim.seq);
  const result = await client.recharge({
    workspaceId,
    customerId: claim.customerId,
    paymentMethodId: claim.paymentMethodId,
    topUps: claim.topUps,
    idempotencyKey: `recharge-${workspaceId}-${month}-${claim.seq}`,
    ref,
  });

  return deps.writer.run(workspaceId, async (unit): Promise<RechargeOutcome> => {
    await lockWorkspace(unit);
    if (result.ok) {
      await rechargeSucceeded(unit, core, {
        ref,
        paymentIntentId: result.paymentIntentId,
        topUps: claim.topUps,
        amount: result.amount,
        currency: result.currency,
      });
      return { kind: 'succeeded', month, seq: claim.seq, paymentIntentId: result.paymentIntentId };
    }
    await rechargeFailed(unit, core, { ref, code: result.code, paymentIntentId: result.paymentIntentId });
    return { kind: 'failed', month, seq: claim.seq, code: result.code };
  });
}

/** AutoRecharge.recharges_this_month and last_recharge, for the core's Billing object. */
export async function rechargeSummary(
  deps: Deps,
  workspaceId: string,
  now = new Date(),
): Promise<{
  recharges_this_month: number;
  last_recharge: { at: string; top_ups: number; usd: number; amount: number; currency: string } | null;
}> {
  const db = deps.database.db;
  const count = await db
    .selectFrom('stripe_recharges')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('month', '=', rechargeMonth(now))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  const last = await db
    .selectFrom('stripe_recharges')
    .select(['finished_at', 'created_at', 'top_ups', 'amount', 'currency'])
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'succeeded')
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    recharges_this_month: Number(count.n),
    last_recharge: last
      ? {
          at: (last.finished_at ?? last.created_at).toISOString(),
          top_ups: last.top_ups,
          usd: last.top_ups * TOP_UP_USD,
          amount: last.amount ?? 0,
          currency: last.currency ?? 'usd',
        }
      : null,
  };
}
