// GET /v1/billing/usage (interface.md UsageReport, Billing rule 2): totals and the breakdowns by
// feature, UTC day (days with usage only), member (null for automations and the AI agent) and
// model (instance or own key), the range rules (default this UTC month, dates or RFC 3339, a
// date-only `to` included, at most a year, 422 otherwise), and another workspace's calls unseen.
// The calls are ai_usage rows as runAi writes them, at chosen times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/platform/crypto/random.js';
import { addMember, isErrorBody, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

interface Row {
  at: string;
  feature?: 'draft_reply' | 'summarize' | 'rewrite';
  model?: string;
  source?: 'instance' | 'own_key';
  usd?: number;
  user?: string | null;
  outcome?: 'ok' | 'failed';
}

async function calls(t: Tenant, rows: Row[]) {
  await svc.rt.deps.database.db
    .insertInto('ai_usage')
    .values(
      rows.map((r) => ({
        workspace_id: t.workspaceId,
        id: newId(),
        feature: r.feature ?? 'draft_reply',
        model: r.model ?? 'gpt-4o',
        source: r.source ?? 'instance',
        input_tokens: 1000,
        output_tokens: 100,
        cost_usd: r.source === 'own_key' ? 0 : (r.usd ?? 0.01),
        user_id: r.user === undefined ? t.owner.userId : r.user,
        outcome: r.outcome ?? 'ok',
        ticket_id: null,
        created_at: new Date(r.at),
      })),
    )
    .execute();
}

const report = (t: Tenant, q = '') => svc.api.get(`/v1/billing/usage${q}`, t.as);

describe('GET /v1/billing/usage', () => {
  it('sums a range by feature, day, member and model', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Avery Agent');
    await calls(t, [
      { at: '2026-03-01T00:00:00Z', usd: 0.02 },
      { at: '2026-03-01T23:59:59Z', feature: 'summarize', usd: 0.005, user: agent.userId },
      { at: '2026-03-03T12:00:00Z', feature: 'rewrite', usd: 0.001, user: null, model: 'gpt-4o-mini' },
      { at: '2026-03-03T13:00:00Z', source: 'own_key', user: agent.userId },
      { at: '2026-03-04T00:00:00Z', usd: 5 },
      { at: '2026-02-28T23:59:59Z', usd: 7 },
    ]);
    const other = await newTenant(svc.api);
    await calls(other, [{ at: '2026-03-02T10:00:00Z', usd: 3 }]);

    const r = await report(t, '?from=2026-03-01&to=2026-03-03');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      from: '2026-03-01T00:00:00Z',
      to: '2026-03-04T00:00:00Z',
      total_usd: 0.026,
      total_calls: 4,
      own_key_calls: 1,
    });
    expect(r.body.by_feature).toEqual([
      { feature: 'draft_reply', usd: 0.02, calls: 2 },
      { feature: 'rewrite', usd: 0.001, calls: 1 },
      { feature: 'summarize', usd: 0.005, calls: 1 },
    ]);
    expect(r.body.by_day).toEqual([
      { date: '2026-03-01', usd: 0.025, calls: 2, by_feature: { draft_reply: 0.02, summarize: 0.005 } },
      { date: '2026-03-03', usd: 0.001, calls: 2, by_feature: { draft_reply: 0, rewrite: 0.001 } },
    ]);
    const members = r.body.by_member.map((m: any) => [m.user?.name ?? null, m.usd, m.calls]);
    expect(members).toEqual([
      ['Olivia Owner', 0.02, 1],
      ['Avery Agent', 0.005, 2],
      [null, 0.001, 1],
    ]);
    expect(r.body.by_member[0].user).toMatchObject({ id: t.owner.userId, email: t.owner.email });
    expect(r.body.by_model).toEqual([
      { model: 'gpt-4o', source: 'instance', usd: 0.025, calls: 2, input_tokens: 2000, output_tokens: 200 },
      { model: 'gpt-4o-mini', source: 'instance', usd: 0.001, calls: 1, input_tokens: 1000, output_tokens: 100 },
      { model: 'gpt-4o', source: 'own_key', usd: 0, calls: 1, input_tokens: 1000, output_tokens: 100 },
    ]);

    // RFC 3339 bounds are exact (to exclusive).
    const exact = await report(t, '?from=2026-03-01T12:00:00Z&to=2026-03-04T00:00:00Z');
    expect(exact.body).toMatchObject({ total_calls: 3, total_usd: 0.006 });
  });

  it('defaults to this UTC month', async () => {
    const t = await newTenant(svc.api);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    await calls(t, [
      { at: now.toISOString(), usd: 0.5 },
      { at: new Date(start.getTime() - 1000).toISOString(), usd: 1 },
    ]);
    const r = await report(t);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ total_usd: 0.5, total_calls: 1 });
    expect(new Date(r.body.from).getTime()).toBe(start.getTime());
    expect(new Date(r.body.to).getTime()).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  });

  it('answers 422 for a range over a year, to not after from, or a bound that is no date', async () => {
    const t = await newTenant(svc.api);
    for (const q of [
      '?from=2025-01-01&to=2026-01-01',
      '?from=2026-03-02T00:00:00Z&to=2026-03-02T00:00:00Z',
      '?from=2026-03-05&to=2026-03-01',
      '?from=2026-02-30',
      '?from=yesterday',
      '?to=2026-13-01',
      '?from=2026-01-01&extra=1',
    ]) {
      const r = await report(t, q);
      expect(isErrorBody(r.body, 422, 'validation_failed'), `${q}: ${r.text}`).toBe(true);
    }
    // Exactly a year (a date-only `to` included) is fine.
    expect((await report(t, '?from=2025-01-01&to=2025-12-31')).status).toBe(200);
  });
});
