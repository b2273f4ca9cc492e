// POST /v1/billing/webhook: Stripe's events (gaps.md "Billing (hosted offering)").
//
// - Verified with the SDK's `webhooks.constructEvent` against STRIPE_WEBHOOK_SECRET (HMAC-SHA256
//   over `<t>.<raw body>`, 5-minute tolerance): a missing or bad signature is 400 bad_request and
//   changes nothing.
// - An event id is processed at most once (stripe_events); every verified event answers 2xx,
//   types not acted on and events already processed included.
// - Acted on: checkout.session.completed (subscription: the plan; payment, paid: the top-ups;
//   setup: the saved card), customer.subscription.created|updated|deleted (plan, status,
//   interval, seats, current_period_end, cancel_at_period_end; deleted: back to free),
//   payment_intent.succeeded|payment_failed (a top-up's or an auto-recharge's payment).
// - A payment is credited once whichever events announce it, in any order: the credit is keyed
//   on its PaymentIntent (recharge.ts creditOnce).
// - The workspace is the event object's metadata.workspace_id (every session, subscription and
//   payment this service creates carries it); an event naming none, or a workspace that no longer
//   exists, is recorded and acted on no further.
// Stripe's state is read again (subscriptions, setup intents) before the transaction, so an
// older `updated` arriving after a newer one cannot roll the plan back. When Stripe cannot be
// reached the answer is 500 and the event is not recorded: Stripe sends it again.
import type Stripe from 'stripe';
import type { Deps } from '../../../deps.js';
import type { Unit } from '../../../platform/db/tx.js';
import { ApiError } from '../../../platform/http/errors.js';
import type { WebhookOutcome } from '../provider.js';
import { failureCode, type RechargeFailureCode, type StripeClient } from './client.js';
import type { BillingCore, SubscriptionState } from './ports.js';
import { creditOnce, lockWorkspace, rechargeFailed, rechargeSucceeded } from './recharge.js';

/** gaps.md: 5 minutes. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export interface WebhookContext {
  deps: Deps;
  core: BillingCore;
  client: StripeClient;
  webhookSecret: string;
}

/** What a verified delivery answers (200; provider.ts WebhookOutcome). */
export type WebhookReceipt = WebhookOutcome;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const idOf = (v: string | { id: string } | null | undefined): string | null =>
  typeof v === 'string' ? v : (v?.id ?? null);

/** Verifies the signature; throws 400 bad_request when it is missing or does not verify. */
export function verifyEvent(
  client: StripeClient,
  secret: string,
  raw: string | Buffer,
  signature: unknown,
): Stripe.Event {
  if (typeof signature !== 'string' || signature === '') {
    throw new ApiError('bad_request', 'The Stripe-Signature header is missing.');
  }
  try {
    return client.stripe.webhooks.constructEvent(raw, signature, secret, WEBHOOK_TOLERANCE_SECONDS);
  } catch {
    throw new ApiError(
      'bad_request',
      'The Stripe-Signature header does not verify (wrong secret, altered body or too old).',
    );
  }
}

/**
 * The subscription states in which the workspace gets pro (docs/billing.md "Plan limits"): paid
 * for (active), in its trial, or past_due while Stripe retries the renewal's payment. Unpaid (the
 * retries ran out), incomplete (the first payment not made), paused (a trial ended without a
 * card) and ended subscriptions get free, as a deleted one does.
 */
export const PRO_STATUSES: ReadonlySet<string> = new Set(['active', 'trialing', 'past_due']);

/** A subscription's state as Billing shows it (deleted, or ended: back to free). */
export function subscriptionState(sub: Stripe.Subscription, deleted: boolean): SubscriptionState {
  const item = sub.items?.data?.[0];
  const interval = item?.price?.recurring?.interval;
  const periodEnd =
    item?.current_period_end ?? (sub as unknown as { current_period_end?: number }).current_period_end ?? null;
  const ended = deleted || sub.status === 'canceled' || sub.status === 'incomplete_expired';
  return {
    plan: !ended && PRO_STATUSES.has(sub.status) ? 'pro' : 'free',
    status: sub.status,
    interval: interval === 'month' ? 'month' : interval === 'year' ? 'year' : null,
    seats: item?.quantity ?? 0,
    currentPeriodEnd: periodEnd ? new Date(periodEnd * 1000) : null,
    cancelAtPeriodEnd: Boolean(sub.cancel_at_period_end),
    customerId: idOf(sub.customer) ?? '',
    subscriptionId: ended ? null : sub.id,
  };
}

/** What an event does, prepared before the transaction (Stripe's reads happen here). */
type Action = (unit: Unit) => Promise<void>;

async function prepare(
  ctx: WebhookContext,
  event: Stripe.Event,
): Promise<{ workspaceId: string | null; act: Action | null }> {
  const { core, client } = ctx;
  const o = event.data.object as unknown as { metadata?: Record<string, string> | null };
  const workspaceId = o.metadata?.workspace_id ?? null;
  const none = { workspaceId, act: null };

  switch (event.type) {
    case 'checkout.session.completed': {
      const s = event.data.object;
      if (s.mode === 'subscription') {
        const subId = idOf(s.subscription);
        if (!subId) return none;
        const sub = await client.stripe.subscriptions.retrieve(subId);
        return { workspaceId, act: (unit) => core.applySubscription(unit, subscriptionState(sub, false)) };
      }
      if (s.mode === 'payment') {
        const pi = idOf(s.payment_intent);
        const topUps = Number(s.metadata?.top_ups);
        if (s.payment_status !== 'paid' || !pi || !(topUps > 0)) return none;
        return {
          workspaceId,
          act: async (unit) => {
            await creditOnce(unit, core, {
              paymentIntentId: pi,
              kind: 'top_up',
              topUps,
              amount: s.amount_total ?? null,
              currency: s.currency ?? null,
            });
          },
        };
      }
      if (s.mode === 'setup') {
        const siId = idOf(s.setup_intent);
        if (!siId) return none;
        const si = await client.stripe.setupIntents.retrieve(siId);
        const pm = idOf(si.payment_method);
        const customer = idOf(s.customer) ?? idOf(si.customer);
        if (!pm || !customer) return none;
        return {
          workspaceId,
          act: (unit) => core.savePaymentMethod(unit, { customerId: customer, paymentMethodId: pm }),
        };
      }
      return none;
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const deleted = event.type === 'customer.subscription.deleted';
      // The subscription as it is now, not as this (possibly older) event saw it.
      const sub = deleted ? event.data.object : await client.stripe.subscriptions.retrieve(event.data.object.id);
      const ws = sub.metadata?.workspace_id ?? workspaceId;
      return { workspaceId: ws, act: (unit) => core.applySubscription(unit, subscriptionState(sub, deleted)) };
    }
    case 'payment_intent.succeeded': {
      const pi = event.data.object;
      const topUps = Number(pi.metadata?.top_ups);
      const kind = pi.metadata?.kind;
      if ((kind !== 'top_up' && kind !== 'recharge') || !(topUps > 0)) return none;
      const paid = { paymentIntentId: pi.id, topUps, amount: pi.amount_received || pi.amount, currency: pi.currency };
      return {
        workspaceId,
        act: async (unit) => {
          if (kind === 'recharge') {
            await lockWorkspace(unit);
            await rechargeSucceeded(unit, core, { ...paid, ref: pi.metadata?.recharge ?? null });
          } else await creditOnce(unit, core, { ...paid, kind: 'top_up' });
        },
      };
    }
    case 'payment_intent.payment_failed': {
      const pi = event.data.object;
      const ref = pi.metadata?.recharge;
      if (pi.metadata?.kind !== 'recharge' || !ref) return none;
      const code: RechargeFailureCode = failureCode(pi.last_payment_error ?? null);
      return {
        workspaceId,
        act: async (unit) => {
          await lockWorkspace(unit);
          await rechargeFailed(unit, core, { ref, code, paymentIntentId: pi.id });
        },
      };
    }
    default:
      return none;
  }
}

/**
 * Receives one delivery: verifies it, and processes its event unless it was processed before.
 * Throws 400 on a bad signature; other throws (Stripe unreachable) are a 5xx, and Stripe retries.
 */
export async function receiveWebhook(
  ctx: WebhookContext,
  raw: string | Buffer,
  signature: unknown,
): Promise<WebhookReceipt> {
  const event = verifyEvent(ctx.client, ctx.webhookSecret, raw, signature);
  const db = ctx.deps.database.db;
  const receipt = (result: WebhookReceipt['result']): WebhookReceipt => ({
    received: true,
    id: event.id,
    type: event.type,
    result,
  });
  const seen = await db.selectFrom('stripe_events').select('id').where('id', '=', event.id).executeTakeFirst();
  if (seen) return receipt('duplicate');

  const { workspaceId, act } = await prepare(ctx, event);
  const known =
    workspaceId && UUID.test(workspaceId)
      ? await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()
      : undefined;

  const record = async (trx: Unit['trx'], ws: string | null) =>
    trx
      .insertInto('stripe_events')
      .values({ id: event.id, type: event.type, workspace_id: ws })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();

  if (!known || !act) {
    const first = await db.transaction().execute((trx) => record(trx, known ? known.id : null));
    return receipt(first ? 'ignored' : 'duplicate');
  }
  return ctx.deps.writer.run(known.id, async (unit) => {
    // The event's row first: a concurrent delivery of the same id waits here, then finds it.
    if (!(await record(unit.trx, known.id))) return receipt('duplicate');
    await act(unit);
    return receipt('processed');
  });
}
