// Business-hours arithmetic: "add N open minutes to instant T" in a workspace's time zone.
// Pure functions, no I/O. Every offset comes from the IANA time zone database through Luxon;
// only the calendar of plain dates (which weekday, the next day) is computed here.
//
// Rules:
// - A schedule names, per weekday, up to 3 ranges of local wall-clock time [start, end) on the
//   quarter hour; `24:00` ends a day, so `22:00-24:00` on Monday and `00:00-06:00` on Tuesday
//   make one overnight stretch.
// - A holiday closes its whole local day, whatever the schedule says.
// - A range boundary is the first instant at which the local clock reads that time. On a day
//   the clocks spring forward, a boundary inside the skipped hour falls on the switch itself
//   (01:00-02:30 in New York on the March switch is 60 real minutes: the clock reads 01:00 to
//   01:59, then 03:00, past closing). On the day they fall back, a boundary inside the repeated
//   hour is its first occurrence (00:00-24:00 is then 25 real hours long).
// - Counting starts at T when T is inside a range, otherwise at the next opening. The result is
//   the instant the N-th open minute ends: it may equal a closing time (17:00), it never jumps to
//   the next opening for nothing.
// - A schedule with no open time at all (no ranges, or every open day a holiday for longer than
//   the search horizon) has no answer: the function returns null after looking at most
//   `MAX_SEARCH_DAYS` local days ahead, and at once when no weekday has a range.
import { DateTime, IANAZone } from 'luxon';

export const DAY_KEYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type DayKey = (typeof DAY_KEYS)[number];

export interface TimeRange {
  start: string;
  end: string;
}

export interface CalendarInput {
  timezone: string;
  schedule: Partial<Record<DayKey, TimeRange[]>>;
  holidays: Array<{ date: string }>;
}

/** How far ahead (in local days) an answer is looked for before giving up: ten years. */
export const MAX_SEARCH_DAYS = 3660;

/** A calendar ready for arithmetic: ranges as minutes of the day per weekday (Monday = 0). */
export interface Calendar {
  zone: IANAZone;
  /** [startMinute, endMinute) per weekday, sorted; endMinute may be 1440. */
  days: Array<Array<[number, number]>>;
  holidays: Set<string>;
  /** Whether any weekday has a range at all. */
  hasOpenTime: boolean;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** `HH:MM` → minutes since midnight (`24:00` → 1440); NaN when malformed. */
export function minuteOfDay(hhmm: string): number {
  const m = /^([0-9]{2}):([0-9]{2})$/.exec(hhmm);
  if (!m) return Number.NaN;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h === 24 && min === 0) return 1440;
  if (h > 23 || min > 59) return Number.NaN;
  return h * 60 + min;
}

export function isTimeZoneName(tz: string): boolean {
  return IANAZone.isValidZone(tz);
}

export function compileCalendar(input: CalendarInput): Calendar {
  if (!IANAZone.isValidZone(input.timezone)) throw new Error(`unknown time zone ${input.timezone}`);
  const days = DAY_KEYS.map((k) =>
    (input.schedule[k] ?? [])
      .map((r) => [minuteOfDay(r.start), minuteOfDay(r.end)] as [number, number])
      .filter(([s, e]) => Number.isFinite(s) && Number.isFinite(e) && s < e)
      .sort((a, b) => a[0] - b[0]),
  );
  return {
    zone: IANAZone.create(input.timezone),
    days,
    holidays: new Set(input.holidays.map((h) => h.date)),
    hasOpenTime: days.some((d) => d.length > 0),
  };
}

/** A plain calendar date (no time zone): year, month 1-12, day. */
interface PlainDate {
  y: number;
  m: number;
  d: number;
}

const dateKey = (p: PlainDate) =>
  `${String(p.y).padStart(4, '0')}-${String(p.m).padStart(2, '0')}-${String(p.d).padStart(2, '0')}`;

function nextDate(p: PlainDate): PlainDate {
  const t = new Date(Date.UTC(p.y, p.m - 1, p.d) + DAY);
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

/** Monday = 0 … Sunday = 6. */
const weekdayOf = (p: PlainDate) => (new Date(Date.UTC(p.y, p.m - 1, p.d)).getUTCDay() + 6) % 7;

/** The zone's offset (minutes) at an instant. */
const offsetAt = (zone: IANAZone, ms: number) => zone.offset(ms);

/**
 * The first instant at which the local clock of `zone` reads `minute` (0..1440) of `date`:
 * the first occurrence of a repeated wall time, the switch itself for a skipped one.
 */
export function wallToInstant(zone: IANAZone, date: PlainDate, minute: number): number {
  // The answer depends only on the zone's rules: every SLA clock of a workspace asks the same
  // few dates and minutes, and each fresh answer costs several Intl offset lookups.
  const key = `${zone.name}|${dateKey(date)}|${minute}`;
  let t = instants.get(key);
  if (t === undefined) {
    t = computeWallToInstant(zone, date, minute);
    if (instants.size >= MAX_INSTANTS) instants.clear();
    instants.set(key, t);
  }
  return t;
}

const instants = new Map<string, number>();
const MAX_INSTANTS = 50_000;

function computeWallToInstant(zone: IANAZone, date: PlainDate, minute: number): number {
  const wall = Date.UTC(date.y, date.m - 1, date.d) + minute * MINUTE;
  const offsets = [...new Set([offsetAt(zone, wall - DAY), offsetAt(zone, wall), offsetAt(zone, wall + DAY)])];
  let best: number | null = null;
  for (const o of offsets) {
    const t = wall - o * MINUTE;
    if (offsetAt(zone, t) === o && (best === null || t < best)) best = t;
  }
  if (best !== null) return best;
  // Skipped by a forward switch: the first instant whose local reading is at or past `wall`.
  const hi0 = wall - Math.min(...offsets) * MINUTE;
  let lo = wall - Math.max(...offsets) * MINUTE;
  let hi = hi0;
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + offsetAt(zone, mid) * MINUTE >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

function localDateOf(zone: IANAZone, ms: number): PlainDate {
  const dt = DateTime.fromMillis(ms, { zone });
  return { y: dt.year, m: dt.month, d: dt.day };
}

/**
 * `from` plus `minutes` minutes of open time, or null when the calendar has none within
 * MAX_SEARCH_DAYS. Zero minutes gives the first open instant at or after `from`.
 */
export function addOpenMinutes(cal: Calendar, from: Date, minutes: number, maxDays = MAX_SEARCH_DAYS): Date | null {
  if (!cal.hasOpenTime) return null;
  const start = from.getTime();
  let remaining = Math.max(0, minutes) * MINUTE;
  // The local day before `from` too: its range may end at 24:00 of a day whose local midnight
  // comes after `from` (never with real zones, but cheap to be sure of).
  let date = localDateOf(cal.zone, start - DAY);
  for (let i = 0; i <= maxDays + 1; i++, date = nextDate(date)) {
    const ranges = cal.days[weekdayOf(date)]!;
    if (ranges.length === 0 || cal.holidays.has(dateKey(date))) continue;
    for (const [s, e] of ranges) {
      const closes = wallToInstant(cal.zone, date, e);
      if (closes <= start) continue;
      const opens = Math.max(start, wallToInstant(cal.zone, date, s));
      if (closes <= opens) continue; // a range the clock skipped entirely
      const open = closes - opens;
      if (remaining === 0) return new Date(opens);
      if (open >= remaining) return new Date(opens + remaining);
      remaining -= open;
    }
  }
  return null;
}

/** Whether the calendar is open at `at`. */
export function isOpenAt(cal: Calendar, at: Date): boolean {
  const t = at.getTime();
  let date = localDateOf(cal.zone, t - DAY);
  for (let i = 0; i < 3; i++, date = nextDate(date)) {
    if (cal.holidays.has(dateKey(date))) continue;
    for (const [s, e] of cal.days[weekdayOf(date)]!) {
      if (wallToInstant(cal.zone, date, s) <= t && t < wallToInstant(cal.zone, date, e)) return true;
    }
  }
  return false;
}

/** Plain minutes of calendar time (no business hours). */
export const addCalendarMinutes = (from: Date, minutes: number): Date => new Date(from.getTime() + minutes * MINUTE);
