// What the Stripe side needs from the billing core (src/modules/billing): the ledger's credit, the
// workspace's billing state, the auto-recharge settings and what a failed recharge does. The core
// implements this interface; webhook.ts and recharge.ts call it inside their transactions (a
// `Unit`, so `billing.updated` goes out with the change and notifications after the commit).
// Every call here is made at most once per payment or event: the Stripe side's tables
// (stripe_events, stripe_payments, stripe_recharges) make sure of that.
import type { Unit } from '../../../platform/db/tx.js';
import type { RechargeFailureCode } from './client.js';

/** A subscription's state as Billing shows it (gaps.md: the events customer.subscription.*). */
export interface SubscriptionState {
  /**
   * pro while the subscription is active, trialing or past_due (webhook.ts PRO_STATUSES); free
   * when unpaid, incomplete or paused (it still exists: subscriptionId kept) and once it ended.
   */
  plan: 'free' | 'pro';
  /** Stripe's status (active, trialing, past_due, unpaid, canceled, incomplete, incomplete_expired, paused). */
  status: string;
  interval: 'month' | 'year' | null;
  /** The subscription item's quantity (billed seats at Stripe). */
  seats: number;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  customerId: string;
  /** null once it ended (deleted, canceled, incomplete_expired). */
  subscriptionId: string | null;
}

/** A purchase to credit: `topUps` × 10 dollars of AI usage that never expire. */
export interface TopUpCredit {
  topUps: number;
  usd: number;
  /** The payment (the ledger entry's reference). */
  paymentIntentId: string;
  /** checkout = a top-up bought in a Checkout Session; recharge = an auto-recharge. */
  source: 'checkout' | 'recharge';
  /** What was paid, in the currency's smallest unit (null when the event did not say). */
  amount: number | null;
  currency: string | null;
}

/** What recharge.ts reads, under the workspace's lock, before it claims a recharge. */
export interface RechargeState {
  enabled: boolean;
  thresholdUsd: number;
  topUps: number;
  monthlyLimit: number;
  /** The AI balance now (allowance and purchased, after charges). */
  balanceUsd: number;
  customerId: string | null;
  paymentMethodId: string | null;
}

/** What checkout, the portal and seat sync read of the workspace's billing. */
export interface BillingAccount {
  customerId: string | null;
  subscriptionId: string | null;
  /** Owners, admins and agents now (viewers are free). */
  billedSeats: number;
  /** For the new customer at Stripe: the workspace's name and an owner's email. */
  name: string;
  email: string | null;
}

export interface BillingCore {
  /** The workspace's billing as checkout and seat sync need it. */
  account(unit: Unit): Promise<BillingAccount>;
  /** The customer made at Stripe for the workspace (kept: every later checkout uses it). */
  setCustomer(unit: Unit, customerId: string): Promise<void>;
  /** Adds a purchase to the ledger; resets the balance notices; publishes billing.updated. */
  creditTopUp(unit: Unit, credit: TopUpCredit): Promise<void>;
  /** Plan, status, interval, seats, current_period_end, cancel_at_period_end (and the customer). */
  applySubscription(unit: Unit, state: SubscriptionState): Promise<void>;
  /** The saved card of a setup-mode checkout, and the customer it belongs to. */
  savePaymentMethod(unit: Unit, card: { customerId: string; paymentMethodId: string }): Promise<void>;
  /** The auto-recharge settings and balance (null: billing has no row for the workspace). */
  rechargeState(unit: Unit): Promise<RechargeState | null>;
  /**
   * A recharge failed: auto-recharge off, failure {code, at} recorded, owners and admins notified
   * (auto_recharge_failed and an email), billing.updated.
   */
  rechargeFailed(unit: Unit, failure: { code: RechargeFailureCode; at: Date }): Promise<void>;
}
