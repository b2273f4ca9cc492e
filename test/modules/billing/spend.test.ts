// The spend gate and the ledger on the hosted offering, against the OpenAI stand-in with the
// production SDK (runAi, the one path of every AI call): the charge is the list price × 1.5,
// allowance first; a call that costs more than what is left takes the balance to 0; 402
// ai_balance_empty before anything is stored or the model is called (runAi and a feature route);
// a failed call costs nothing and releases its hold; concurrent calls never hold more than the
// balance; ai_balance_low and ai_balance_out once a month, reset by a top-up.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAi } from '../../../src/modules/ai/run.js';
import { creditTopUp } from '../../../src/modules/billing/service.js';
import { gate, type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import { addMember, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

let ai: OpenAiStandIn;
let svc: Service;
beforeAll(async () => {
  ai = await startOpenAiStandIn({ keys: ['sk-instance-0000', 'sk-own-0000'] });
  svc = await startService(
    {
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'sk-instance-0000',
      AI_MODEL: 'gpt-4o',
      AI_FAST_MODEL: 'gpt-4o',
      STRIPE_SECRET_KEY: 'sk_test_billing_core',
      STRIPE_API_BASE: 'http://127.0.0.1:9',
      // The workspace's own key may point at the loopback stand-in.
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
    { jobs: false, ai: { timeoutMs: 5000, maxRetries: 0 } },
  );
});
afterAll(async () => {
  await svc?.stop();
  await ai?.stop();
});
beforeEach(() => ai.reset());

const db = () => svc.rt.deps.database.db;
const caller = (t: Tenant) => ({ workspaceId: t.workspaceId, userId: t.owner.userId });
const call = (maxTokens = 500): Parameters<typeof runAi>[2] => ({
  feature: 'draft_reply',
  tier: 'default',
  system: 'You draft replies.',
  messages: [{ role: 'user', content: 'The customer asks where their parcel is.' }],
  maxTokens,
});
const billing = async (t: Tenant) => (await svc.api.get('/v1/billing', t.as)).body;
const usageRows = (t: Tenant) =>
  db().selectFrom('ai_usage').selectAll().where('workspace_id', '=', t.workspaceId).execute();
const notices = (t: Tenant) =>
  db()
    .selectFrom('notifications')
    .select(['user_id', 'type', 'data'])
    .where('workspace_id', '=', t.workspaceId)
    .where('type', 'in', ['ai_balance_low', 'ai_balance_out'])
    .orderBy('created_at')
    .execute();
const held = async (t: Tenant) =>
  (await db().selectFrom('ai_reservations').select('id').where('workspace_id', '=', t.workspaceId).execute()).length;

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the spend gate (hosted offering)', () => {
  it('charges the list price × 1.5 from the monthly allowance, kept to 0.000001', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ text: 'It ships today.', usage: { input_tokens: 1000, output_tokens: 200 } });
    const r = await runAi(svc.rt.deps, caller(t), call());
    // gpt-4o: 1,000 in at 2.50 and 200 out at 10 per million = 0.0045; × 1.5.
    expect(r.cost_usd).toBe(0.00675);
    const rows = await usageRows(t);
    expect(rows.map((x) => Number(x.cost_usd))).toEqual([0.00675]);
    expect((await billing(t)).ai).toMatchObject({
      monthly_usd: 0.5,
      used_usd: 0.00675,
      purchased_usd: 0,
      remaining_usd: 0.49325,
    });
    const ledger = await db()
      .selectFrom('ai_ledger')
      .select(['kind', 'allowance_micros', 'purchased_micros', 'usage_id'])
      .where('workspace_id', '=', t.workspaceId)
      .orderBy('created_at')
      .execute();
    expect(ledger.map((e) => [e.kind, Number(e.allowance_micros), Number(e.purchased_micros)])).toEqual([
      ['grant', 500_000, 0],
      ['charge', -6750, 0],
    ]);
    expect(ledger[1]!.usage_id).toBe(rows[0]!.id);
    expect(await held(t)).toBe(0);
  });

  it('spends the allowance first, then purchased top-ups', async () => {
    const t = await newTenant(svc.api);
    await creditTopUp(svc.rt.deps, t.workspaceId, { top_ups: 1, payment_ref: `pi_first_${t.workspaceId}` });
    // 40,000 output tokens at 10 = 0.40 × 1.5 = 0.60: the 0.50 allowance, then 0.10 purchased.
    ai.answer({ text: 'Long.', usage: { input_tokens: 0, output_tokens: 40_000 } });
    await runAi(svc.rt.deps, caller(t), call());
    expect((await billing(t)).ai).toMatchObject({ used_usd: 0.6, purchased_usd: 9.9, remaining_usd: 9.9 });
  });

  it('takes the balance to 0 when a call costs more than is left, says so once, then answers 402 without calling', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    await addMember(svc, t, 'agent');
    // 100,000 output tokens: 1.00 × 1.5 = 1.50, more than the 0.50 left.
    ai.answer({ text: 'Very long.', usage: { input_tokens: 0, output_tokens: 100_000 } });
    const r = await runAi(svc.rt.deps, caller(t), call());
    expect(r.cost_usd).toBe(1.5);
    expect((await billing(t)).ai).toMatchObject({ used_usd: 0.5, remaining_usd: 0 });
    // ai_balance_out (not low) to the owner and the admin, with an email each.
    const sent = await notices(t);
    expect(sent.map((n) => [n.type, n.user_id]).sort()).toEqual(
      [
        ['ai_balance_out', t.owner.userId],
        ['ai_balance_out', admin.userId],
      ].sort(),
    );
    expect(sent[0]!.data).toEqual({ remaining_usd: 0 });
    const outbox = (await svc.api.get('/v1/mail/outbox', t.as)).body.data;
    expect(outbox.filter((m: { subject: string }) => m.subject.includes('has run out'))).toHaveLength(2);

    const before = ai.requests.length;
    const err = await runAi(svc.rt.deps, caller(t), call()).catch((e) => e);
    expect(err).toMatchObject({ status: 402, code: 'ai_balance_empty' });
    const http = await svc.api.post('/v1/ai/rewrite', { html: '<p>hello</p>', mode: 'shorter' }, t.as);
    expect(http.status, http.text).toBe(402);
    expect(http.body.code).toBe('ai_balance_empty');
    // Nothing stored, the model not called.
    expect(ai.requests.length).toBe(before);
    expect(await usageRows(t)).toHaveLength(1);
    expect(await held(t)).toBe(0);
  });

  it("never refuses a call on the workspace's own key, whatever the balance; it costs nothing", async () => {
    const t = await newTenant(svc.api);
    ai.answer({ text: 'Very long.', usage: { input_tokens: 0, output_tokens: 100_000 } });
    await runAi(svc.rt.deps, caller(t), call());
    expect((await billing(t)).ai.remaining_usd).toBe(0);
    const put = await svc.api.req('PUT', '/v1/ai/key', {
      ...t.as,
      body: { provider: 'openai', api_key: 'sk-own-0000', base_url: ai.url },
    });
    expect(put.status, put.text).toBe(200);
    ai.answer({ text: 'On our key.', usage: { input_tokens: 1000, output_tokens: 200 } });
    const r = await runAi(svc.rt.deps, caller(t), call());
    expect(r).toMatchObject({ source: 'own_key', cost_usd: 0 });
    expect((await billing(t)).ai).toMatchObject({ used_usd: 0.5, remaining_usd: 0 });
    expect(await held(t)).toBe(0);
  });

  it("a new UTC month expires last month's unspent allowance and grants this month's; purchased stays", async () => {
    const t = await newTenant(svc.api);
    await creditTopUp(svc.rt.deps, t.workspaceId, { top_ups: 1, payment_ref: `pi_month_${t.workspaceId}` });
    ai.answer({ text: 'a', usage: { input_tokens: 0, output_tokens: 20_000 } });
    await runAi(svc.rt.deps, caller(t), call());
    // 0.30 of last month's 0.50 spent: the account as a month ago would have left it.
    await db()
      .updateTable('billing_accounts')
      .set({ allowance_month: '2020-01' })
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    // (used_usd counts the charges of the account's month; the fixture moved only the account.)
    expect((await billing(t)).ai).toMatchObject({
      monthly_usd: 0.5,
      purchased_usd: 10,
      remaining_usd: 10.5,
    });
    const ledger = await db()
      .selectFrom('ai_ledger')
      .select(['kind', 'allowance_micros', 'month'])
      .where('workspace_id', '=', t.workspaceId)
      .where('kind', 'in', ['grant', 'expire'])
      .execute();
    const thisMonth = new Date().toISOString().slice(0, 7);
    expect(ledger.map((e) => [e.kind, Number(e.allowance_micros), e.month]).sort()).toEqual(
      [
        ['expire', -200_000, '2020-01'],
        ['grant', 500_000, thisMonth],
        ['grant', 500_000, thisMonth],
      ].sort(),
    );
  });

  it('a failed call costs nothing and releases its hold', async () => {
    const t = await newTenant(svc.api);
    ai.answer({ status: 500 });
    const err = await runAi(svc.rt.deps, caller(t), call()).catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: 'ai_unavailable' });
    expect((await usageRows(t)).map((x) => [x.outcome, Number(x.cost_usd)])).toEqual([['failed', 0]]);
    expect((await billing(t)).ai).toMatchObject({ used_usd: 0, remaining_usd: 0.5 });
    expect(await held(t)).toBe(0);
  });

  it('ai_balance_low once a month below low_at_usd; a top-up resets it', async () => {
    const t = await newTenant(svc.api);
    // 30,000 output tokens = 0.45 charged: 0.05 left, under low_at_usd 0.10.
    ai.answer({ text: 'a', usage: { input_tokens: 0, output_tokens: 30_000 } });
    await runAi(svc.rt.deps, caller(t), call());
    ai.answer({ text: 'b', usage: { input_tokens: 1000, output_tokens: 200 } });
    await runAi(svc.rt.deps, caller(t), call());
    expect((await notices(t)).map((n) => [n.type, n.data])).toEqual([['ai_balance_low', { remaining_usd: 0.05 }]]);

    await creditTopUp(svc.rt.deps, t.workspaceId, { top_ups: 1, payment_ref: `pi_low_${t.workspaceId}` });
    // 10.04325 left; 665,333 output tokens = 9.979995 charged: 0.063255 left, low again.
    ai.answer({ text: 'c', usage: { input_tokens: 0, output_tokens: 665_333 } });
    await runAi(svc.rt.deps, caller(t), call());
    expect((await notices(t)).map((n) => [n.type, n.data])).toEqual([
      ['ai_balance_low', { remaining_usd: 0.05 }],
      ['ai_balance_low', { remaining_usd: 0.063255 }],
    ]);
  });

  it('holds each call’s estimate: concurrent calls never start beyond the balance', async () => {
    const t = await newTenant(svc.api);
    // Estimate at maxTokens 4,000: (15 × 2.50 + 4,000 × 10) / 1e6 × 1.5 = 0.060056; 0.50 holds 8.
    const g = gate();
    ai.answer(
      ...Array.from({ length: 12 }, () => ({ gate: g, text: 'ok', usage: { input_tokens: 1000, output_tokens: 200 } })),
    );
    const before = ai.requests.length;
    let refused = 0;
    const calls = Array.from({ length: 12 }, () =>
      runAi(svc.rt.deps, caller(t), call(4000)).catch((e) => {
        if (e?.code === 'ai_balance_empty') refused++;
        else throw e;
        return null;
      }),
    );
    await until('8 calls started and 4 refused', () => refused === 4 && ai.requests.length - before === 8);
    expect(await held(t)).toBe(8);
    g.release();
    const done = await Promise.all(calls);
    expect(done.filter((r) => r !== null)).toHaveLength(8);
    expect((await billing(t)).ai).toMatchObject({ used_usd: 0.054, remaining_usd: 0.446 });
    expect(await held(t)).toBe(0);
  });

  it('concurrent calls that cost more than their estimate take the balance to 0, never below', async () => {
    const t = await newTenant(svc.api);
    const g = gate();
    // Each costs 6,667 output tokens = 0.100005 against a 0.060056 estimate.
    ai.answer(
      ...Array.from({ length: 8 }, () => ({ gate: g, text: 'ok', usage: { input_tokens: 0, output_tokens: 6667 } })),
    );
    const before = ai.requests.length;
    const calls = Array.from({ length: 8 }, () => runAi(svc.rt.deps, caller(t), call(4000)));
    await until('8 calls started', () => ai.requests.length - before === 8);
    g.release();
    await Promise.all(calls);
    expect((await billing(t)).ai).toMatchObject({ used_usd: 0.5, remaining_usd: 0 });
    const account = await db()
      .selectFrom('billing_accounts')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .executeTakeFirstOrThrow();
    expect(Number(account.allowance_spent_micros)).toBe(500_000);
    expect(Number(account.purchased_micros)).toBe(0);
    // One notice of each for the owner (low at 0.09998 after the fourth, out after the fifth),
    // however many calls crossed the lines together.
    // (Sorted: rows written by transactions that waited on each other share no order by time.)
    const sent = (await notices(t))
      .map((n) => [n.type, n.data])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(sent).toEqual([
      ['ai_balance_low', { remaining_usd: 0.09998 }],
      ['ai_balance_out', { remaining_usd: 0 }],
    ]);
  });
});
