// The billing tables (migration 0049): one account per workspace, the append-only AI ledger, and
// the reservations of AI calls under way. Amounts in micro-dollars (bigint: read back as a string
// by pg, a number or a string by PGlite; always read through Number()).
import type { ColumnType, Generated } from 'kysely';
import type { DefaultTimestamp, NullableJson, NullableTimestamp } from './columns.js';

type Micros = ColumnType<string | number, number | string | undefined, number | string>;
type Micros0 = ColumnType<string | number, number | string, number | string>;

export type BillingPlan = 'free' | 'pro';
// Two halves, each on one line (test/platform/db/schema.test.ts reads one-line literal aliases).
export type BillingStatusLive = 'none' | 'trialing' | 'active' | 'past_due' | 'unpaid';
export type BillingStatusEnded = 'canceled' | 'incomplete' | 'incomplete_expired' | 'paused';
export type BillingStatus = BillingStatusLive | BillingStatusEnded;

export interface LastRecharge {
  at: string;
  top_ups: number;
  usd: number;
  amount: number;
  currency: string;
}

export interface RechargeFailure {
  code: 'card_declined' | 'authentication_required' | 'no_payment_method' | 'payment_failed' | 'unavailable';
  at: string;
}

export interface BillingAccountsTable {
  workspace_id: string;
  plan: Generated<BillingPlan>;
  status: Generated<BillingStatusLive | BillingStatusEnded>;
  interval: 'month' | 'year' | null;
  seats: Generated<number>;
  current_period_end: NullableTimestamp;
  cancel_at_period_end: Generated<boolean>;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  payment_method_id: string | null;
  allowance_month: string | null;
  allowance_micros: Micros;
  allowance_spent_micros: Micros;
  purchased_micros: Micros;
  recharge_enabled: Generated<boolean>;
  recharge_threshold_micros: Micros;
  recharge_top_ups: Generated<number>;
  recharge_monthly_limit: Generated<number>;
  recharge_month: string | null;
  recharges_this_month: Generated<number>;
  last_recharge: NullableJson<LastRecharge>;
  recharge_failure: NullableJson<RechargeFailure>;
  low_notice_month: string | null;
  out_notice_month: string | null;
  updated_at: DefaultTimestamp;
}

export interface AiLedgerTable {
  workspace_id: string;
  id: string;
  kind: 'grant' | 'expire' | 'top_up' | 'charge';
  allowance_micros: Micros;
  purchased_micros: Micros;
  month: string | null;
  top_ups: number | null;
  payment_ref: string | null;
  usage_id: string | null;
  created_at: DefaultTimestamp;
}

export interface AiReservationsTable {
  workspace_id: string;
  id: string;
  micros: Micros0;
  created_at: DefaultTimestamp;
}
