import { Type } from '@sinclair/typebox';
import { Body } from '../../platform/http/schemas.js';

export const MAX_RANGES_PER_DAY = 3;
export const MAX_HOLIDAYS = 100;

const Time = Type.String({
  pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$',
  description: 'Local time HH:MM on the quarter hour (:00, :15, :30, :45); 24:00 ends the day.',
});

export const TimeRange = Type.Object(
  { start: Time, end: Time },
  { additionalProperties: false, description: 'Open from start (inclusive) to end (exclusive); start before end.' },
);

const Day = Type.Array(TimeRange, {
  maxItems: MAX_RANGES_PER_DAY,
  description: `Up to ${MAX_RANGES_PER_DAY} ranges that do not overlap; none means closed all day.`,
});

export const Schedule = Type.Object(
  { mon: Day, tue: Day, wed: Day, thu: Day, fri: Day, sat: Day, sun: Day },
  { additionalProperties: false },
);

/** In a PUT a weekday left out is closed. */
const OptionalDay = Type.Optional(Day);
const ScheduleInput = Type.Object(
  {
    mon: OptionalDay,
    tue: OptionalDay,
    wed: OptionalDay,
    thu: OptionalDay,
    fri: OptionalDay,
    sat: OptionalDay,
    sun: OptionalDay,
  },
  { additionalProperties: false, description: 'Keys mon to sun; a weekday left out is closed.' },
);

export const Holiday = Type.Object(
  {
    date: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'A local date YYYY-MM-DD.' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
  },
  { additionalProperties: false, description: 'A whole local day closed.' },
);

export const BusinessHours = Type.Object(
  {
    enabled: Type.Boolean(),
    timezone: Type.String({ description: 'IANA time zone name.' }),
    schedule: Schedule,
    holidays: Type.Array(Holiday),
  },
  { title: 'BusinessHours' },
);

export const PutBusinessHoursBody = Body({
  enabled: Type.Boolean({ description: 'When false, SLA policies count calendar time even with business_hours.' }),
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone name, e.g. Europe/Berlin.' }),
  schedule: ScheduleInput,
  holidays: Type.Array(Holiday, { maxItems: MAX_HOLIDAYS, description: `Up to ${MAX_HOLIDAYS}, distinct dates.` }),
});
