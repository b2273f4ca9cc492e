// Settings → Billing (docs/app.md "Billing"; docs/billing.md): the plan and its seats with Upgrade
// and the payment provider's customer portal, the AI balance (this month's allowance, purchased
// credit, used, what is left) with "Buy AI credit" and "Save a card", auto-recharge with its last
// recharge and failure, and the AI usage report (a chart by day with its table, tables by feature,
// member and model). Owners and admins see it all; other members the plan only. A self-hosted
// instance (billing_enabled false) has no plan to buy and unlimited AI: the page says so and shows
// the usage report. Every payment leaves the app for the provider's page and comes back with
// ?checkout=, ?top_up= or ?payment_method=; what that return says is only that the payment was
// received: the balance and the plan change when the provider confirms it (its webhook), which
// the page waits for by fetching again for a while.
import { type FormEvent, useState } from 'react';
import {
  type AutoRecharge,
  type Billing,
  type Checkout,
  checkoutUrl,
  money,
  type UsageReport,
  usd,
  useBilling,
  useBillingUsage,
  useSaveAutoRecharge,
} from '../../data/billing';
import { ApiError, errorText } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { when } from '../../lib/format';
import { isAdmin, useRole } from '../../lib/role';
import { CheckboxField, fieldError, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import type { SectionProps } from './section';
import './ai.css';
import './billing.css';

const PLAN: Record<Billing['plan'], string> = { free: 'Free', pro: 'Pro', self_hosted: 'Self-hosted' };
const STATUS: Record<string, string> = {
  none: 'No subscription',
  trialing: 'Trial',
  active: 'Active',
  past_due: 'Payment past due',
  unpaid: 'Unpaid',
  canceled: 'Canceled',
  incomplete: 'Waiting for the first payment',
  incomplete_expired: 'First payment not made',
  paused: 'Paused',
};
const FEATURE: Record<string, string> = {
  draft_reply: 'Reply drafts',
  rewrite: 'Rewrites',
  summarize: 'Summaries',
  translate: 'Translations',
  triage: 'Triage',
  decide: 'Automation decisions',
  copilot: 'Copilot',
  answer: 'Chat widget answers',
  kb_draft: 'Article drafts',
  embedding: 'Search (embeddings)',
};
const plural = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;
const featureName = (f: string) => FEATURE[f] ?? f.replace(/_/g, ' ');

type Return = { param: 'checkout' | 'top_up' | 'payment_method'; value: string };

/** The return from the provider's page (?checkout=, ?top_up=, ?payment_method=), if this is one. */
function returnOf(search: string): Return | null {
  const q = new URLSearchParams(search);
  for (const param of ['checkout', 'top_up', 'payment_method'] as const) {
    const value = q.get(param);
    if (value) return { param, value };
  }
  return null;
}

const THING: Record<Return['param'], string> = {
  checkout: 'the subscription',
  top_up: 'the AI credit',
  payment_method: 'the card',
};

/**
 * What the return says. A success is not the payment's confirmation (the provider's webhook is):
 * it says what will change once the provider confirms it, and, for the subscription, that it did
 * once the plan is pro.
 */
function returnNotice(r: Return, b: Billing | undefined): string {
  if (r.value === 'canceled') {
    return r.param === 'payment_method'
      ? 'Checkout canceled: no card was saved.'
      : `Checkout canceled: nothing was charged for ${THING[r.param]}.`;
  }
  if (r.value !== 'success') return `Back from checkout for ${THING[r.param]} (${r.value}).`;
  if (r.param === 'checkout') {
    return b?.plan === 'pro'
      ? 'Stripe confirmed the subscription: the workspace is on Pro.'
      : 'Subscription paid; the plan changes to Pro here once Stripe confirms it.';
  }
  if (r.param === 'top_up') return 'Payment received; the AI credit shows here once Stripe confirms it.';
  return 'Card received; auto-recharge can use it once Stripe confirms it.';
}

/** A subscription exists at the provider (a new checkout would be a second: 409). */
const hasSubscription = (b: Billing) => !['none', 'canceled', 'incomplete_expired'].includes(b.status);

export default function BillingSection(_: SectionProps) {
  const ws = useWorkspace();
  const role = useRole();
  const admin = isAdmin(role);
  const [back] = useState(() => returnOf(globalThis.location?.search ?? ''));
  // After a paid return, fetch again every few seconds for two minutes (the webhook may come
  // later), until the subscription shows as confirmed.
  const [pollUntil] = useState(() => (back?.value === 'success' ? Date.now() + 120_000 : 0));
  const billing = useBilling(ws, (q) =>
    Date.now() < pollUntil && !(back?.param === 'checkout' && q.state.data?.plan === 'pro') ? 3000 : false,
  );
  const b = billing.data;
  return (
    <>
      <PageTitle>Billing</PageTitle>
      <p className="billing-return" role="status">
        {back ? returnNotice(back, b) : null}
      </p>
      {billing.error ? <ErrorNote error={billing.error} what="Could not load billing" /> : null}
      {!b ? (
        !billing.error && <Loading />
      ) : (
        <>
          {!b.billing_enabled && (
            <p className="hint">
              This instance is self-hosted: there is no plan to buy, and AI is unlimited (paid to your own AI provider).
            </p>
          )}
          <Plan b={b} admin={admin} />
          {!admin && role !== null && (
            <p className="hint">Owners and admins see the AI balance and usage, and manage billing.</p>
          )}
          {admin && b.billing_enabled && <Balance b={b} />}
          {admin && b.billing_enabled && b.auto_recharge && <AutoRechargeForm ar={b.auto_recharge} />}
          {admin && <Usage />}
        </>
      )}
    </>
  );
}

/** Sends the browser to one of the provider's pages; the failure, if any, as an alert. */
function useGo() {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const go = async (name: string, c: Checkout) => {
    setBusy(name);
    setError(null);
    try {
      const { url } = await checkoutUrl(c);
      globalThis.location.assign(url);
    } catch (err) {
      setError(err);
      setBusy(null);
    }
  };
  return { busy, error, go };
}

function Plan({ b, admin }: { b: Billing; admin: boolean }) {
  const { busy, error, go } = useGo();
  const month = b.prices.pro_month;
  const year = b.prices.pro_year;
  const subscribed = hasSubscription(b);
  return (
    <section className="ai-box" aria-labelledby="billing-plan-title">
      <h2 id="billing-plan-title">Plan</h2>
      <dl className="ai-status">
        <div>
          <dt>Plan</dt>
          <dd>{PLAN[b.plan]}</dd>
        </div>
        {b.billing_enabled && (
          <>
            <div>
              <dt>Status</dt>
              <dd>{STATUS[b.status] ?? b.status}</dd>
            </div>
            {b.interval && (
              <div>
                <dt>Billed</dt>
                <dd>{b.interval === 'year' ? 'Yearly' : 'Monthly'}</dd>
              </div>
            )}
            <div>
              <dt>Seats</dt>
              <dd>
                {b.plan === 'pro' ? `${b.seats} billed` : 'None billed'} · {plural(b.billed_seats, 'member')} who count
                (owners, admins and agents; viewers are free)
              </dd>
            </div>
            {b.current_period_end && (
              <div>
                <dt>{b.cancel_at_period_end ? 'Ends' : 'Renews'}</dt>
                <dd>
                  <time dateTime={b.current_period_end}>{when(b.current_period_end)}</time>
                  {b.cancel_at_period_end ? ' (canceled: it ends then, and the workspace goes back to free)' : ''}
                </dd>
              </div>
            )}
            <div>
              <dt>Limits</dt>
              <dd>
                {b.limits.max_members ? `${b.usage.members} of ${b.limits.max_members} members` : 'Members unlimited'}
                {' · '}
                {b.limits.max_mailboxes
                  ? `${b.usage.mailboxes} of ${b.limits.max_mailboxes} mailboxes`
                  : 'Mailboxes unlimited'}
              </dd>
            </div>
          </>
        )}
      </dl>
      {b.billing_enabled && b.status === 'past_due' && (
        <p className="hint">
          The last payment failed and Stripe is retrying it: the workspace stays on Pro meanwhile. Update the card in
          Manage subscription to keep it.
        </p>
      )}
      {b.billing_enabled && b.plan === 'free' && subscribed && (
        <p className="hint">
          The subscription is {(STATUS[b.status] ?? b.status).toLowerCase()}: the workspace has the free plan's limits
          until it is paid in Manage subscription.
        </p>
      )}
      {admin && b.billing_enabled && (
        <div className="billing-actions">
          {!subscribed && month && (
            <button
              type="button"
              className="primary"
              disabled={busy !== null}
              onClick={() => void go('month', { kind: 'plan', interval: 'month' })}
            >
              {busy === 'month' ? 'Opening checkout…' : 'Upgrade'} to Pro monthly (
              {money(month.unit_amount, month.currency)} a seat a month)
            </button>
          )}
          {!subscribed && year && (
            <button
              type="button"
              disabled={busy !== null}
              onClick={() => void go('year', { kind: 'plan', interval: 'year' })}
            >
              {busy === 'year' ? 'Opening checkout…' : 'Upgrade'} to Pro yearly (
              {money(year.unit_amount, year.currency)} a seat a year)
            </button>
          )}
          {(subscribed || b.plan === 'pro') && (
            <button type="button" disabled={busy !== null} onClick={() => void go('portal', { kind: 'portal' })}>
              {busy === 'portal' ? 'Opening…' : 'Manage subscription'}
            </button>
          )}
        </div>
      )}
      {error ? (
        <p className="error" role="alert">
          Could not open the payment page: {errorText(error)}
        </p>
      ) : null}
    </section>
  );
}

function Balance({ b }: { b: Billing }) {
  const { busy, error, go } = useGo();
  const [topUps, setTopUps] = useState('1');
  const each = b.prices.ai_top_up?.usd ?? 10;
  const n = Number(topUps);
  const valid = Number.isInteger(n) && n >= 1 && n <= 20;
  const buy = (e: FormEvent) => {
    e.preventDefault();
    if (valid) void go('top-up', { kind: 'top-up', top_ups: n });
  };
  const ai = b.ai;
  return (
    <section className="ai-box" aria-labelledby="billing-ai-title">
      <h2 id="billing-ai-title">AI balance</h2>
      <dl className="ai-status">
        <div>
          <dt>Allowance this month</dt>
          <dd>{usd(ai.monthly_usd)}</dd>
        </div>
        <div>
          <dt>Purchased</dt>
          <dd>{usd(ai.purchased_usd)} (never expires)</dd>
        </div>
        <div>
          <dt>Used this month</dt>
          <dd>{usd(ai.used_usd)}</dd>
        </div>
        <div>
          <dt>Remaining</dt>
          <dd className={ai.remaining_usd !== null && ai.remaining_usd < 0.01 ? 'ai-off' : undefined}>
            {ai.remaining_usd === null ? 'Unlimited' : usd(ai.remaining_usd)}
          </dd>
        </div>
        <div>
          <dt>Allowance renews</dt>
          <dd>
            <time dateTime={ai.period_end}>{when(ai.period_end)}</time>
          </dd>
        </div>
      </dl>
      <form className="billing-buy" onSubmit={buy} noValidate>
        <TextField
          label={`AI credit to buy (top-ups of ${usd(each)})`}
          type="number"
          min={1}
          max={20}
          step={1}
          value={topUps}
          onChange={(e) => setTopUps(e.target.value)}
          hint={valid ? `${usd(n * each)}; 1 to 20 top-ups.` : '1 to 20 top-ups.'}
          error={valid ? undefined : 'Choose 1 to 20 top-ups.'}
        />
        <div className="billing-actions">
          <button type="submit" className="primary" disabled={busy !== null || !valid}>
            {busy === 'top-up' ? 'Opening checkout…' : 'Buy AI credit'}
          </button>
          <button type="button" disabled={busy !== null} onClick={() => void go('card', { kind: 'card' })}>
            {busy === 'card' ? 'Opening…' : 'Save a card'}
          </button>
        </div>
        <p className="hint">A saved card pays for auto-recharge.</p>
      </form>
      {error ? (
        <p className="error" role="alert">
          Could not open the payment page: {errorText(error)}
        </p>
      ) : null}
    </section>
  );
}

const FAILURE: Record<string, string> = {
  card_declined: 'the card was declined',
  authentication_required: 'the bank asked for authentication (pay a top-up by hand once)',
  no_payment_method: 'no saved card',
  payment_failed: 'the payment failed',
  unavailable: 'the payment provider did not answer',
};

function AutoRechargeForm({ ar }: { ar: AutoRecharge }) {
  const ws = useWorkspace();
  const save = useSaveAutoRecharge(ws);
  const [enabled, setEnabled] = useState(ar.enabled);
  const [threshold, setThreshold] = useState(String(ar.threshold_usd));
  const [topUps, setTopUps] = useState(String(ar.top_ups));
  const [limit, setLimit] = useState(String(ar.monthly_limit));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(null);
    try {
      const next = await save.mutateAsync({
        enabled,
        threshold_usd: Number(threshold),
        top_ups: Number(topUps),
        monthly_limit: Number(limit),
      });
      if (next.auto_recharge) setEnabled(next.auto_recharge.enabled);
      setSaved('Saved.');
    } catch (err) {
      setError(err);
    }
  };
  const at = (name: string) => fieldError(error, name);
  const atField = at('threshold_usd') ?? at('top_ups') ?? at('monthly_limit') ?? at('enabled');
  const noCard = error instanceof ApiError && error.code === 'payment_method_required';
  return (
    <form className="ai-box" onSubmit={(e) => void submit(e)} aria-labelledby="billing-recharge-title" noValidate>
      <h2 id="billing-recharge-title">Auto-recharge</h2>
      <p className="hint">
        When a charged AI call leaves the balance under the threshold, the saved card pays for the top-ups chosen, at
        most the monthly limit of times a month. A failed payment turns it off.
      </p>
      <fieldset className="ai-fields">
        <CheckboxField
          label="Recharge automatically"
          checked={enabled}
          onChange={(e) => setEnabled(e.target.checked)}
        />
        <TextField
          label="When the balance is under (dollars)"
          type="number"
          min={0.01}
          max={1000}
          step={0.01}
          value={threshold}
          onChange={(e) => setThreshold(e.target.value)}
          hint="0.01 to 1,000."
          error={at('threshold_usd')}
        />
        <TextField
          label="Top-ups to buy each time"
          type="number"
          min={1}
          max={20}
          step={1}
          value={topUps}
          onChange={(e) => setTopUps(e.target.value)}
          hint="1 to 20, 10 dollars each."
          error={at('top_ups')}
        />
        <TextField
          label="At most, recharges a month"
          type="number"
          min={1}
          max={30}
          step={1}
          value={limit}
          onChange={(e) => setLimit(e.target.value)}
          hint={`1 to 30; ${ar.recharges_this_month} this month so far.`}
          error={at('monthly_limit')}
        />
      </fieldset>
      <dl className="ai-status">
        <div>
          <dt>Last recharge</dt>
          <dd>
            {ar.last_recharge ? (
              <>
                {usd(ar.last_recharge.usd)} ({money(ar.last_recharge.amount, ar.last_recharge.currency)} charged),{' '}
                <time dateTime={ar.last_recharge.at}>{when(ar.last_recharge.at)}</time>
              </>
            ) : (
              'None yet'
            )}
          </dd>
        </div>
        {ar.failure && (
          <div>
            <dt>Last failure</dt>
            <dd className="ai-off">
              Turned off: {FAILURE[ar.failure.code] ?? ar.failure.code},{' '}
              <time dateTime={ar.failure.at}>{when(ar.failure.at)}</time>
            </dd>
          </div>
        )}
      </dl>
      <button type="submit" className="primary" disabled={save.isPending}>
        {save.isPending ? 'Saving…' : 'Save'}
      </button>
      {error && !atField ? (
        <p className="error" role="alert">
          {noCard
            ? 'Save a card first: auto-recharge pays with it.'
            : `Could not save auto-recharge: ${errorText(error)}`}
        </p>
      ) : null}
      <p className="sent" role="status">
        {saved}
      </p>
    </form>
  );
}

function Usage() {
  const ws = useWorkspace();
  const usage = useBillingUsage(ws);
  const u = usage.data;
  return (
    <section className="ai-box billing-usage" aria-labelledby="billing-usage-title">
      <h2 id="billing-usage-title">AI usage this month</h2>
      {usage.error ? <ErrorNote error={usage.error} what="Could not load the usage report" /> : null}
      {!u ? !usage.error && <Loading /> : <UsageReportView u={u} />}
    </section>
  );
}

function UsageReportView({ u }: { u: UsageReport }) {
  if (u.total_calls === 0) return <p>No AI calls this month yet.</p>;
  const max = Math.max(...u.by_day.map((d) => d.usd), 0.0001);
  return (
    <>
      <p>
        {usd(u.total_usd)} over {plural(u.total_calls, 'call')}
        {u.own_key_calls > 0 ? `, of which ${u.own_key_calls.toLocaleString('en')} on the workspace's own key` : ''}.
      </p>
      <figure className="billing-chart">
        <figcaption id="billing-chart-caption">Cost by day (the table below says the same)</figcaption>
        <div className="billing-bars" aria-hidden="true">
          {u.by_day.map((d) => (
            <div key={d.date} className="billing-bar" title={`${d.date}: ${usd(d.usd)}`}>
              <span style={{ height: `${Math.max(2, Math.round((d.usd / max) * 100))}%` }} />
              <small>{d.date.slice(8)}</small>
            </div>
          ))}
        </div>
      </figure>
      <table>
        <caption>By day</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Cost</th>
            <th scope="col">Calls</th>
          </tr>
        </thead>
        <tbody>
          {u.by_day.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              <td>{usd(d.usd)}</td>
              <td>{d.calls}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table>
        <caption>By feature</caption>
        <thead>
          <tr>
            <th scope="col">Feature</th>
            <th scope="col">Cost</th>
            <th scope="col">Calls</th>
          </tr>
        </thead>
        <tbody>
          {u.by_feature.map((f) => (
            <tr key={f.feature}>
              <th scope="row">{featureName(f.feature)}</th>
              <td>{usd(f.usd)}</td>
              <td>{f.calls}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table>
        <caption>By member</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Cost</th>
            <th scope="col">Calls</th>
          </tr>
        </thead>
        <tbody>
          {u.by_member.map((m) => (
            <tr key={m.user?.id ?? 'none'}>
              <th scope="row">{m.user?.name ?? 'No member (automatic)'}</th>
              <td>{usd(m.usd)}</td>
              <td>{m.calls}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table>
        <caption>By model</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Paid by</th>
            <th scope="col">Cost</th>
            <th scope="col">Calls</th>
            <th scope="col">Tokens in / out</th>
          </tr>
        </thead>
        <tbody>
          {u.by_model.map((m) => (
            <tr key={`${m.model}-${m.source}`}>
              <th scope="row">{m.model}</th>
              <td>{m.source === 'own_key' ? "The workspace's own key" : 'This service'}</td>
              <td>{usd(m.usd)}</td>
              <td>{m.calls}</td>
              <td>
                {m.input_tokens.toLocaleString('en')} / {m.output_tokens.toLocaleString('en')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
