// Business hours: the pure "add N open minutes to instant T" across DST switches in both
// directions (both hemispheres, a half-hour zone), holidays, several ranges a day, overnight
// stretches and 24:00, a schedule with no open time; and GET/PUT /v1/business-hours: defaults
// from settings.timezone, the full-object round trip, the audit entry, access, every bad input
// with its location (nothing changes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addOpenMinutes,
  type CalendarInput,
  compileCalendar,
  isOpenAt,
  MAX_SEARCH_DAYS,
} from '../../../src/modules/business-hours/calendar.js';
import { addMember, isErrorBody, newApiKey, newTenant, type Service, startService } from '../../support/helpers.js';

const WEEKDAYS_9_5 = {
  mon: [{ start: '09:00', end: '17:00' }],
  tue: [{ start: '09:00', end: '17:00' }],
  wed: [{ start: '09:00', end: '17:00' }],
  thu: [{ start: '09:00', end: '17:00' }],
  fri: [{ start: '09:00', end: '17:00' }],
};
const ALL_DAY = [{ start: '00:00', end: '24:00' }];
const EVERY_DAY = { mon: ALL_DAY, tue: ALL_DAY, wed: ALL_DAY, thu: ALL_DAY, fri: ALL_DAY, sat: ALL_DAY, sun: ALL_DAY };

function cal(timezone: string, schedule: CalendarInput['schedule'], holidays: string[] = []) {
  return compileCalendar({ timezone, schedule, holidays: holidays.map((date) => ({ date })) });
}

/** `from` + minutes as an ISO string (null when there is no answer). */
function add(c: ReturnType<typeof cal>, from: string, minutes: number, maxDays?: number): string | null {
  return addOpenMinutes(c, new Date(from), minutes, maxDays)?.toISOString() ?? null;
}

describe('adding open minutes: America/New_York', () => {
  const ny = cal('America/New_York', WEEKDAYS_9_5);

  it('carries the rest over a weekend with the March switch (EST → EDT)', () => {
    // Friday 7 March 2025 16:00 EST = 21:00Z; one hour left on Friday.
    expect(add(ny, '2025-03-07T21:00:00Z', 60)).toBe('2025-03-07T22:00:00.000Z'); // ends at closing, 17:00 EST
    // The next open minute is Monday 09:00 EDT (13:00Z): the offset changed on Sunday.
    expect(add(ny, '2025-03-07T21:00:00Z', 61)).toBe('2025-03-10T13:01:00.000Z');
    expect(add(ny, '2025-03-07T21:00:00Z', 120)).toBe('2025-03-10T14:00:00.000Z');
  });

  it('carries the rest over a weekend with the November switch (EDT → EST)', () => {
    // Friday 31 October 2025 16:30 EDT = 20:30Z; Monday 3 November opens at 09:00 EST = 14:00Z.
    expect(add(ny, '2025-10-31T20:30:00Z', 60)).toBe('2025-11-03T14:30:00.000Z');
  });

  it('starts at the next opening from a closed instant, and counts from T inside a range', () => {
    // Saturday → Monday 09:00 EST (14:00Z) + 30.
    expect(add(ny, '2025-01-04T15:00:00Z', 30)).toBe('2025-01-06T14:30:00.000Z');
    // Tuesday 07:00 EST → opens 09:00.
    expect(add(ny, '2025-01-07T12:00:00Z', 15)).toBe('2025-01-07T14:15:00.000Z');
    // Inside a range, seconds kept.
    expect(add(ny, '2025-01-07T15:00:30Z', 1)).toBe('2025-01-07T15:01:30.000Z');
    // Zero minutes: the first open instant at or after T.
    expect(add(ny, '2025-01-04T15:00:00Z', 0)).toBe('2025-01-06T14:00:00.000Z');
    expect(add(ny, '2025-01-07T15:00:00Z', 0)).toBe('2025-01-07T15:00:00.000Z');
  });

  it('counts real minutes on switch days: the skipped hour is not open, the repeated one is open twice', () => {
    const always = cal('America/New_York', EVERY_DAY);
    // Saturday 8 March 12:00 EST + 24 real hours = Sunday 13:00 EDT: still 17:00Z.
    expect(add(always, '2025-03-08T17:00:00Z', 24 * 60)).toBe('2025-03-09T17:00:00.000Z');
    // Sunday 9 March 00:00-04:00 local is 3 real hours (02:00-03:00 does not exist).
    const sunNight = cal('America/New_York', { sun: [{ start: '00:00', end: '04:00' }] });
    expect(add(sunNight, '2025-03-09T05:00:00Z', 180)).toBe('2025-03-09T08:00:00.000Z');
    // One more minute: the next Sunday, 00:01 EDT.
    expect(add(sunNight, '2025-03-09T05:00:00Z', 181)).toBe('2025-03-16T04:01:00.000Z');
    // Sunday 2 November 00:00-04:00 local is 5 real hours (01:00-02:00 happens twice).
    expect(add(sunNight, '2025-11-02T04:00:00Z', 300)).toBe('2025-11-02T09:00:00.000Z');
    expect(add(sunNight, '2025-11-02T04:00:00Z', 301)).toBe('2025-11-09T05:01:00.000Z');
  });

  it('puts a boundary inside the skipped hour on the switch itself', () => {
    // 01:00-02:30 on 9 March: the clock reads 01:00..01:59 EST, then 03:00 EDT (past closing): 60 minutes.
    const c = cal('America/New_York', { sun: [{ start: '01:00', end: '02:30' }] });
    expect(add(c, '2025-03-09T06:00:00Z', 60)).toBe('2025-03-09T07:00:00.000Z');
    expect(add(c, '2025-03-09T06:00:00Z', 61)).toBe('2025-03-16T05:01:00.000Z');
    // 02:15-02:45 does not exist that day at all: closed, the next Sunday counts.
    const gone = cal('America/New_York', { sun: [{ start: '02:15', end: '02:45' }] });
    expect(add(gone, '2025-03-09T05:00:00Z', 10)).toBe('2025-03-16T06:25:00.000Z');
  });
});

describe('adding open minutes: other zones', () => {
  it('Europe/Berlin: spring and autumn switches on a 24-hour weekend desk', () => {
    const weekend = cal('Europe/Berlin', { sat: ALL_DAY, sun: ALL_DAY });
    // Saturday 29 March 2025 23:00 CET (22:00Z) + 3 real hours = Sunday 03:00 CEST... 01:00Z.
    expect(add(weekend, '2025-03-29T22:00:00Z', 180)).toBe('2025-03-30T01:00:00.000Z');
    // Sunday 30 March is 23 hours long: Sat 00:00 CET → the weekend holds 47 hours.
    expect(add(weekend, '2025-03-28T23:00:00Z', 47 * 60)).toBe('2025-03-30T22:00:00.000Z');
    expect(add(weekend, '2025-03-28T23:00:00Z', 47 * 60 + 1)).toBe('2025-04-04T22:01:00.000Z');
    // Sunday 26 October is 25 hours long: the weekend holds 49 hours.
    expect(add(weekend, '2025-10-24T22:00:00Z', 49 * 60)).toBe('2025-10-26T23:00:00.000Z');
  });

  it('Europe/Berlin: holidays close whole local days', () => {
    const berlin = cal('Europe/Berlin', WEEKDAYS_9_5, ['2025-12-25', '2025-12-26']);
    // Wednesday 24 December 16:00 CET: one hour, then Thursday and Friday are holidays, then
    // the weekend: Monday 29 December 09:00-10:00 CET.
    expect(add(berlin, '2025-12-24T15:00:00Z', 120)).toBe('2025-12-29T09:00:00.000Z');
    // Without the holidays: Thursday 10:00.
    expect(add(cal('Europe/Berlin', WEEKDAYS_9_5), '2025-12-24T15:00:00Z', 120)).toBe('2025-12-25T09:00:00.000Z');
    // Starting on a holiday.
    expect(add(berlin, '2025-12-25T10:00:00Z', 5)).toBe('2025-12-29T08:05:00.000Z');
  });

  it('Australia/Sydney (southern hemisphere): April and October switches', () => {
    const syd = cal('Australia/Sydney', WEEKDAYS_9_5);
    // Friday 4 April 2025 16:00 AEDT (+11) = 05:00Z; Monday 7 April opens 09:00 AEST (+10) = 23:00Z Sunday.
    expect(add(syd, '2025-04-04T05:00:00Z', 120)).toBe('2025-04-07T00:00:00.000Z');
    // Friday 3 October 2025 16:00 AEST (+10) = 06:00Z; Monday 6 October 09:00 AEDT (+11) = 22:00Z Sunday.
    expect(add(syd, '2025-10-03T06:00:00Z', 90)).toBe('2025-10-05T22:30:00.000Z');
  });

  it('Asia/Kolkata (+05:30): several ranges a day with a lunch break', () => {
    const day = [
      { start: '09:30', end: '13:00' },
      { start: '14:00', end: '18:30' },
    ];
    const kol = cal('Asia/Kolkata', { mon: day, tue: day, wed: day, thu: day, fri: day });
    // Monday 6 January 2025 12:30 IST = 07:00Z: 30 minutes before lunch, 30 after.
    expect(add(kol, '2025-01-06T07:00:00Z', 60)).toBe('2025-01-06T09:00:00.000Z');
    // A whole day is 8 hours: from Monday 09:30 + 8h = Monday 18:30 (13:00Z); + 1 more = Tuesday 09:31.
    expect(add(kol, '2025-01-06T04:00:00Z', 480)).toBe('2025-01-06T13:00:00.000Z');
    expect(add(kol, '2025-01-06T04:00:00Z', 481)).toBe('2025-01-07T04:01:00.000Z');
    // During lunch: counting starts at 14:00.
    expect(add(kol, '2025-01-06T08:00:00Z', 15)).toBe('2025-01-06T08:45:00.000Z');
  });

  it('Pacific/Auckland: an overnight stretch across the September switch (24:00 joins two days)', () => {
    const nz = cal('Pacific/Auckland', {
      sat: [{ start: '22:00', end: '24:00' }],
      sun: [{ start: '00:00', end: '06:00' }],
    });
    // Saturday 27 September 2025 22:00 NZST (+12) = 10:00Z; Sunday 28th loses 02:00-03:00.
    // Saturday 2 hours + Sunday 00:00 NZST to 06:00 NZDT (5 real hours) = 7 hours.
    expect(add(nz, '2025-09-27T10:00:00Z', 420)).toBe('2025-09-27T17:00:00.000Z');
    // One minute more: Saturday 4 October 22:01 NZDT (+13) = 09:01Z.
    expect(add(nz, '2025-09-27T10:00:00Z', 421)).toBe('2025-10-04T09:01:00.000Z');
    // Across midnight without a switch: Saturday 23:00 + 120 = Sunday 01:00 (NZDT, +13).
    expect(add(nz, '2025-10-04T10:00:00Z', 120)).toBe('2025-10-04T12:00:00.000Z');
  });

  it('tells whether an instant is open', () => {
    const ny = cal('America/New_York', WEEKDAYS_9_5, ['2025-07-04']);
    expect(isOpenAt(ny, new Date('2025-07-03T14:00:00Z'))).toBe(true); // Thursday 10:00 EDT
    expect(isOpenAt(ny, new Date('2025-07-03T21:00:00Z'))).toBe(false); // 17:00: closing is exclusive
    expect(isOpenAt(ny, new Date('2025-07-04T14:00:00Z'))).toBe(false); // holiday
    expect(isOpenAt(ny, new Date('2025-07-05T14:00:00Z'))).toBe(false); // Saturday
  });
});

describe('a schedule without open time', () => {
  it('answers null at once when no weekday has a range', () => {
    // Even with no horizon at all: a loop over the days would never end (the test would time out).
    expect(add(cal('UTC', {}), '2025-01-01T00:00:00Z', 10, Number.MAX_SAFE_INTEGER)).toBeNull();
    expect(add(cal('UTC', { mon: [] }), '2025-01-01T00:00:00Z', 0, Number.MAX_SAFE_INTEGER)).toBeNull();
  });

  it('answers null when holidays cover every open day of the search horizon, and stops at it', () => {
    // Open on Mondays only; the next five Mondays are holidays; a 30-day horizon finds nothing.
    const c = cal('Europe/Berlin', { mon: [{ start: '09:00', end: '17:00' }] }, [
      '2025-01-06',
      '2025-01-13',
      '2025-01-20',
      '2025-01-27',
      '2025-02-03',
    ]);
    expect(add(c, '2025-01-01T00:00:00Z', 10, 30)).toBeNull();
    // The default horizon looks further: the first Monday that is no holiday.
    expect(add(c, '2025-01-01T00:00:00Z', 10)).toBe('2025-02-10T08:10:00.000Z');
  });

  it('gives up after MAX_SEARCH_DAYS when the open time is too little, quickly', () => {
    // A quarter of an hour a week cannot hold 365 days of open minutes within ten years.
    const c = cal('America/New_York', { wed: [{ start: '12:00', end: '12:15' }] });
    const t0 = Date.now();
    expect(add(c, '2025-01-01T00:00:00Z', 525_600)).toBeNull();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(MAX_SEARCH_DAYS).toBeGreaterThanOrEqual(3650);
  });
});

// ---------------------------------------------------------------------------------------------
// HTTP

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const DEFAULT_SCHEDULE = { ...WEEKDAYS_9_5, sat: [], sun: [] };

const VALID = {
  enabled: true,
  timezone: 'Europe/Berlin',
  schedule: {
    mon: [
      { start: '08:00', end: '12:00' },
      { start: '13:00', end: '17:30' },
    ],
    tue: [{ start: '09:00', end: '17:00' }],
    wed: [{ start: '09:00', end: '17:00' }],
    thu: [{ start: '09:00', end: '17:00' }],
    fri: [
      { start: '00:00', end: '06:00' },
      { start: '22:00', end: '24:00' },
    ],
  },
  holidays: [
    { date: '2025-12-26', name: 'Second Christmas Day' },
    { date: '2025-12-25', name: 'Christmas' },
  ],
};

describe('GET /v1/business-hours', () => {
  it('answers the defaults before anything is saved, in settings.timezone (UTC when unset)', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const r = await svc.api.get('/v1/business-hours', viewer.as);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ enabled: false, timezone: 'UTC', schedule: DEFAULT_SCHEDULE, holidays: [] });
    expect((await svc.api.patch('/v1/workspace', { settings: { timezone: 'Asia/Kolkata' } }, t.as)).status).toBe(200);
    expect((await svc.api.get('/v1/business-hours', viewer.as)).body.timezone).toBe('Asia/Kolkata');
  });
});

describe('PUT /v1/business-hours', () => {
  it('replaces the whole object (weekdays left out are closed; ranges and holidays sorted) with an audit entry', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body: VALID });
    expect(r.status).toBe(200);
    const expected = {
      enabled: true,
      timezone: 'Europe/Berlin',
      schedule: { ...VALID.schedule, sat: [], sun: [] },
      holidays: [VALID.holidays[1], VALID.holidays[0]],
    };
    expect(r.body).toEqual(expected);
    expect((await svc.api.get('/v1/business-hours', t.as)).body).toEqual(expected);
    // The settings timezone no longer matters once saved.
    await svc.api.patch('/v1/workspace', { settings: { timezone: 'Asia/Tokyo' } }, t.as);
    expect((await svc.api.get('/v1/business-hours', t.as)).body.timezone).toBe('Europe/Berlin');

    const audit = await svc.api.get('/v1/audit-logs?action=business_hours.updated', t.as);
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    const entry = audit.body.data[0];
    expect(entry.actor.type).toBe('user');
    expect(entry.actor.user.id).toBe(t.owner.userId);
    expect(entry.data.changes).toEqual(['enabled', 'timezone', 'schedule', 'holidays']);
    expect(entry.data.to.timezone).toBe('Europe/Berlin');
    expect(entry.data.from.enabled).toBe(false);

    // Ranges given out of order come back in order; a second PUT replaces, not merges.
    const again = await svc.api.req('PUT', '/v1/business-hours', {
      ...t.as,
      body: {
        enabled: false,
        timezone: 'America/New_York',
        schedule: {
          sat: [
            { start: '13:00', end: '15:00' },
            { start: '09:00', end: '12:00' },
          ],
        },
        holidays: [],
      },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      enabled: false,
      timezone: 'America/New_York',
      schedule: {
        mon: [],
        tue: [],
        wed: [],
        thu: [],
        fri: [],
        sat: [
          { start: '09:00', end: '12:00' },
          { start: '13:00', end: '15:00' },
        ],
        sun: [],
      },
      holidays: [],
    });
    // The same object again: nothing changed, no new audit entry.
    await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body: again.body });
    const audit2 = await svc.api.get('/v1/audit-logs?action=business_hours.updated', t.as);
    expect(audit2.body.data).toHaveLength(2);
  });

  it('is for admins and settings:write keys; members and settings:read keys only read', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const reader = await newApiKey(svc.api, t, ['settings:read']);
    const writer = await newApiKey(svc.api, t, ['settings:write']);
    const tickets = await newApiKey(svc.api, t, ['tickets:read', 'tickets:write']);

    const put = (as: object) => svc.api.req('PUT', '/v1/business-hours', { ...as, body: VALID });
    for (const as of [agent.as, { token: reader.key }, { token: tickets.key }]) {
      const r = await put(as);
      expect(r.status).toBe(403);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    expect((await svc.api.get('/v1/business-hours', t.as)).body.enabled).toBe(false);
    expect((await put(admin.as)).status).toBe(200);
    expect((await put({ token: writer.key })).status).toBe(200);
    expect((await svc.api.get('/v1/business-hours', agent.as)).status).toBe(200);
    expect((await svc.api.get('/v1/business-hours', { token: reader.key })).status).toBe(200);
    expect((await svc.api.get('/v1/business-hours', { token: tickets.key })).status).toBe(403);
    expect((await svc.api.get('/v1/business-hours')).status).toBe(401);
  });

  it('refuses bad schedules, zones and holidays with 422 at their location, changing nothing', async () => {
    const t = await newTenant(svc.api);
    expect((await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body: VALID })).status).toBe(200);
    const saved = (await svc.api.get('/v1/business-hours', t.as)).body;
    const range = (start: string, end: string) => ({ start, end });
    const withMon = (mon: unknown) => ({ ...VALID, schedule: { ...VALID.schedule, mon } });
    const holidays = Array.from({ length: 101 }, (_, i) => ({
      date: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10),
      name: `Day ${i}`,
    }));
    const cases: Array<[unknown, string]> = [
      [withMon([range('09:00', '12:00'), range('13:10', '17:00')]), 'body.schedule.mon.1.start'],
      [withMon([range('09:05', '12:00')]), 'body.schedule.mon.0.start'],
      [withMon([range('09:00', '12:20')]), 'body.schedule.mon.0.end'],
      [withMon([range('09:00', '12:00'), range('11:00', '13:00')]), 'body.schedule.mon.1'],
      [withMon([range('13:00', '17:00'), range('09:00', '13:15')]), 'body.schedule.mon.1'],
      [withMon([range('12:00', '12:00')]), 'body.schedule.mon.0.end'],
      [withMon([range('14:00', '12:00')]), 'body.schedule.mon.0.end'],
      [withMon([range('24:00', '24:00')]), 'body.schedule.mon.0.start'],
      [
        withMon([range('08:00', '09:00'), range('10:00', '11:00'), range('12:00', '13:00'), range('14:00', '15:00')]),
        'body.schedule.mon',
      ],
      [withMon([range('25:00', '26:00')]), 'body.schedule.mon.0.start'],
      [withMon([range('9:00', '17:00')]), 'body.schedule.mon.0.start'],
      [withMon([range('09:00', '24:15')]), 'body.schedule.mon.0.end'],
      [withMon([{ start: '09:00' }]), 'body.schedule.mon.0.end'],
      [withMon([{ start: '09:00', end: '10:00', note: 'x' }]), 'body.schedule.mon.0.note'],
      [{ ...VALID, schedule: { ...VALID.schedule, monday: [range('09:00', '17:00')] } }, 'body.schedule.monday'],
      [{ ...VALID, timezone: 'Mars/Olympus_Mons' }, 'body.timezone'],
      [{ ...VALID, timezone: '' }, 'body.timezone'],
      [{ ...VALID, holidays }, 'body.holidays'],
      [{ ...VALID, holidays: [{ date: '2025-02-30', name: 'Nope' }] }, 'body.holidays.0.date'],
      [{ ...VALID, holidays: [{ date: '2025-13-01', name: 'Nope' }] }, 'body.holidays.0.date'],
      [{ ...VALID, holidays: [{ date: '25-12-2025', name: 'Nope' }] }, 'body.holidays.0.date'],
      [
        {
          ...VALID,
          holidays: [
            { date: '2025-12-25', name: 'A' },
            { date: '2025-12-25', name: 'B' },
          ],
        },
        'body.holidays.1.date',
      ],
      [{ ...VALID, holidays: [{ date: '2025-12-25', name: '   ' }] }, 'body.holidays.0.name'],
      [{ ...VALID, holidays: [{ date: '2025-12-25' }] }, 'body.holidays.0.name'],
      [{ timezone: 'UTC', schedule: {}, holidays: [] }, 'body.enabled'],
      [{ enabled: true, schedule: {}, holidays: [] }, 'body.timezone'],
      [{ ...VALID, extra: true }, 'body.extra'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body });
      const label = `${location} ${JSON.stringify(body).slice(0, 120)}`;
      expect(r.status, label).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed'), label).toBe(true);
      expect(
        r.body.errors.map((e: { location: string }) => e.location),
        label,
      ).toContain(location);
    }
    expect((await svc.api.get('/v1/business-hours', t.as)).body).toEqual(saved);
    const audit = await svc.api.get('/v1/audit-logs?action=business_hours.updated', t.as);
    expect(audit.body.data).toHaveLength(1);
  });

  it('keeps workspaces apart', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    expect((await svc.api.req('PUT', '/v1/business-hours', { ...a.as, body: VALID })).status).toBe(200);
    expect((await svc.api.get('/v1/business-hours', b.as)).body.enabled).toBe(false);
  });
});
