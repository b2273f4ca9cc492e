import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { Priority } from '../tickets/schemas.js';

/** Policies per workspace. */
export const MAX_SLA_POLICIES = 100;
/** A target of at most 365 days. */
export const MAX_SLA_MINUTES = 525_600;

export const SlaPolicy = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    priority: Nullable(Priority),
    first_response_minutes: Type.Integer(),
    next_response_minutes: Nullable(
      Type.Integer({
        description:
          'Minutes from a customer message on an answered ticket to the next agent reply; null: no next-response clock.',
      }),
    ),
    resolution_minutes: Type.Integer(),
    business_hours: Type.Boolean(),
    enabled: Type.Boolean(),
    position: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SlaPolicy' },
);

export const SlaPolicyList = Type.Object({ data: Type.Array(SlaPolicy) });

const Name = Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters, trimmed.' });
/** The ticket priority the policy applies to; null for any priority. */
const PolicyPriority = Nullable(Priority);
const Minutes = (what: string) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_SLA_MINUTES,
    description: `Minutes to the ${what} (1 to ${MAX_SLA_MINUTES}); open minutes only with business_hours.`,
  });
/** Optional target: null (the default) for none. */
const NextResponseMinutes = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: MAX_SLA_MINUTES,
    description: `Minutes from a customer message on a ticket already answered (the oldest one not answered yet) to the next agent reply (1 to ${MAX_SLA_MINUTES}); open minutes only with business_hours. null: no next-response clock. Default null.`,
  }),
);
const BusinessHoursFlag = Type.Boolean({
  description:
    "Count only the open minutes of the workspace's business hours (while those are enabled). Default false.",
});
const Enabled = Type.Boolean({ description: 'Disabled policies never match. Default true.' });
const Position = Type.Integer({
  minimum: 0,
  maximum: 1_000_000,
  description: 'Evaluation order, lowest first (ties: oldest first). Default: after the last policy.',
});

export const CreateSlaPolicyBody = Body({
  name: Name,
  priority: Type.Optional(PolicyPriority),
  first_response_minutes: Minutes('first response'),
  next_response_minutes: Type.Optional(NextResponseMinutes),
  resolution_minutes: Minutes('resolution'),
  business_hours: Type.Optional(BusinessHoursFlag),
  enabled: Type.Optional(Enabled),
  position: Type.Optional(Position),
});

export const PatchSlaPolicyBody = Body({
  name: Type.Optional(Name),
  priority: Type.Optional(PolicyPriority),
  first_response_minutes: Type.Optional(Minutes('first response')),
  next_response_minutes: Type.Optional(NextResponseMinutes),
  resolution_minutes: Type.Optional(Minutes('resolution')),
  business_hours: Type.Optional(BusinessHoursFlag),
  enabled: Type.Optional(Enabled),
  position: Type.Optional(Position),
});
