// The billing core's side of ports.ts, over src/modules/billing (its account row, ledger and
// Billing object): what the webhook and the recharge change, each inside the caller's unit, under
// the account's lock, with billing.updated.
import type { Deps } from '../../../deps.js';
import type { Unit } from '../../../platform/db/tx.js';
import { escapeHtml } from '../../../platform/html/index.js';
import { systemMailer } from '../../../platform/mail/index.js';
import { notify } from '../../notifications/service.js';
import { balanceOf, creditIn, lockAccount, MICROS, monthOf, regrant, toUsd } from '../ledger.js';
import { emitUpdated } from '../service.js';
import { TOP_UP_USD } from './client.js';
import type { BillingCore } from './ports.js';

const SEAT_ROLES = ['owner', 'admin', 'agent'] as const;

async function admins(unit: Unit) {
  return unit.trx
    .selectFrom('members as m')
    .innerJoin('users as us', 'us.id', 'm.user_id')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['m.user_id', 'm.role', 'us.email', 'us.name', 'w.name as workspace'])
    .where('m.workspace_id', '=', unit.workspaceId)
    .where('m.role', 'in', ['owner', 'admin'])
    .orderBy('m.role', 'desc')
    .execute();
}

/** The auto_recharge_failed email to an owner or admin (sent, or kept in the outbox without SMTP_URL). */
async function failureMail(deps: Deps, workspaceId: string, to: string, workspace: string, code: string) {
  const url = `${deps.config.publicUrl.replace(/\/$/, '')}/settings/billing`;
  const why: Record<string, string> = {
    card_declined: 'the card was declined',
    authentication_required: 'the bank asks the cardholder to confirm the payment',
    no_payment_method: 'no card is saved',
    unavailable: 'the payment provider could not be reached',
    payment_failed: 'the payment failed',
  };
  const reason = why[code] ?? 'the payment failed';
  const text = [
    `Auto-recharge of the AI balance of ${workspace} failed: ${reason} (${code}).`,
    '',
    'Auto-recharge is now off. Buy a top-up, or update the card and turn auto-recharge on again:',
    url,
  ].join('\n');
  const html = [
    `<p>Auto-recharge of the AI balance of <strong>${escapeHtml(workspace)}</strong> failed: ${escapeHtml(reason)} (${escapeHtml(code)}).</p>`,
    `<p>Auto-recharge is now off. <a href="${escapeHtml(url)}">Buy a top-up, or update the card and turn auto-recharge on again</a>.</p>`,
  ].join('\n');
  try {
    await systemMailer(deps).send(
      { to, subject: `Auto-recharge failed for ${workspace}`, text, html },
      { workspaceId, kind: 'notice' },
    );
  } catch (err) {
    deps.log.warn(
      { workspace_id: workspaceId, err: err instanceof Error ? err.message : String(err) },
      'auto-recharge failure email not sent',
    );
  }
}

export function accountCore(deps: Deps): BillingCore {
  return {
    async account(unit) {
      const a = await lockAccount(unit.trx, unit.workspaceId);
      const seats = await unit.trx
        .selectFrom('members')
        .select((e) => e.fn.countAll<string | number>().as('n'))
        .where('workspace_id', '=', unit.workspaceId)
        .where('role', 'in', SEAT_ROLES)
        .executeTakeFirst();
      const people = await admins(unit);
      const owner = people.find((p) => p.role === 'owner') ?? people[0];
      const ws = await unit.trx
        .selectFrom('workspaces')
        .select('name')
        .where('id', '=', unit.workspaceId)
        .executeTakeFirstOrThrow();
      return {
        customerId: a.stripe_customer_id,
        subscriptionId: a.stripe_subscription_id,
        billedSeats: Number(seats?.n ?? 0),
        name: ws.name,
        email: owner?.email ?? null,
      };
    },

    async setCustomer(unit, customerId) {
      await lockAccount(unit.trx, unit.workspaceId);
      await unit.trx
        .updateTable('billing_accounts')
        .set({ stripe_customer_id: customerId, updated_at: new Date() })
        .where('workspace_id', '=', unit.workspaceId)
        .where('stripe_customer_id', 'is', null)
        .execute();
    },

    async creditTopUp(unit, credit) {
      let a = await creditIn(unit, unit.workspaceId, {
        top_ups: credit.topUps,
        usd: credit.usd,
        payment_ref: credit.paymentIntentId,
      });
      if (!a) return;
      if (credit.source === 'recharge') {
        const month = monthOf();
        a = await unit.trx
          .updateTable('billing_accounts')
          .set({
            recharge_month: month,
            recharges_this_month: a.recharge_month === month ? a.recharges_this_month + 1 : 1,
            last_recharge: JSON.stringify({
              at: new Date().toISOString(),
              top_ups: credit.topUps,
              usd: credit.topUps * TOP_UP_USD,
              amount: credit.amount ?? 0,
              currency: credit.currency ?? 'usd',
            }),
          })
          .where('workspace_id', '=', unit.workspaceId)
          .returningAll()
          .executeTakeFirstOrThrow();
      }
      await emitUpdated(deps, unit, a);
    },

    async applySubscription(unit, s) {
      await lockAccount(unit.trx, unit.workspaceId);
      const ended = s.subscriptionId === null;
      await unit.trx
        .updateTable('billing_accounts')
        .set({
          plan: s.plan,
          status: s.status as never,
          // A subscription that still exists (unpaid, incomplete, paused: plan free) keeps what it
          // bills, so the page says what the customer portal would bring back.
          interval: ended ? null : s.interval,
          seats: ended ? 0 : s.seats,
          current_period_end: ended ? null : s.currentPeriodEnd,
          cancel_at_period_end: ended ? false : s.cancelAtPeriodEnd,
          stripe_subscription_id: s.subscriptionId,
          ...(s.customerId ? { stripe_customer_id: s.customerId } : {}),
          updated_at: new Date(),
        })
        .where('workspace_id', '=', unit.workspaceId)
        .execute();
      await emitUpdated(deps, unit, await regrant(unit.trx, unit.workspaceId));
    },

    async savePaymentMethod(unit, card) {
      await lockAccount(unit.trx, unit.workspaceId);
      const a = await unit.trx
        .updateTable('billing_accounts')
        .set({ stripe_customer_id: card.customerId, payment_method_id: card.paymentMethodId, updated_at: new Date() })
        .where('workspace_id', '=', unit.workspaceId)
        .returningAll()
        .executeTakeFirstOrThrow();
      await emitUpdated(deps, unit, a);
    },

    async rechargeState(unit) {
      const a = await lockAccount(unit.trx, unit.workspaceId);
      return {
        enabled: a.recharge_enabled,
        thresholdUsd: toUsd(a.recharge_threshold_micros),
        topUps: a.recharge_top_ups,
        monthlyLimit: a.recharge_monthly_limit,
        balanceUsd: balanceOf(a).total / MICROS,
        customerId: a.stripe_customer_id,
        paymentMethodId: a.payment_method_id,
      };
    },

    async rechargeFailed(unit, failure) {
      await lockAccount(unit.trx, unit.workspaceId);
      const a = await unit.trx
        .updateTable('billing_accounts')
        .set({
          recharge_enabled: false,
          recharge_failure: JSON.stringify({ code: failure.code, at: failure.at.toISOString() }),
          updated_at: new Date(),
        })
        .where('workspace_id', '=', unit.workspaceId)
        .returningAll()
        .executeTakeFirstOrThrow();
      const people = await admins(unit);
      for (const p of people) {
        await notify(unit, {
          userId: p.user_id,
          type: 'auto_recharge_failed',
          ticket: null,
          data: { reason: failure.code },
        });
      }
      unit.afterCommit(async () => {
        for (const p of people) await failureMail(deps, unit.workspaceId, p.email, p.workspace, failure.code);
      });
      await emitUpdated(deps, unit, a);
    },
  };
}
