// Row types: Stripe's side of billing (0050, src/modules/billing/stripe): the webhook events
// processed, the payments credited, the auto-recharge payments.
import type { DefaultTimestamp, NullableTimestamp } from './columns.js';

/** A verified webhook event, processed once. */
export interface StripeEventsTable {
  id: string;
  type: string;
  workspace_id: string | null;
  received_at: DefaultTimestamp;
}

/** A payment credited to a workspace's AI balance (once per PaymentIntent). */
export interface StripePaymentsTable {
  payment_intent: string;
  workspace_id: string;
  kind: 'top_up' | 'recharge';
  top_ups: number;
  amount: number | null;
  currency: string | null;
  credited_at: DefaultTimestamp;
}

/** An auto-recharge payment: the n-th of its workspace's UTC month. */
export interface StripeRechargesTable {
  workspace_id: string;
  month: string;
  seq: number;
  status: 'pending' | 'succeeded' | 'failed';
  top_ups: number;
  payment_intent: string | null;
  amount: number | null;
  currency: string | null;
  failure_code: string | null;
  created_at: DefaultTimestamp;
  finished_at: NullableTimestamp;
}
