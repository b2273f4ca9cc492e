// GET /v1/reports/overview: a workspace's ticket figures over a range, all computed in SQL (two
// grouped scans over indexed ranges plus one count), never by loading tickets into the process.
//
// Cohorts (docs/decisions.md "Reports"):
// - created, first response, sla_breached, by_channel, by_severity: tickets created in [from, to);
// - solved, resolution, csat: tickets whose solved_at is in [from, to);
// - open_now: tickets open, pending or on hold right now, whatever the range;
// - by_agent: per current assignee, the solved cohort's count and the created cohort's median
//   first response.
// Only live tickets count: not deleted, not spam, not merged into another ticket; and only those
// the caller may see (private teams, as in ticket lists).
import type { Static } from '@sinclair/typebox';
import { type RawBuilder, sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { hiddenTeamIds, notInHiddenTeams } from '../teams/access.js';
import { getWorkspace, isTimeZone } from '../workspace/service.js';
import type { OverviewQuery, ReportOverview } from './schemas.js';

export type ReportOverviewView = Static<typeof ReportOverview>;

/** Default range: the last 30 days, today included. */
export const DEFAULT_DAYS = 30;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export interface ReportRange {
  from: DateTime;
  to: DateTime;
  timezone: string;
}

function parseBound(value: string, timezone: string, location: string): DateTime {
  const d = DATE_ONLY.test(value)
    ? DateTime.fromISO(value, { zone: timezone })
    : DateTime.fromISO(value, { setZone: true });
  if (!d.isValid) throw invalid(location, 'is not a valid date (YYYY-MM-DD) or RFC 3339 date-time');
  if (d.year < 1970 || d.year > 9999) throw invalid(location, 'must be between the years 1970 and 9999');
  return d.setZone(timezone);
}

/**
 * The range a query asks for: dates are midnight in `timezone`, `to` is exclusive, the default is
 * the last 30 days (to = the start of tomorrow), and a range is at most one year long.
 */
export function resolveRange(q: Static<typeof OverviewQuery>, timezone: string, now = DateTime.now()): ReportRange {
  const to =
    q.to !== undefined
      ? parseBound(q.to, timezone, 'query.to')
      : now.setZone(timezone).startOf('day').plus({ days: 1 });
  const from = q.from !== undefined ? parseBound(q.from, timezone, 'query.from') : to.minus({ days: DEFAULT_DAYS });
  // The error names the bound the caller sent (to, or from when to is the default).
  const at = q.to !== undefined ? 'query.to' : 'query.from';
  if (from >= to) {
    throw q.to !== undefined
      ? invalid(at, 'must be after from')
      : invalid(at, 'must be before the start of tomorrow (the default to)');
  }
  if (to > from.plus({ years: 1 })) throw invalid(at, 'the range is at most one year');
  return { from, to, timezone };
}

/** The local dates a range touches, in order. */
function daysOf(r: ReportRange): string[] {
  const out: string[] = [];
  const last = r.to.minus({ milliseconds: 1 }).startOf('day');
  for (let d = r.from.startOf('day'); d <= last; d = d.plus({ days: 1 })) out.push(d.toISODate()!);
  return out;
}

/** Live tickets the caller may see, of alias t. */
function liveTickets(hidden: string[]): RawBuilder<unknown> {
  const notHidden = notInHiddenTeams(hidden);
  const teams = notHidden === null ? sql`` : sql` AND ${notHidden}`;
  return sql`t.deleted_at IS NULL AND NOT t.spam AND t.merged_into_id IS NULL${teams}`;
}

/** Minutes between two timestamptz columns of t (negative clamped to 0), as float8; null without an end. */
const minutesBetween = (start: string, end: string) =>
  sql`CASE WHEN ${sql.ref(end)} IS NOT NULL
        THEN (greatest(extract(epoch FROM ${sql.ref(end)} - ${sql.ref(start)}), 0) / 60)::float8 END`;

const median = (expr: RawBuilder<unknown>) =>
  sql`round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ${expr}))::numeric, 1)::float8`;

interface CreatedRow {
  day: string | null;
  agent: string | null;
  no_day: number;
  no_agent: number;
  created: number;
  sla_breached: number;
  fr_p50: number | null;
  email: number;
  chat: number;
  api: number;
  portal: number;
  sev1: number;
  sev2: number;
  sev3: number;
  sev4: number;
  sev_none: number;
}

interface SolvedRow {
  day: string | null;
  agent: string | null;
  no_day: number;
  no_agent: number;
  solved: number;
  res_p50: number | null;
  csat_avg: number | null;
  csat_count: number;
}

/**
 * The statements of an overview (exported for bench/reports.ts, which shows their plans): the
 * created range and the solved range, each one scan grouped by day, by assignee and in total;
 * and the tickets open right now.
 */
export function overviewQueries(
  ws: string,
  timezone: string,
  from: Date,
  to: Date,
  hidden: string[],
): { created: RawBuilder<CreatedRow>; solved: RawBuilder<SolvedRow>; openNow: RawBuilder<{ n: number }> } {
  const live = liveTickets(hidden);
  // One scan of the created range: per day, per assignee and in total.
  const created = sql<CreatedRow>`
    SELECT x.day::text AS day, x.agent, GROUPING(x.day) AS no_day, GROUPING(x.agent) AS no_agent,
           count(*)::int AS created,
           count(*) FILTER (WHERE x.breached)::int AS sla_breached,
           ${median(sql`x.fr`)} AS fr_p50,
           count(*) FILTER (WHERE x.channel = 'email')::int AS email,
           count(*) FILTER (WHERE x.channel = 'chat')::int AS chat,
           count(*) FILTER (WHERE x.channel = 'api')::int AS api,
           count(*) FILTER (WHERE x.channel = 'portal')::int AS portal,
           count(*) FILTER (WHERE x.severity = 'sev1')::int AS sev1,
           count(*) FILTER (WHERE x.severity = 'sev2')::int AS sev2,
           count(*) FILTER (WHERE x.severity = 'sev3')::int AS sev3,
           count(*) FILTER (WHERE x.severity = 'sev4')::int AS sev4,
           count(*) FILTER (WHERE x.severity IS NULL)::int AS sev_none
      FROM (
        SELECT (t.created_at AT TIME ZONE ${timezone})::date AS day, t.assignee_id AS agent, t.channel, t.severity,
               coalesce(t.sla @> '{"breached": true}'::jsonb, false) AS breached,
               ${minutesBetween('t.created_at', 't.first_responded_at')} AS fr
          FROM tickets t
         WHERE t.workspace_id = ${ws} AND t.created_at >= ${from} AND t.created_at < ${to} AND ${live}
      ) x
     GROUP BY GROUPING SETS ((x.day), (x.agent), ())`;

  // One scan of the solved range, the same way.
  const solved = sql<SolvedRow>`
    SELECT x.day::text AS day, x.agent, GROUPING(x.day) AS no_day, GROUPING(x.agent) AS no_agent,
           count(*)::int AS solved,
           ${median(sql`x.res`)} AS res_p50,
           round(avg(x.score), 2)::float8 AS csat_avg,
           count(x.score)::int AS csat_count
      FROM (
        SELECT (t.solved_at AT TIME ZONE ${timezone})::date AS day, t.assignee_id AS agent,
               ${minutesBetween('t.created_at', 't.solved_at')} AS res,
               CASE WHEN jsonb_typeof(t.csat -> 'score') = 'number' THEN (t.csat ->> 'score')::numeric END AS score
          FROM tickets t
         WHERE t.workspace_id = ${ws} AND t.solved_at IS NOT NULL AND t.solved_at >= ${from} AND t.solved_at < ${to}
           AND ${live}
      ) x
     GROUP BY GROUPING SETS ((x.day), (x.agent), ())`;

  const openNow = sql<{ n: number }>`
    SELECT count(*)::int AS n FROM tickets t
     WHERE t.workspace_id = ${ws} AND t.status IN ('open', 'pending', 'on_hold') AND ${live}`;

  return { created, solved, openNow };
}

const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export async function reportOverview(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof OverviewQuery>,
): Promise<ReportOverviewView> {
  const db = deps.database.db;
  let timezone: string;
  if (q.timezone !== undefined) {
    if (!isTimeZone(q.timezone) || !DateTime.now().setZone(q.timezone).isValid) {
      throw invalid('query.timezone', 'is not an IANA time zone name');
    }
    timezone = q.timezone;
  } else {
    timezone = (await getWorkspace(deps, ctx)).settings.timezone;
  }
  const range = resolveRange(q, timezone);
  const from = range.from.toJSDate();
  const to = range.to.toJSDate();
  const sqls = overviewQueries(ctx.workspaceId, timezone, from, to, await hiddenTeamIds(db, ctx));

  let results: [{ rows: CreatedRow[] }, { rows: SolvedRow[] }, { rows: Array<{ n: number }> }];
  try {
    results = await Promise.all([sqls.created.execute(db), sqls.solved.execute(db), sqls.openNow.execute(db)]);
  } catch (err) {
    // A zone the runtime knows but PostgreSQL does not (invalid_parameter_value).
    if ((err as { code?: string }).code === '22023')
      throw invalid('query.timezone', 'is not a time zone the database knows');
    throw err;
  }
  const [c, s, o] = results;

  const cTotal = c.rows.find((r) => num(r.no_day) === 1 && num(r.no_agent) === 1);
  const sTotal = s.rows.find((r) => num(r.no_day) === 1 && num(r.no_agent) === 1);

  // Per day: the volumes, and the medians and CSAT of each day's cohort (for charts over time).
  const perDay = new Map<
    string,
    { created: number; solved: number; fr: number | null; res: number | null; csat: number | null; csatN: number }
  >();
  for (const d of daysOf(range)) perDay.set(d, { created: 0, solved: 0, fr: null, res: null, csat: null, csatN: 0 });
  for (const r of c.rows) {
    const d = num(r.no_day) === 0 && r.day ? perDay.get(r.day) : undefined;
    if (d) {
      d.created = num(r.created);
      d.fr = numOrNull(r.fr_p50);
    }
  }
  for (const r of s.rows) {
    const d = num(r.no_day) === 0 && r.day ? perDay.get(r.day) : undefined;
    if (d) {
      d.solved = num(r.solved);
      d.res = numOrNull(r.res_p50);
      d.csat = numOrNull(r.csat_avg);
      d.csatN = num(r.csat_count);
    }
  }

  // Per assignee: solved (solved cohort) and median first response (created cohort).
  const agents = new Map<string, { solved: number; fr: number | null }>();
  const agentOf = (id: string) => {
    let a = agents.get(id);
    if (!a) {
      a = { solved: 0, fr: null };
      agents.set(id, a);
    }
    return a;
  };
  for (const r of s.rows) if (num(r.no_agent) === 0 && r.agent) agentOf(r.agent).solved = num(r.solved);
  for (const r of c.rows) {
    if (num(r.no_agent) === 0 && r.agent && r.fr_p50 !== null) agentOf(r.agent).fr = numOrNull(r.fr_p50);
  }
  const users =
    agents.size === 0
      ? []
      : await db
          .selectFrom('users')
          .select(['id', 'name', 'email', 'avatar_url'])
          .where('id', 'in', [...agents.keys()])
          .execute();
  const byAgent = users
    .map((u) => ({
      user: { id: u.id, name: u.name, email: u.email, avatar_url: u.avatar_url },
      solved: agents.get(u.id)!.solved,
      first_response_p50_minutes: agents.get(u.id)!.fr,
    }))
    .sort(
      (a, b) => b.solved - a.solved || a.user.name.localeCompare(b.user.name) || a.user.id.localeCompare(b.user.id),
    );

  return {
    from: iso(from)!,
    to: iso(to)!,
    timezone,
    created: num(cTotal?.created),
    solved: num(sTotal?.solved),
    open_now: num(o.rows[0]?.n),
    first_response_p50_minutes: numOrNull(cTotal?.fr_p50),
    resolution_p50_minutes: numOrNull(sTotal?.res_p50),
    csat_avg: numOrNull(sTotal?.csat_avg),
    csat_count: num(sTotal?.csat_count),
    sla_breached: num(cTotal?.sla_breached),
    by_day: [...perDay].map(([date, v]) => ({
      date,
      created: v.created,
      solved: v.solved,
      first_response_p50_minutes: v.fr,
      resolution_p50_minutes: v.res,
      csat_avg: v.csat,
      csat_count: v.csatN,
    })),
    by_channel: {
      email: num(cTotal?.email),
      chat: num(cTotal?.chat),
      api: num(cTotal?.api),
      portal: num(cTotal?.portal),
    },
    by_severity: {
      sev1: num(cTotal?.sev1),
      sev2: num(cTotal?.sev2),
      sev3: num(cTotal?.sev3),
      sev4: num(cTotal?.sev4),
      none: num(cTotal?.sev_none),
    },
    by_agent: byAgent,
  };
}
