// GET /v1/billing/usage (interface.md UsageReport): a workspace's AI calls over a range, summed in
// SQL from ai_usage (one grouped scan per breakdown over the (workspace_id, created_at) index),
// never by loading the calls into the process. Dollars are what ai_usage recorded: on the hosted
// offering what the balance was charged (list price × 1.5), self-hosted the list price.
// Range (rule 2): from and to are RFC 3339 or YYYY-MM-DD (UTC midnight); a date-only `to` includes
// that day; `to` is exclusive in the answer; default this UTC month; at most one year.
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Deps } from '../../deps.js';
import { invalid } from '../../platform/http/errors.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

function parseBound(value: string, location: string, inclusiveDay: boolean): DateTime {
  const dateOnly = DATE_ONLY.test(value);
  const d = dateOnly ? DateTime.fromISO(value, { zone: 'utc' }) : DateTime.fromISO(value, { setZone: true });
  if (!d.isValid) throw invalid(location, 'is not a valid date (YYYY-MM-DD) or RFC 3339 date-time');
  if (d.year < 1970 || d.year > 9999) throw invalid(location, 'must be between the years 1970 and 9999');
  return (dateOnly && inclusiveDay ? d.plus({ days: 1 }) : d).toUTC();
}

export function usageRange(q: { from?: string; to?: string }, now = DateTime.utc()): { from: DateTime; to: DateTime } {
  const month = now.toUTC().startOf('month');
  const to = q.to !== undefined ? parseBound(q.to, 'query.to', true) : month.plus({ months: 1 });
  const from =
    q.from !== undefined
      ? parseBound(q.from, 'query.from', false)
      : q.to !== undefined
        ? to.minus({ months: 1 })
        : month;
  const at = q.to !== undefined ? 'query.to' : 'query.from';
  if (to <= from)
    throw invalid(
      at,
      q.to !== undefined ? 'must be after from' : 'must be before the end of this month (the default to)',
    );
  if (to > from.plus({ years: 1 })) throw invalid(at, 'the range is at most one year');
  return { from, to };
}

const money = (v: unknown) => Math.round(Number(v ?? 0) * 1e6) / 1e6;
const int = (v: unknown) => Number(v ?? 0);

export interface UsageReportView {
  from: string;
  to: string;
  total_usd: number;
  total_calls: number;
  by_feature: Array<{ feature: string; usd: number; calls: number }>;
  by_day: Array<{ date: string; usd: number; calls: number; by_feature: Record<string, number> }>;
  by_member: Array<{
    user: { id: string; name: string; email: string; avatar_url: string | null } | null;
    usd: number;
    calls: number;
  }>;
  by_model: Array<{
    model: string;
    source: 'instance' | 'own_key';
    usd: number;
    calls: number;
    input_tokens: number;
    output_tokens: number;
  }>;
  own_key_calls: number;
}

export async function usageReport(
  deps: Deps,
  workspaceId: string,
  q: { from?: string; to?: string },
): Promise<UsageReportView> {
  const { from, to } = usageRange(q);
  const db = deps.database.db;
  const range = db
    .selectFrom('ai_usage as a')
    .where('a.workspace_id', '=', workspaceId)
    .where('a.created_at', '>=', from.toJSDate())
    .where('a.created_at', '<', to.toJSDate());
  const usd = sql<string>`coalesce(sum(a.cost_usd), 0)`;
  const calls = sql<string>`count(*)`;
  const day = sql<string>`to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
  const [totals, features, days, members, models] = await Promise.all([
    range
      .select([usd.as('usd'), calls.as('calls'), sql<string>`count(*) FILTER (WHERE a.source = 'own_key')`.as('own')])
      .executeTakeFirst(),
    range
      .select(['a.feature', usd.as('usd'), calls.as('calls')])
      .groupBy('a.feature')
      .orderBy('a.feature')
      .execute(),
    range
      .select([day.as('date'), 'a.feature', usd.as('usd'), calls.as('calls')])
      .groupBy([day, 'a.feature'])
      .orderBy(day)
      .orderBy('a.feature')
      .execute(),
    range
      .leftJoin('users as u', 'u.id', 'a.user_id')
      .select(['a.user_id', 'u.name', 'u.email', 'u.avatar_url', usd.as('usd'), calls.as('calls')])
      .groupBy(['a.user_id', 'u.name', 'u.email', 'u.avatar_url'])
      .orderBy(sql`sum(a.cost_usd)`, 'desc')
      .orderBy('a.user_id')
      .execute(),
    range
      .select([
        'a.model',
        'a.source',
        usd.as('usd'),
        calls.as('calls'),
        sql<string>`coalesce(sum(a.input_tokens), 0)`.as('input_tokens'),
        sql<string>`coalesce(sum(a.output_tokens), 0)`.as('output_tokens'),
      ])
      .groupBy(['a.model', 'a.source'])
      .orderBy(sql`sum(a.cost_usd)`, 'desc')
      .orderBy('a.model')
      .orderBy('a.source')
      .execute(),
  ]);
  const byDay = new Map<string, UsageReportView['by_day'][number]>();
  for (const r of days) {
    let d = byDay.get(r.date);
    if (!d) {
      d = { date: r.date, usd: 0, calls: 0, by_feature: {} };
      byDay.set(r.date, d);
    }
    d.usd = money(d.usd + Number(r.usd));
    d.calls += int(r.calls);
    d.by_feature[r.feature] = money(r.usd);
  }
  return {
    from: from.toISO({ suppressMilliseconds: true })!,
    to: to.toISO({ suppressMilliseconds: true })!,
    total_usd: money(totals?.usd),
    total_calls: int(totals?.calls),
    by_feature: features.map((r) => ({ feature: r.feature, usd: money(r.usd), calls: int(r.calls) })),
    by_day: [...byDay.values()],
    by_member: members.map((r) => ({
      user:
        r.user_id && r.name !== null
          ? { id: r.user_id, name: r.name, email: r.email ?? '', avatar_url: r.avatar_url ?? null }
          : null,
      usd: money(r.usd),
      calls: int(r.calls),
    })),
    by_model: models.map((r) => ({
      model: r.model,
      source: r.source,
      usd: money(r.usd),
      calls: int(r.calls),
      input_tokens: int(r.input_tokens),
      output_tokens: int(r.output_tokens),
    })),
    own_key_calls: int(totals?.own),
  };
}
