// The billing routes (interface.md "Billing (hosted offering only)"): off by default (self_hosted,
// 404 billing_disabled), the hosted offering's Billing object for a new workspace, who may do what
// (roles and API key scopes), 503 unavailable while no payment provider is registered, the
// auto-recharge settings and their bad input, a payment credited once per payment_ref, and the
// free plan's limits on mailboxes and members.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBillingProvider } from '../../../src/modules/billing/provider.js';
import { creditTopUp, updateAccount } from '../../../src/modules/billing/service.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  signUp,
  startService,
} from '../../support/helpers.js';

// The provider's API is never reached here: an unused loopback port.
const HOSTED = { STRIPE_SECRET_KEY: 'sk_test_billing_core', STRIPE_API_BASE: 'http://127.0.0.1:9' };

const OTHER_ROUTES: Array<[string, string, Record<string, unknown> | undefined]> = [
  ['post', '/v1/billing/checkout', { interval: 'month' }],
  ['post', '/v1/billing/portal', undefined],
  ['post', '/v1/billing/top-up/checkout', { top_ups: 1 }],
  ['post', '/v1/billing/payment-method', undefined],
  ['patch', '/v1/billing/auto-recharge', { threshold_usd: 3 }],
];

async function send(svc: Service, method: string, path: string, body: unknown, as: object) {
  return method === 'post' ? svc.api.post(path, body ?? {}, as) : svc.api.patch(path, body ?? {}, as);
}

describe('self-hosted (no STRIPE_SECRET_KEY)', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  it('shows plan self_hosted with no limits and unlimited AI; the usage report works', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.get('/v1/billing', t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      plan: 'self_hosted',
      billing_enabled: false,
      status: 'none',
      limits: { max_mailboxes: 0, max_members: 0 },
      usage: { members: 1, mailboxes: 0 },
      billed_seats: 1,
      ai: { unlimited: true, remaining_usd: null },
      prices: { pro_month: null, pro_year: null, ai_top_up: null },
      auto_recharge: null,
    });
    const u = await svc.api.get('/v1/billing/usage', t.as);
    expect(u.status, u.text).toBe(200);
    expect(u.body).toMatchObject({ total_usd: 0, total_calls: 0, by_day: [], own_key_calls: 0 });
  });

  it('answers 404 billing_disabled on every other billing route, the webhook included', async () => {
    const t = await newTenant(svc.api);
    for (const [method, path, body] of OTHER_ROUTES) {
      const r = await send(svc, method, path, body, t.as);
      expect(isErrorBody(r.body, 404, 'billing_disabled'), `${path}: ${r.text}`).toBe(true);
    }
    const hook = await svc.api.post(
      '/v1/billing/webhook',
      { id: 'evt_1' },
      { headers: { 'stripe-signature': 't=1,v1=x' } },
    );
    expect(isErrorBody(hook.body, 404, 'billing_disabled'), hook.text).toBe(true);
  });

  it('never limits mailboxes or members', async () => {
    const t = await newTenant(svc.api);
    for (const n of [1, 2]) {
      const r = await svc.api.post(
        '/v1/mailboxes',
        { name: `Box ${n}`, email: `box${n}-${Date.now()}@acme.test` },
        t.as,
      );
      expect(r.status, r.text).toBe(201);
    }
  });
});

describe('hosted offering (STRIPE_SECRET_KEY set)', () => {
  let svc: Service;
  beforeAll(async () => {
    registerBillingProvider(null);
    svc = await startService(HOSTED, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  it('puts a new workspace on the free plan with its limits, allowance and auto-recharge defaults', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.get('/v1/billing', t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      plan: 'free',
      billing_enabled: true,
      status: 'none',
      interval: null,
      seats: 0,
      billed_seats: 1,
      current_period_end: null,
      cancel_at_period_end: false,
      limits: { max_mailboxes: 1, max_members: 3 },
      usage: { mailboxes: 0, members: 1 },
      ai: { unlimited: false, monthly_usd: 0.5, used_usd: 0, purchased_usd: 0, remaining_usd: 0.5 },
      prices: { pro_month: null, pro_year: null, ai_top_up: null },
      auto_recharge: {
        enabled: false,
        threshold_usd: 2,
        top_ups: 1,
        monthly_limit: 5,
        recharges_this_month: 0,
        // The threshold, but at most a fifth of the 0.50 allowance.
        low_at_usd: 0.1,
        last_recharge: null,
        failure: null,
      },
    });
    const next = new Date(r.body.ai.period_end);
    expect(next.getUTCDate()).toBe(1);
    expect(next.getTime()).toBeGreaterThan(Date.now());
  });

  it('answers 503 unavailable on the provider routes while no payment provider is registered', async () => {
    const t = await newTenant(svc.api);
    for (const [method, path, body] of OTHER_ROUTES.filter(([m]) => m === 'post')) {
      const r = await send(svc, method, path, body, t.as);
      expect(isErrorBody(r.body, 503, 'unavailable'), `${path}: ${r.text}`).toBe(true);
    }
  });

  it('answers 503 unavailable on the webhook too while no provider is registered', async () => {
    const hook = await svc.api.post(
      '/v1/billing/webhook',
      { id: 'evt_1' },
      { headers: { 'stripe-signature': 't=1,v1=x' } },
    );
    expect(isErrorBody(hook.body, 503, 'unavailable'), hook.text).toBe(true);
  });

  it('publishes billing.updated when the billed seats change', async () => {
    const t = await newTenant(svc.api);
    const v = await addMember(svc, t, 'viewer');
    const since = await latestSeqOf(svc, t);
    const r = await svc.api.patch(`/v1/members/${v.userId}`, { role: 'agent' }, t.as);
    expect(r.status, r.text).toBe(200);
    const events = (await eventsAfterOf(svc, t, since)).filter((e) => e.type === 'billing.updated');
    expect(events.map((e) => e.data.billing.billed_seats)).toEqual([2]);
  });

  it('publishes billing.updated when a mailbox is created or deleted (usage.mailboxes)', async () => {
    const t = await newTenant(svc.api);
    const since = await latestSeqOf(svc, t);
    const box = await svc.api.post('/v1/mailboxes', { name: 'Support', email: `u-${Date.now()}@acme.test` }, t.as);
    expect(box.status, box.text).toBe(201);
    const gone = await svc.api.delete(`/v1/mailboxes/${box.body.id}`, t.as);
    expect(gone.status, gone.text).toBe(204);
    const events = (await eventsAfterOf(svc, t, since)).filter((e) => e.type === 'billing.updated');
    expect(events.map((e) => e.data.billing.usage.mailboxes)).toEqual([1, 0]);
  });

  it('lets members read billing, owners and admins change it; keys need the settings scopes', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const admin = await addMember(svc, t, 'admin');
    expect((await svc.api.get('/v1/billing', viewer.as)).status).toBe(200);
    expect((await svc.api.get('/v1/billing', agent.as)).status).toBe(200);
    for (const who of [agent, viewer]) {
      const u = await svc.api.get('/v1/billing/usage', who.as);
      expect(isErrorBody(u.body, 403, 'forbidden'), u.text).toBe(true);
      for (const [method, path, body] of OTHER_ROUTES) {
        const r = await send(svc, method, path, body, who.as);
        expect(isErrorBody(r.body, 403, 'forbidden'), `${path}: ${r.text}`).toBe(true);
      }
    }
    expect((await svc.api.get('/v1/billing/usage', admin.as)).status).toBe(200);
    expect((await svc.api.patch('/v1/billing/auto-recharge', { top_ups: 2 }, admin.as)).status).toBe(200);

    const none = await newApiKey(svc.api, t, ['tickets:read']);
    const reader = await newApiKey(svc.api, t, ['settings:read']);
    const writer = await newApiKey(svc.api, t, ['settings:write']);
    const as = (k: { key: string }) => ({ token: k.key });
    expect(isErrorBody((await svc.api.get('/v1/billing', as(none))).body, 403)).toBe(true);
    expect(isErrorBody((await svc.api.get('/v1/billing/usage', as(none))).body, 403)).toBe(true);
    expect((await svc.api.get('/v1/billing', as(reader))).status).toBe(200);
    expect((await svc.api.get('/v1/billing/usage', as(reader))).status).toBe(200);
    expect(isErrorBody((await svc.api.patch('/v1/billing/auto-recharge', { top_ups: 3 }, as(reader))).body, 403)).toBe(
      true,
    );
    expect((await svc.api.patch('/v1/billing/auto-recharge', { top_ups: 3 }, as(writer))).status).toBe(200);
  });

  it('validates the auto-recharge settings and changes nothing on bad input', async () => {
    const t = await newTenant(svc.api);
    const bad = [
      { top_ups: 0 },
      { top_ups: 21 },
      { threshold_usd: 0 },
      { threshold_usd: 1000.01 },
      { monthly_limit: 0 },
      { monthly_limit: 31 },
      { enabled: 'yes' },
      { surprise: 1 },
    ];
    for (const body of bad) {
      const r = await svc.api.patch('/v1/billing/auto-recharge', body, t.as);
      expect(isErrorBody(r.body, 422, 'validation_failed'), `${JSON.stringify(body)}: ${r.text}`).toBe(true);
    }
    // top_ups × 10 must exceed the threshold.
    const small = await svc.api.patch('/v1/billing/auto-recharge', { threshold_usd: 10, top_ups: 1 }, t.as);
    expect(isErrorBody(small.body, 422, 'recharge_too_small'), small.text).toBe(true);
    // On without a saved card.
    const card = await svc.api.patch('/v1/billing/auto-recharge', { enabled: true, threshold_usd: 5 }, t.as);
    expect(isErrorBody(card.body, 409, 'payment_method_required'), card.text).toBe(true);
    const after = (await svc.api.get('/v1/billing', t.as)).body.auto_recharge;
    expect(after).toMatchObject({ enabled: false, threshold_usd: 2, top_ups: 1, monthly_limit: 5 });
  });

  it('stores the settings (threshold rounded to cents) and publishes billing.updated', async () => {
    const t = await newTenant(svc.api);
    const since = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      '/v1/billing/auto-recharge',
      { threshold_usd: 12.345, top_ups: 2, monthly_limit: 30 },
      t.as,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.auto_recharge).toMatchObject({ enabled: false, threshold_usd: 12.35, top_ups: 2, monthly_limit: 30 });
    const events = await eventsAfterOf(svc, t, since);
    const updated = events.filter((e) => e.type === 'billing.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.billing.auto_recharge.threshold_usd).toBe(12.35);

    // With a saved card (what the provider's setup checkout records), it turns on.
    await updateAccount(svc.rt.deps, t.workspaceId, { payment_method_id: 'pm_card_visa', stripe_customer_id: 'cus_1' });
    const on = await svc.api.patch('/v1/billing/auto-recharge', { enabled: true }, t.as);
    expect(on.status, on.text).toBe(200);
    expect(on.body.auto_recharge.enabled).toBe(true);
    // Another workspace is untouched.
    const other = await newTenant(svc.api);
    expect((await svc.api.get('/v1/billing', other.as)).body.auto_recharge.enabled).toBe(false);
  });

  it('credits a payment once per payment_ref, however often and concurrently it is announced', async () => {
    const t = await newTenant(svc.api);
    const since = await latestSeqOf(svc, t);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        creditTopUp(svc.rt.deps, t.workspaceId, { top_ups: 2, payment_ref: `pi_once_${t.workspaceId}` }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const b = (await svc.api.get('/v1/billing', t.as)).body;
    expect(b.ai).toMatchObject({ purchased_usd: 20, remaining_usd: 20.5, monthly_usd: 0.5 });
    const events = (await eventsAfterOf(svc, t, since)).filter((e) => e.type === 'billing.updated');
    expect(events).toHaveLength(1);
    expect(events[0].data.billing.ai.purchased_usd).toBe(20);
    const entries = await svc.rt.deps.database.db
      .selectFrom('ai_ledger')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('kind', '=', 'top_up')
      .execute();
    expect(entries).toHaveLength(1);
  });

  it('answers 409 conflict to a checkout while the workspace is subscribed (one subscription per workspace)', async () => {
    const t = await newTenant(svc.api);
    await updateAccount(svc.rt.deps, t.workspaceId, { plan: 'pro', status: 'active', interval: 'month', seats: 1 });
    const r = await svc.api.post('/v1/billing/checkout', { interval: 'year' }, t.as);
    expect(isErrorBody(r.body, 409, 'conflict'), r.text).toBe(true);
    expect(r.body.detail).toContain('customer portal');
  });

  it('grants 10 per paid seat on pro, and lifts the limits', async () => {
    const t = await newTenant(svc.api);
    await updateAccount(svc.rt.deps, t.workspaceId, { plan: 'pro', status: 'active', interval: 'month', seats: 3 });
    const b = (await svc.api.get('/v1/billing', t.as)).body;
    expect(b).toMatchObject({
      plan: 'pro',
      status: 'active',
      interval: 'month',
      seats: 3,
      limits: { max_mailboxes: 0, max_members: 0 },
      ai: { monthly_usd: 30, remaining_usd: 30 },
    });
    for (const n of [1, 2]) {
      const r = await svc.api.post(
        '/v1/mailboxes',
        { name: `Box ${n}`, email: `pro${n}-${Date.now()}@acme.test` },
        t.as,
      );
      expect(r.status, r.text).toBe(201);
    }
  });

  it('answers 402 plan_limit past the free plan mailbox limit, and keeps what exists', async () => {
    const t = await newTenant(svc.api);
    const first = await svc.api.post('/v1/mailboxes', { name: 'Support', email: `s-${Date.now()}@acme.test` }, t.as);
    expect(first.status, first.text).toBe(201);
    const second = await svc.api.post('/v1/mailboxes', { name: 'Sales', email: `x-${Date.now()}@acme.test` }, t.as);
    expect(isErrorBody(second.body, 402, 'plan_limit'), second.text).toBe(true);
    expect(second.body.detail).toContain('max_mailboxes 1');
    const list = await svc.api.get('/v1/mailboxes', t.as);
    expect(list.body.data.map((m: { name: string }) => m.name)).toEqual(['Support']);
  });

  it('answers 402 plan_limit past three seats (accepting an invitation, a viewer made agent); viewers are free', async () => {
    const t = await newTenant(svc.api);
    await addMember(svc, t, 'admin');
    await addMember(svc, t, 'agent');
    const invite = async (role: string) => {
      const person = await signUp(svc.api, `Invitee ${role}`);
      const inv = await svc.api.post('/v1/invitations', { email: person.email, role }, t.as);
      expect(inv.status, inv.text).toBe(201);
      return svc.api.post('/v1/invitations/accept', { token: inv.body.token }, { token: person.token });
    };
    const agent = await invite('agent');
    expect(isErrorBody(agent.body, 402, 'plan_limit'), agent.text).toBe(true);
    expect(agent.body.detail).toContain('max_members 3');
    const viewer = await invite('viewer');
    expect(viewer.status, viewer.text).toBeLessThan(300);
    const v = await addMember(svc, t, 'viewer');
    const promote = await svc.api.patch(`/v1/members/${v.userId}`, { role: 'agent' }, t.as);
    expect(isErrorBody(promote.body, 402, 'plan_limit'), promote.text).toBe(true);
    const b = (await svc.api.get('/v1/billing', t.as)).body;
    expect(b.usage.members).toBe(3);
    expect(b.billed_seats).toBe(3);
  });

  it('at the limit, mailboxes created at once: exactly one is made, the others answer 402 plan_limit', async () => {
    for (let round = 0; round < 3; round++) {
      const t = await newTenant(svc.api);
      // The account exists already (its first insert would make the creates wait on each other).
      expect((await svc.api.get('/v1/billing', t.as)).status).toBe(200);
      const at = Date.now();
      const all = await Promise.all(
        [1, 2, 3].map((n) =>
          svc.api.post('/v1/mailboxes', { name: `Box ${n}`, email: `race${round}-${n}-${at}@acme.test` }, t.as),
        ),
      );
      expect(all.map((r) => r.status).sort(), all.map((r) => r.text).join('\n')).toEqual([201, 402, 402]);
      for (const r of all.filter((x) => x.status === 402)) expect(isErrorBody(r.body, 402, 'plan_limit')).toBe(true);
      expect((await svc.api.get('/v1/mailboxes', t.as)).body.data).toHaveLength(1);
    }
  });

  it('at the limit, invitations accepted at once: exactly one joins, the other answers 402 plan_limit', async () => {
    for (let round = 0; round < 3; round++) {
      const t = await newTenant(svc.api);
      await addMember(svc, t, 'agent');
      expect((await svc.api.get('/v1/billing', t.as)).status).toBe(200);
      // Two seats taken, one left; two people accept their agent invitations together.
      const people = await Promise.all([1, 2].map((n) => signUp(svc.api, `Racer ${round}-${n}`)));
      const tokens: string[] = [];
      for (const p of people) {
        const inv = await svc.api.post('/v1/invitations', { email: p.email, role: 'agent' }, t.as);
        expect(inv.status, inv.text).toBe(201);
        tokens.push(inv.body.token);
      }
      const all = await Promise.all(
        people.map((p, i) => svc.api.post('/v1/invitations/accept', { token: tokens[i] }, { token: p.token })),
      );
      const joined = all.filter((r) => r.status < 300);
      const refused = all.filter((r) => r.status >= 300);
      expect(joined, all.map((r) => r.text).join('\n')).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(isErrorBody(refused[0]!.body, 402, 'plan_limit'), refused[0]!.text).toBe(true);
      expect((await svc.api.get('/v1/billing', t.as)).body.usage.members).toBe(3);
    }
  });
});
