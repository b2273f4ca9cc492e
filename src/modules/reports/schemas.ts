import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';

/** A calendar date (start of that day in the report's time zone) or an RFC 3339 date-time. */
const BOUND_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:[0-9]{2}))?$';

export const OverviewQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        pattern: BOUND_PATTERN,
        description:
          'Start (inclusive): a date YYYY-MM-DD (midnight in the time zone) or an RFC 3339 date-time. ' +
          'Default: 30 days before `to`.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        pattern: BOUND_PATTERN,
        description:
          'End (exclusive), same forms as `from`. Default: the start of tomorrow in the time zone. ' +
          'At most one year after `from`.',
      }),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'IANA time zone of dates and of by_day. Default: the workspace setting timezone.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Minutes = Nullable(Type.Number({ description: 'Median in minutes (one decimal); null without data.' }));

const Count = Type.Integer({ minimum: 0 });

export const ReportOverview = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    timezone: Type.String(),
    created: Type.Integer({ description: 'Tickets created in the range.' }),
    solved: Type.Integer({ description: 'Tickets whose solve time (solved_at) is in the range.' }),
    open_now: Type.Integer({ description: 'Tickets open, pending or on hold right now (not range-bound).' }),
    first_response_p50_minutes: Minutes,
    resolution_p50_minutes: Minutes,
    csat_avg: Nullable(Type.Number({ description: 'Average score (two decimals) of tickets solved in the range.' })),
    csat_count: Count,
    sla_breached: Type.Integer({ description: 'Tickets created in the range whose SLA is breached.' }),
    by_day: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        created: Count,
        solved: Count,
        first_response_p50_minutes: Nullable(
          Type.Number({ description: 'Median first response (minutes) of the tickets created that day.' }),
        ),
        resolution_p50_minutes: Nullable(
          Type.Number({ description: 'Median resolution (minutes) of the tickets solved that day.' }),
        ),
        csat_avg: Nullable(Type.Number({ description: 'Average CSAT score of the tickets solved that day.' })),
        csat_count: Count,
      }),
    ),
    by_channel: Type.Object({ email: Count, chat: Count, api: Count, portal: Count }),
    by_severity: Type.Object({ sev1: Count, sev2: Count, sev3: Count, sev4: Count, none: Count }),
    by_agent: Type.Array(
      Type.Object({
        user: UserRef,
        solved: Count,
        first_response_p50_minutes: Minutes,
      }),
    ),
  },
  { title: 'ReportOverview' },
);
