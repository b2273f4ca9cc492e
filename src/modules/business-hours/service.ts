// Business hours: the workspace's open hours (a weekly schedule of local ranges in an IANA time
// zone, and holidays), used by SLA policies with business_hours true. One row per workspace once
// saved; before that GET answers the defaults: disabled, Monday to Friday 09:00-17:00, in the
// workspace's settings.timezone (UTC when unset). PUT replaces the whole object; when something
// changed it writes the business_hours.updated audit entry (changes, from, to). Saved hours apply
// to the deadlines set from then on (ticket creation, priority changes, reopening); existing due
// dates are not recomputed.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import {
  type Calendar,
  type CalendarInput,
  compileCalendar,
  DAY_KEYS,
  type DayKey,
  isTimeZoneName,
  minuteOfDay,
} from './calendar.js';
import type { BusinessHours, PutBusinessHoursBody } from './schemas.js';

export type BusinessHoursView = Static<typeof BusinessHours>;
type PutInput = Static<typeof PutBusinessHoursBody>;
type ScheduleView = BusinessHoursView['schedule'];

const NINE_TO_FIVE = [{ start: '09:00', end: '17:00' }];

function defaultSchedule(): ScheduleView {
  return {
    mon: NINE_TO_FIVE,
    tue: NINE_TO_FIVE,
    wed: NINE_TO_FIVE,
    thu: NINE_TO_FIVE,
    fri: NINE_TO_FIVE,
    sat: [],
    sun: [],
  };
}

/** The workspace's settings.timezone when it is a usable zone, else UTC. */
async function workspaceTimezone(db: Kysely<DB>, workspaceId: string): Promise<string> {
  const row = await db
    .selectFrom('workspaces')
    .select(sql<string | null>`settings->>'timezone'`.as('tz'))
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  const tz = row?.tz ?? null;
  return tz !== null && isTimeZoneName(tz) ? tz : 'UTC';
}

/** The stored schedule with every weekday, keys in a fixed order (jsonb reorders them). */
function fullSchedule(stored: Record<string, Array<{ start: string; end: string }>>): ScheduleView {
  return Object.fromEntries(
    DAY_KEYS.map((k) => [k, (stored[k] ?? []).map((r) => ({ start: r.start, end: r.end }))]),
  ) as ScheduleView;
}

/** The workspace's business hours as the API shows them (the defaults when never saved). */
export async function loadBusinessHours(db: Kysely<DB>, workspaceId: string): Promise<BusinessHoursView> {
  const row = await db
    .selectFrom('business_hours')
    .select(['enabled', 'timezone', 'schedule', 'holidays'])
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (!row) {
    return {
      enabled: false,
      timezone: await workspaceTimezone(db, workspaceId),
      schedule: defaultSchedule(),
      holidays: [],
    };
  }
  return {
    enabled: row.enabled,
    timezone: row.timezone,
    schedule: fullSchedule(row.schedule),
    holidays: row.holidays.map((h) => ({ date: h.date, name: h.name })),
  };
}

/**
 * The calendar SLA clocks count open minutes in, or null when business hours are off (never
 * saved, or saved disabled): then a policy with business_hours counts calendar time.
 */
export async function enabledCalendar(db: Kysely<DB>, workspaceId: string): Promise<Calendar | null> {
  const row = await db
    .selectFrom('business_hours')
    .select(['enabled', 'timezone', 'schedule', 'holidays'])
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', true)
    .executeTakeFirst();
  return calendarOf(row ?? null);
}

const compiled = new Map<string, Calendar>();

/**
 * The calendar of an enabled business_hours row (null without one, or with a zone this machine
 * does not know). Compiled once per distinct row: time zone checks are costly and every new
 * ticket under an SLA on business hours needs the calendar.
 */
export function calendarOf(row: CalendarInput | null): Calendar | null {
  if (!row) return null;
  const key = JSON.stringify([row.timezone, row.schedule, row.holidays]);
  let calendar = compiled.get(key);
  if (!calendar) {
    if (!isTimeZoneName(row.timezone)) return null;
    calendar = compileCalendar({ timezone: row.timezone, schedule: row.schedule, holidays: row.holidays });
    if (compiled.size >= 1000) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, calendar);
  }
  return calendar;
}

export async function getBusinessHours(deps: Deps, ctx: RequestContext): Promise<BusinessHoursView> {
  return loadBusinessHours(deps.database.db, ctx.workspaceId);
}

/** A real calendar date YYYY-MM-DD (the schema checked the shape). */
function isRealDate(s: string): boolean {
  const [y, m, d] = s.split('-').map(Number) as [number, number, number];
  if (y < 1900 || y > 2999 || m < 1 || m > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** The checks a schema cannot make; the first failure is a 422 at its location. */
function validate(input: PutInput): BusinessHoursView {
  const timezone = input.timezone.trim();
  if (!isTimeZoneName(timezone)) throw invalid('body.timezone', 'is not an IANA time zone name (e.g. Europe/Berlin)');
  const schedule = {} as ScheduleView;
  for (const day of DAY_KEYS as readonly DayKey[]) {
    const ranges = input.schedule[day] ?? [];
    const at = `body.schedule.${day}`;
    const parsed = ranges.map((r, i) => {
      for (const side of ['start', 'end'] as const) {
        const m = minuteOfDay(r[side]);
        if (!Number.isFinite(m)) throw invalid(`${at}.${i}.${side}`, 'must be a time HH:MM');
        if (m % 15 !== 0) throw invalid(`${at}.${i}.${side}`, 'must be on the quarter hour (:00, :15, :30 or :45)');
      }
      const s = minuteOfDay(r.start);
      const e = minuteOfDay(r.end);
      if (s === 1440) throw invalid(`${at}.${i}.start`, '24:00 only ends a day');
      if (e <= s) throw invalid(`${at}.${i}.end`, 'must be after start');
      return { i, s, e, range: { start: r.start, end: r.end } };
    });
    const sorted = [...parsed].sort((a, b) => a.s - b.s || a.i - b.i);
    for (let k = 1; k < sorted.length; k++) {
      const prev = sorted[k - 1]!;
      const cur = sorted[k]!;
      if (cur.s < prev.e) {
        const later = Math.max(prev.i, cur.i);
        throw invalid(`${at}.${later}`, `overlaps range ${Math.min(prev.i, cur.i)} of the same day`);
      }
    }
    schedule[day] = sorted.map((p) => p.range);
  }
  const seen = new Set<string>();
  const holidays = input.holidays.map((h, i) => {
    if (!isRealDate(h.date)) throw invalid(`body.holidays.${i}.date`, 'is not a calendar date YYYY-MM-DD');
    if (seen.has(h.date)) throw invalid(`body.holidays.${i}.date`, 'is listed twice');
    seen.add(h.date);
    const name = h.name.trim();
    if (name === '') throw invalid(`body.holidays.${i}.name`, 'must not be blank');
    return { date: h.date, name };
  });
  holidays.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return { enabled: input.enabled, timezone, schedule, holidays };
}

/** PUT: the whole object, validated before anything is written; audit business_hours.updated. */
export async function putBusinessHours(deps: Deps, ctx: RequestContext, input: PutInput): Promise<BusinessHoursView> {
  const view = validate(input);
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await loadBusinessHours(u.trx, ctx.workspaceId);
    await u.trx
      .insertInto('business_hours')
      .values({
        workspace_id: ctx.workspaceId,
        enabled: view.enabled,
        timezone: view.timezone,
        schedule: JSON.stringify(view.schedule),
        holidays: JSON.stringify(view.holidays),
      })
      .onConflict((oc) =>
        oc.column('workspace_id').doUpdateSet({
          enabled: view.enabled,
          timezone: view.timezone,
          schedule: JSON.stringify(view.schedule),
          holidays: JSON.stringify(view.holidays),
          updated_at: sql<Date>`now()`,
        }),
      )
      .execute();
    const keys = ['enabled', 'timezone', 'schedule', 'holidays'] as const;
    const changes = keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(view[k]));
    if (changes.length > 0) {
      await recordAudit(u.trx, ctx, {
        action: 'business_hours.updated',
        entityType: 'workspace',
        entityId: ctx.workspaceId,
        data: {
          changes,
          from: Object.fromEntries(changes.map((k) => [k, before[k]])),
          to: Object.fromEntries(changes.map((k) => [k, view[k]])),
        },
      });
    }
    return view;
  });
}
