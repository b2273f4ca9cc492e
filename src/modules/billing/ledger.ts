// The AI balance of the hosted offering (docs/billing.md "The ledger"). Every change is an entry
// of ai_ledger (append only); billing_accounts keeps what the entries add up to (allowance granted
// and spent this month, purchased left), changed only together with an entry and under the
// account's row lock, so concurrent calls and payments see each other:
//   - grant: a UTC month's allowance (0.50 on free, 10 per paid seat on pro), written by the first
//     thing that touches the account in the month, after the expiry of last month's unspent part;
//   - top_up: a payment, credited once per payment_ref (a unique index), whatever announces it;
//   - charge: a call's real cost (list price × 1.5), allowance first, then purchased, never more
//     than what is left (a call that costs more takes the balance to 0).
// A call first reserves its estimate (ai_reservations): the balance minus what calls under way
// hold must cover it, else 402 ai_balance_empty. Its settlement deletes the reservation and
// charges the real cost, so concurrent calls overspend by at most one call's cost above the estimate.

import type { Selectable } from 'kysely';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { BillingAccountsTable } from '../../platform/db/tables-billing.js';
import type { Unit } from '../../platform/db/tx.js';
import { ApiError } from '../../platform/http/errors.js';

export const MICROS = 1_000_000;
/** interface.md Billing rule 4: the hosted offering charges the provider's list price × 1.5. */
export const MARKUP = 1.5;
/** Rule 5: the free plan's monthly allowance, and the paid plan's per seat. */
export const FREE_ALLOWANCE_MICROS = 500_000;
export const SEAT_ALLOWANCE_MICROS = 10 * MICROS;
/** One top-up adds 10 dollars (interface.md Limits "AI pricing"). */
export const TOP_UP_USD = 10;
/** ai_balance_out: the balance fell below 0.01. */
export const OUT_BELOW_MICROS = 10_000;
/** A reservation left by a process that died stops counting after this long. */
export const RESERVATION_TTL_MINUTES = 15;

export type AccountRow = Selectable<BillingAccountsTable>;

export const toMicros = (usd: number): number => Math.round(usd * MICROS);
export const toUsd = (micros: number | string): number => Number(micros) / MICROS;

/** The UTC month of a time, YYYY-MM. */
export const monthOf = (d: Date = new Date()): string => d.toISOString().slice(0, 7);

/** The start of the UTC month after `d` (period_end of the allowance). */
export function nextMonthStart(d: Date = new Date()): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** A month's allowance for the plan: 0.50 on free, 10 per paid seat (at least one) on pro. */
export function allowanceFor(plan: string, seats: number): number {
  return plan === 'pro' ? SEAT_ALLOWANCE_MICROS * Math.max(1, seats) : FREE_ALLOWANCE_MICROS;
}

export interface Balance {
  allowance: number;
  allowanceLeft: number;
  purchased: number;
  /** allowance left + purchased, micro-dollars. */
  total: number;
}

export function balanceOf(a: AccountRow): Balance {
  const allowance = Number(a.allowance_micros);
  const allowanceLeft = Math.max(0, allowance - Number(a.allowance_spent_micros));
  const purchased = Number(a.purchased_micros);
  return { allowance, allowanceLeft, purchased, total: allowanceLeft + purchased };
}

/** The account row, created (plan free, status none) when the workspace has none yet. */
export async function ensureAccount(db: Kysely<DB>, workspaceId: string): Promise<void> {
  await db
    .insertInto('billing_accounts')
    .values({ workspace_id: workspaceId, allowance_micros: 0, allowance_spent_micros: 0, purchased_micros: 0 })
    .onConflict((oc) => oc.column('workspace_id').doNothing())
    .execute();
}

/**
 * The account under its row lock, in the month of now: when the allowance is of an earlier month
 * (or none), the unspent part expires (an `expire` entry) and this month's is granted (`grant`).
 */
export async function lockAccount(trx: Transaction<DB>, workspaceId: string, now = new Date()): Promise<AccountRow> {
  await ensureAccount(trx, workspaceId);
  const row = await trx
    .selectFrom('billing_accounts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const month = monthOf(now);
  if (row.allowance_month === month) return row;
  const left = balanceOf(row).allowanceLeft;
  if (row.allowance_month && left > 0) {
    await entry(trx, workspaceId, { kind: 'expire', allowance_micros: -left, month: row.allowance_month });
  }
  const grant = allowanceFor(row.plan, row.seats);
  await entry(trx, workspaceId, { kind: 'grant', allowance_micros: grant, month });
  return trx
    .updateTable('billing_accounts')
    .set({ allowance_month: month, allowance_micros: grant, allowance_spent_micros: 0 })
    .where('workspace_id', '=', workspaceId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * After a change of plan or seats: this month's allowance becomes the new plan's when that is
 * more (a grant of the difference; what was spent stays spent). A smaller allowance (a downgrade)
 * applies from next month.
 */
export async function regrant(trx: Transaction<DB>, workspaceId: string): Promise<AccountRow> {
  const row = await lockAccount(trx, workspaceId);
  const more = allowanceFor(row.plan, row.seats) - Number(row.allowance_micros);
  if (more <= 0) return row;
  await entry(trx, workspaceId, { kind: 'grant', allowance_micros: more, month: row.allowance_month });
  return trx
    .updateTable('billing_accounts')
    .set({ allowance_micros: Number(row.allowance_micros) + more })
    .where('workspace_id', '=', workspaceId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function entry(
  trx: Transaction<DB>,
  workspaceId: string,
  e: {
    kind: 'grant' | 'expire' | 'top_up' | 'charge';
    allowance_micros?: number;
    purchased_micros?: number;
    month?: string | null;
    top_ups?: number;
    payment_ref?: string;
    usage_id?: string | null;
  },
): Promise<boolean> {
  const r = await trx
    .insertInto('ai_ledger')
    .values({
      workspace_id: workspaceId,
      id: newId(),
      kind: e.kind,
      allowance_micros: e.allowance_micros ?? 0,
      purchased_micros: e.purchased_micros ?? 0,
      month: e.month ?? null,
      top_ups: e.top_ups ?? null,
      payment_ref: e.payment_ref ?? null,
      usage_id: e.usage_id ?? null,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'payment_ref']).where('payment_ref', 'is not', null).doNothing())
    .returning('id')
    .executeTakeFirst();
  return r !== undefined;
}

/** What calls under way hold (reservations younger than the TTL), micro-dollars. */
async function heldMicros(trx: Transaction<DB>, workspaceId: string): Promise<number> {
  const r = await trx
    .selectFrom('ai_reservations')
    .select(sql<string | number | null>`sum(micros)`.as('held'))
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>', sql<Date>`now() - make_interval(mins => ${RESERVATION_TTL_MINUTES})`)
    .executeTakeFirst();
  return Number(r?.held ?? 0);
}

export interface Reservation {
  workspaceId: string;
  id: string;
  micros: number;
}

/**
 * Holds `estimateUsd` of the balance for a call about to start; 402 ai_balance_empty when the
 * balance, less what calls under way hold, does not cover it (nothing is stored then).
 */
export async function reserve(deps: Deps, workspaceId: string, estimateUsd: number): Promise<Reservation> {
  const micros = Math.max(0, toMicros(estimateUsd));
  return deps.database.db.transaction().execute(async (trx) => {
    const row = await lockAccount(trx, workspaceId);
    const free = balanceOf(row).total - (await heldMicros(trx, workspaceId));
    if (free < micros || free <= 0) {
      throw new ApiError(
        'ai_balance_empty',
        `The workspace's AI balance (${(Math.max(0, free) / MICROS).toFixed(2)} USD available) does not cover this call ` +
          `(estimated ${(micros / MICROS).toFixed(2)} USD). An owner or admin can buy a top-up in Settings → Billing.`,
      );
    }
    const id = newId();
    await trx.insertInto('ai_reservations').values({ workspace_id: workspaceId, id, micros }).execute();
    return { workspaceId, id, micros };
  });
}

/** What a settlement did: the charge, and the balance it left (micro-dollars). */
export interface Settled {
  charged: number;
  remaining: number;
  account: AccountRow;
}

/**
 * Ends a call's reservation and charges its real cost (0 for a failed call: nothing), allowance
 * first, at most what is left. In the unit's transaction (the caller emits and notifies there).
 */
export async function settleIn(u: Unit, r: Reservation, costUsd: number, usageId: string | null): Promise<Settled> {
  const row = await lockAccount(u.trx, r.workspaceId);
  await u.trx.deleteFrom('ai_reservations').where('workspace_id', '=', r.workspaceId).where('id', '=', r.id).execute();
  const b = balanceOf(row);
  const charged = Math.min(Math.max(0, toMicros(costUsd)), b.total);
  if (charged <= 0) return { charged: 0, remaining: b.total, account: row };
  const fromAllowance = Math.min(charged, b.allowanceLeft);
  const fromPurchased = charged - fromAllowance;
  await entry(u.trx, r.workspaceId, {
    kind: 'charge',
    allowance_micros: -fromAllowance,
    purchased_micros: -fromPurchased,
    month: row.allowance_month,
    usage_id: usageId,
  });
  const account = await u.trx
    .updateTable('billing_accounts')
    .set({
      allowance_spent_micros: Number(row.allowance_spent_micros) + fromAllowance,
      purchased_micros: b.purchased - fromPurchased,
      updated_at: new Date(),
    })
    .where('workspace_id', '=', r.workspaceId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { charged, remaining: b.total - charged, account };
}

/** Credits purchased top-ups in the unit's transaction; false when payment_ref was credited before. */
export async function creditIn(
  u: Unit,
  workspaceId: string,
  p: { top_ups: number; usd: number; payment_ref: string },
): Promise<AccountRow | null> {
  const row = await lockAccount(u.trx, workspaceId);
  const micros = toMicros(p.usd);
  const fresh = await entry(u.trx, workspaceId, {
    kind: 'top_up',
    purchased_micros: micros,
    top_ups: p.top_ups,
    payment_ref: p.payment_ref,
  });
  if (!fresh) return null;
  return (
    u.trx
      .updateTable('billing_accounts')
      // Any top-up or recharge resets both notices (rule 7).
      .set({
        purchased_micros: Number(row.purchased_micros) + micros,
        low_notice_month: null,
        out_notice_month: null,
        updated_at: new Date(),
      })
      .where('workspace_id', '=', workspaceId)
      .returningAll()
      .executeTakeFirstOrThrow()
  );
}

/** What was charged in the account's current month (both parts), micro-dollars. */
export async function spentThisMonth(db: Kysely<DB>, workspaceId: string, month: string): Promise<number> {
  const r = await db
    .selectFrom('ai_ledger')
    .select(sql<string | number | null>`-sum(allowance_micros + purchased_micros)`.as('spent'))
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'charge')
    .where('month', '=', month)
    .executeTakeFirst();
  return Number(r?.spent ?? 0);
}
