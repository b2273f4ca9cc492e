// The Billing object (GET /v1/billing), the billing changes that publish billing.updated, the
// balance notices, the spend gate's settlement, plan limits and the auto-recharge settings
// (interface.md "Billing (hosted offering only)"; docs/billing.md).
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import type { BillingPlan, BillingStatus, LastRecharge, RechargeFailure } from '../../platform/db/tables-billing.js';
import type { Unit } from '../../platform/db/tx.js';
import { escapeHtml } from '../../platform/html/index.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { systemMailer } from '../../platform/mail/index.js';
import { notify } from '../notifications/service.js';
import {
  type AccountRow,
  balanceOf,
  creditIn,
  ensureAccount,
  lockAccount,
  MICROS,
  monthOf,
  nextMonthStart,
  OUT_BELOW_MICROS,
  type Reservation,
  regrant,
  settleIn,
  spentThisMonth,
  TOP_UP_USD,
  toMicros,
  toUsd,
} from './ledger.js';
import { billingProvider, isHosted, type PricesView } from './provider.js';

/** Rule 3 / gaps.md: the free plan's limits; pro has none (0 = unlimited). */
export const PLAN_LIMITS: Record<BillingPlan, { max_mailboxes: number; max_members: number }> = {
  free: { max_mailboxes: 1, max_members: 3 },
  pro: { max_mailboxes: 0, max_members: 0 },
};
const SEAT_ROLES = ['owner', 'admin', 'agent'] as const;
const NO_PRICES: PricesView = { pro_month: null, pro_year: null, ai_top_up: null };

export interface AutoRechargeView {
  enabled: boolean;
  threshold_usd: number;
  top_ups: number;
  monthly_limit: number;
  recharges_this_month: number;
  low_at_usd: number;
  last_recharge: LastRecharge | null;
  failure: RechargeFailure | null;
}

export interface BillingView {
  plan: BillingPlan | 'self_hosted';
  billing_enabled: boolean;
  status: BillingStatus;
  interval: 'month' | 'year' | null;
  seats: number;
  billed_seats: number;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
  limits: { max_mailboxes: number; max_members: number };
  usage: { mailboxes: number; members: number };
  ai: {
    unlimited: boolean;
    monthly_usd: number;
    used_usd: number;
    purchased_usd: number;
    remaining_usd: number | null;
    period_end: string;
  };
  prices: PricesView;
  auto_recharge: AutoRechargeView | null;
}

const usd = (micros: number | string) => Math.round(Number(micros)) / MICROS;
const cents = (n: number) => Math.round(n * 100) / 100;

/** Rule 7: the threshold, but never more than a fifth of the monthly allowance, at least 0.05. */
export function lowAtMicros(a: AccountRow): number {
  return Math.max(50_000, Math.min(Number(a.recharge_threshold_micros), Math.floor(Number(a.allowance_micros) / 5)));
}

async function counts(db: Kysely<DB>, workspaceId: string) {
  const [m, b] = await Promise.all([
    db
      .selectFrom('members')
      .select((e) => e.fn.countAll<string | number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('role', 'in', [...SEAT_ROLES])
      .executeTakeFirst(),
    db
      .selectFrom('mailboxes')
      .select((e) => e.fn.countAll<string | number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
  ]);
  return { members: Number(m?.n ?? 0), mailboxes: Number(b?.n ?? 0) };
}

async function prices(deps: Deps): Promise<PricesView> {
  const p = billingProvider();
  if (!p?.prices) return NO_PRICES;
  try {
    return await p.prices(deps);
  } catch (err) {
    deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'billing prices not available');
    return NO_PRICES;
  }
}

export function presentAutoRecharge(a: AccountRow, now = new Date()): AutoRechargeView {
  return {
    enabled: a.recharge_enabled,
    threshold_usd: cents(toUsd(a.recharge_threshold_micros)),
    top_ups: a.recharge_top_ups,
    monthly_limit: a.recharge_monthly_limit,
    recharges_this_month: a.recharge_month === monthOf(now) ? a.recharges_this_month : 0,
    low_at_usd: usd(lowAtMicros(a)),
    last_recharge: a.last_recharge,
    failure: a.recharge_failure,
  };
}

/** The Billing object of a hosted workspace's account, read through `db` (a transaction's too). */
export async function presentAccount(deps: Deps, db: Kysely<DB>, a: AccountRow): Promise<BillingView> {
  const now = new Date();
  const [c, spent, p] = await Promise.all([
    counts(db, a.workspace_id),
    spentThisMonth(db, a.workspace_id, a.allowance_month ?? monthOf(now)),
    prices(deps),
  ]);
  const b = balanceOf(a);
  return {
    plan: a.plan,
    billing_enabled: true,
    status: a.status,
    interval: a.interval,
    seats: a.seats,
    billed_seats: c.members,
    current_period_end: iso(a.current_period_end),
    cancel_at_period_end: a.cancel_at_period_end,
    limits: PLAN_LIMITS[a.plan],
    usage: c,
    ai: {
      unlimited: false,
      monthly_usd: usd(b.allowance),
      used_usd: usd(spent),
      purchased_usd: usd(b.purchased),
      remaining_usd: usd(b.total),
      period_end: nextMonthStart(now).toISOString(),
    },
    prices: p,
    auto_recharge: presentAutoRecharge(a, now),
  };
}

/** GET /v1/billing. */
export async function getBilling(deps: Deps, workspaceId: string): Promise<BillingView> {
  if (!isHosted(deps)) return selfHosted(deps, workspaceId);
  // The month's allowance is granted by the first thing that reads the account in the month.
  const a = await deps.database.db.transaction().execute((trx) => lockAccount(trx, workspaceId));
  return presentAccount(deps, deps.database.db, a);
}

async function selfHosted(deps: Deps, workspaceId: string): Promise<BillingView> {
  const db = deps.database.db;
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const [c, used] = await Promise.all([
    counts(db, workspaceId),
    db
      .selectFrom('ai_usage')
      .select((e) => e.fn.sum<string | number | null>('cost_usd').as('usd'))
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>=', start)
      .executeTakeFirst(),
  ]);
  return {
    plan: 'self_hosted',
    billing_enabled: false,
    status: 'none',
    interval: null,
    seats: 0,
    billed_seats: c.members,
    current_period_end: null,
    cancel_at_period_end: false,
    limits: { max_mailboxes: 0, max_members: 0 },
    usage: c,
    ai: {
      unlimited: true,
      monthly_usd: 0,
      used_usd: Math.round(Number(used?.usd ?? 0) * MICROS) / MICROS,
      purchased_usd: 0,
      remaining_usd: null,
      period_end: nextMonthStart(now).toISOString(),
    },
    prices: NO_PRICES,
    auto_recharge: null,
  };
}

/** billing.updated (rule 8) with the Billing object as the transaction sees it. */
export async function emitUpdated(deps: Deps, u: Unit, a: AccountRow): Promise<BillingView> {
  const billing = await presentAccount(deps, u.trx, a);
  u.emit({ type: 'billing.updated', data: { billing } });
  return billing;
}

// ---------------------------------------------------------------------------------------------
// For the payment provider's side (src/modules/billing/stripe/).

/** What the provider may change of an account (the subscription, the customer, the card, recharge state). */
export type AccountPatch = Partial<
  Pick<
    AccountRow,
    | 'plan'
    | 'status'
    | 'interval'
    | 'seats'
    | 'current_period_end'
    | 'cancel_at_period_end'
    | 'stripe_customer_id'
    | 'stripe_subscription_id'
    | 'payment_method_id'
    | 'recharge_enabled'
    | 'recharge_threshold_micros'
    | 'recharge_top_ups'
    | 'recharge_monthly_limit'
    | 'recharge_month'
    | 'recharges_this_month'
    | 'last_recharge'
    | 'recharge_failure'
  >
>;

/**
 * Changes the account (under its lock), re-grants this month's allowance when the plan or seats
 * now allow more, and publishes billing.updated. `within`: more to do in the same transaction
 * (e.g. the provider's own bookkeeping), given the locked row before the change.
 */
export async function updateAccount(
  deps: Deps,
  workspaceId: string,
  patch: AccountPatch | ((before: AccountRow, u: Unit) => Promise<AccountPatch | null>),
): Promise<BillingView | null> {
  return deps.writer.run(workspaceId, async (u) => {
    const before = await lockAccount(u.trx, workspaceId);
    const change = typeof patch === 'function' ? await patch(before, u) : patch;
    if (!change) return null;
    const { last_recharge, recharge_failure, ...rest } = change;
    await u.trx
      .updateTable('billing_accounts')
      .set({
        ...rest,
        ...(last_recharge !== undefined ? { last_recharge: last_recharge ? JSON.stringify(last_recharge) : null } : {}),
        ...(recharge_failure !== undefined
          ? { recharge_failure: recharge_failure ? JSON.stringify(recharge_failure) : null }
          : {}),
        updated_at: new Date(),
      })
      .where('workspace_id', '=', workspaceId)
      .execute();
    const after = await regrant(u.trx, workspaceId);
    return emitUpdated(deps, u, after);
  });
}

/**
 * Credits a confirmed payment of `top_ups` (each 10 dollars: `usd` = top_ups × 10) to the
 * purchased balance, ONCE per payment_ref (the provider's PaymentIntent id) whatever announces it
 * and however often; resets both balance notices; billing.updated. False when already credited.
 */
export async function creditTopUp(
  deps: Deps,
  workspaceId: string,
  p: { top_ups: number; usd?: number; payment_ref: string },
): Promise<boolean> {
  const amount = p.usd ?? p.top_ups * TOP_UP_USD;
  return deps.writer.run(workspaceId, async (u) => {
    const a = await creditIn(u, workspaceId, { top_ups: p.top_ups, usd: amount, payment_ref: p.payment_ref });
    if (!a) return false;
    await emitUpdated(deps, u, a);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// The spend gate's second half (src/modules/ai/spend.ts settleSpend).

/**
 * Settles a call: its reservation ends, its cost is charged (billing.updated when something was),
 * the balance notices go out when it crossed their line, and afterCharge of the provider runs
 * when auto-recharge is on and the balance is below its threshold.
 */
export async function settle(deps: Deps, r: Reservation, costUsd: number, usageId: string | null): Promise<void> {
  const emails: Array<{ to: string; name: string; remaining: number; workspace: string }> = [];
  const out = await deps.writer.run(r.workspaceId, async (u) => {
    const s = await settleIn(u, r, costUsd, usageId);
    if (s.charged <= 0) return s;
    let a = s.account;
    const month = monthOf();
    const notice =
      s.remaining < OUT_BELOW_MICROS && a.out_notice_month !== month
        ? ('ai_balance_out' as const)
        : s.remaining < lowAtMicros(a) && a.low_notice_month !== month && a.out_notice_month !== month
          ? ('ai_balance_low' as const)
          : null;
    if (notice) {
      a = await u.trx
        .updateTable('billing_accounts')
        .set(
          notice === 'ai_balance_out'
            ? { out_notice_month: month, low_notice_month: month }
            : { low_notice_month: month },
        )
        .where('workspace_id', '=', r.workspaceId)
        .returningAll()
        .executeTakeFirstOrThrow();
      const admins = await u.trx
        .selectFrom('members as m')
        .innerJoin('users as us', 'us.id', 'm.user_id')
        .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
        .select(['m.user_id', 'us.email', 'us.name', 'w.name as workspace'])
        .where('m.workspace_id', '=', r.workspaceId)
        .where('m.role', 'in', ['owner', 'admin'])
        .execute();
      const remaining_usd = usd(s.remaining);
      for (const m of admins) {
        await notify(u, { userId: m.user_id, type: notice, ticket: null, data: { remaining_usd } });
        if (notice === 'ai_balance_out') {
          emails.push({ to: m.email, name: m.name, remaining: remaining_usd, workspace: m.workspace });
        }
      }
    }
    await emitUpdated(deps, u, a);
    return { ...s, account: a };
  });
  for (const e of emails) await sendOutMail(deps, r.workspaceId, e);
  const a = out.account;
  if (out.charged > 0 && a.recharge_enabled && out.remaining < Number(a.recharge_threshold_micros)) {
    const hook = billingProvider()?.afterCharge;
    if (hook) {
      try {
        await hook(deps, r.workspaceId);
      } catch (err) {
        deps.log.error(
          { workspace_id: r.workspaceId, err: err instanceof Error ? err.message : String(err) },
          'afterCharge failed',
        );
      }
    }
  }
}

/** The ai_balance_out email to an owner or admin (sent, or kept in the outbox without SMTP_URL). */
async function sendOutMail(
  deps: Deps,
  workspaceId: string,
  e: { to: string; name: string; remaining: number; workspace: string },
): Promise<void> {
  const url = `${deps.config.publicUrl.replace(/\/$/, '')}/settings/billing`;
  const text = [
    `The AI balance of ${e.workspace} has run out (${e.remaining.toFixed(2)} USD left).`,
    '',
    'AI features (drafts, summaries, answers) stop until the balance is topped up or the monthly allowance renews.',
    `Buy a top-up or turn on auto-recharge: ${url}`,
  ].join('\n');
  const html = [
    `<p>The AI balance of <strong>${escapeHtml(e.workspace)}</strong> has run out (${e.remaining.toFixed(2)} USD left).</p>`,
    '<p>AI features (drafts, summaries, answers) stop until the balance is topped up or the monthly allowance renews.</p>',
    `<p><a href="${escapeHtml(url)}">Buy a top-up or turn on auto-recharge</a></p>`,
  ].join('\n');
  try {
    await systemMailer(deps).send(
      { to: e.to, subject: `The AI balance of ${e.workspace} has run out`, text, html },
      { workspaceId, kind: 'notice' },
    );
  } catch (err) {
    deps.log.warn(
      { workspace_id: workspaceId, err: err instanceof Error ? err.message : String(err) },
      'balance email not sent',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Plan limits (rule 3).

/**
 * 402 plan_limit when adding one more mailbox or seat (owner, admin, agent) would pass the plan's
 * limit; hosted only. Takes the account's lock in the caller's transaction, so concurrent creates
 * of one workspace are counted one after the other.
 */
export async function checkPlanLimit(
  deps: Deps,
  trx: Kysely<DB>,
  workspaceId: string,
  what: 'mailboxes' | 'members',
): Promise<void> {
  if (!isHosted(deps)) return;
  await ensureAccount(trx, workspaceId);
  const a = await trx
    .selectFrom('billing_accounts')
    .select('plan')
    .where('workspace_id', '=', workspaceId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const limits = PLAN_LIMITS[a.plan];
  const max = what === 'mailboxes' ? limits.max_mailboxes : limits.max_members;
  if (max === 0) return;
  const c = await counts(trx, workspaceId);
  if (c[what] < max) return;
  throw new ApiError(
    'plan_limit',
    what === 'mailboxes'
      ? `The ${a.plan} plan allows ${max} mailbox${max === 1 ? '' : 'es'} (max_mailboxes ${max}); upgrade to add more.`
      : `The ${a.plan} plan allows ${max} members with the owner, admin or agent role (max_members ${max}; viewers are free); upgrade to add more.`,
  );
}

/**
 * A mailbox was created or deleted in `u`: usage.mailboxes is part of the Billing object, so
 * billing.updated goes with the change (rule 8). Hosted only.
 */
export async function mailboxesChanged(deps: Deps, u: Unit, workspaceId: string): Promise<void> {
  if (!isHosted(deps)) return;
  await emitUpdated(deps, u, await lockAccount(u.trx, workspaceId));
}

/**
 * The billed seats (owners, admins, agents) of a workspace changed: billing.updated, and the
 * provider syncs the subscription's quantity (its seatsChanged hook). Hosted only; after the change committed; a
 * failure is logged, never undoes the change.
 */
export async function seatsChanged(deps: Deps, workspaceId: string): Promise<void> {
  if (!isHosted(deps)) return;
  const hook = billingProvider()?.seatsChanged;
  try {
    // billed_seats and usage.members are part of the Billing object (rule 8).
    await deps.writer.run(workspaceId, async (u) => emitUpdated(deps, u, await lockAccount(u.trx, workspaceId)));
    if (hook) await hook(deps, workspaceId);
  } catch (err) {
    deps.log.warn(
      { workspace_id: workspaceId, err: err instanceof Error ? err.message : String(err) },
      'seat sync failed',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// PATCH /v1/billing/auto-recharge.

export interface AutoRechargePatch {
  enabled?: boolean;
  threshold_usd?: number;
  top_ups?: number;
  monthly_limit?: number;
}

/**
 * Stores the settings: threshold rounded to cents; 422 recharge_too_small unless top_ups × 10
 * exceeds the threshold; 409 payment_method_required when turning on without a saved card (and
 * nothing changes). Turning on clears the last failure.
 */
export async function patchAutoRecharge(deps: Deps, ctx: RequestContext, p: AutoRechargePatch): Promise<BillingView> {
  const view = await updateAccount(deps, ctx.workspaceId, async (a) => {
    const threshold =
      p.threshold_usd !== undefined ? toMicros(cents(p.threshold_usd)) : Number(a.recharge_threshold_micros);
    const topUps = p.top_ups ?? a.recharge_top_ups;
    if (topUps * TOP_UP_USD * MICROS <= threshold) {
      throw new ApiError(
        'recharge_too_small',
        `top_ups × 10 (${topUps * TOP_UP_USD}) must exceed threshold_usd (${(threshold / MICROS).toFixed(2)}).`,
      );
    }
    const turningOn = p.enabled === true && !a.recharge_enabled;
    if (p.enabled === true && !a.payment_method_id) {
      throw new ApiError(
        'payment_method_required',
        'Auto-recharge needs a saved card: add one with POST /v1/billing/payment-method first.',
      );
    }
    const change: AccountPatch = {};
    if (p.enabled !== undefined) change.recharge_enabled = p.enabled;
    if (turningOn) change.recharge_failure = null;
    if (p.threshold_usd !== undefined) change.recharge_threshold_micros = threshold;
    if (p.top_ups !== undefined) change.recharge_top_ups = p.top_ups;
    if (p.monthly_limit !== undefined) change.recharge_monthly_limit = p.monthly_limit;
    return change;
  });
  return view ?? getBilling(deps, ctx.workspaceId);
}
