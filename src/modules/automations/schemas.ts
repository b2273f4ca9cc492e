import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Timestamp } from '../../platform/http/schemas.js';

export const TRIGGERS = ['ticket_created', 'customer_replied', 'agent_replied', 'ticket_updated'] as const;
export type Trigger = (typeof TRIGGERS)[number];

export const ACTION_TYPES = [
  'set_status',
  'set_priority',
  'set_severity',
  'assign_user',
  'assign_team',
  'add_tag',
  'remove_tag',
  'send_reply',
  'add_note',
  'mark_spam',
  'ai_triage',
  'set_field',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** Conditions and actions per automation, at most (ai_decide conditions: 3). */
export const MAX_CONDITIONS = 50;
export const MAX_ACTIONS = 50;
export const MAX_AI_DECIDE = 3;
/** Automations per workspace: every ticket change reads the enabled ones of its trigger. */
export const MAX_AUTOMATIONS = 500;

const Trigger = Type.Union(
  TRIGGERS.map((t) => Type.Literal(t)),
  { description: 'When the automation runs.' },
);

const ConditionValue = Type.Union(
  [
    Type.String({ maxLength: 1000 }),
    Type.Number(),
    Type.Boolean(),
    Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 }),
  ],
  {
    description:
      'What the field is compared with: text, an enum value, a label name (or a comma-separated list for ' +
      'contains / not_contains on tag), a custom field value (FieldOp rules), or the probability for ai_decide.',
  },
);

export const Condition = Type.Object(
  {
    field: Type.String({
      minLength: 1,
      maxLength: 60,
      description:
        'subject, body, from_email, channel, mailbox_id, priority, severity, status, tag, sentiment, ai_decide, ' +
        'field.<key> (ticket field) or contact.field.<key> (contact field).',
    }),
    op: Type.String({
      minLength: 1,
      maxLength: 20,
      description:
        'contains, not_contains, equals, not_equals, or a FieldOp of the custom field type (gt, lt for ai_decide).',
    }),
    value: Type.Optional(ConditionValue),
    question: Type.Optional(
      Type.String({ minLength: 3, maxLength: 300, description: 'ai_decide only: 3 to 300 plain-text characters.' }),
    ),
  },
  { additionalProperties: false, title: 'AutomationCondition' },
);

export const Action = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 40, description: ACTION_TYPES.join(', ') }),
    value: Type.Optional(
      Type.String({
        maxLength: 500_000,
        description:
          'A status, priority, severity (or "" to clear), member id, team id, label name or id, HTML body ' +
          '(send_reply, add_note), or the field value as a string (set_field). Nothing for mark_spam and ai_triage.',
      }),
    ),
    field: Type.Optional(
      Type.String({ minLength: 1, maxLength: 60, description: 'set_field only: the ticket field key.' }),
    ),
  },
  { additionalProperties: false, title: 'AutomationAction' },
);

export const Automation = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    trigger: Trigger,
    conditions: Type.Array(Condition),
    actions: Type.Array(Action),
    enabled: Type.Boolean(),
    position: Type.Integer(),
    run_count: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Automation' },
);

const Name = Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters, trimmed.' });
const Conditions = Type.Array(Condition, {
  maxItems: MAX_CONDITIONS,
  description: `All must hold (up to ${MAX_CONDITIONS}; at most ${MAX_AI_DECIDE} ai_decide).`,
});
const Actions = Type.Array(Action, { minItems: 1, maxItems: MAX_ACTIONS, description: 'Applied in order.' });
const Position = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Run order (default: after the last).' });

export const CreateAutomationBody = Body({
  name: Name,
  trigger: Trigger,
  conditions: Type.Optional(Conditions),
  actions: Actions,
  enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  position: Type.Optional(Position),
});

export const PatchAutomationBody = Body({
  name: Type.Optional(Name),
  trigger: Type.Optional(Trigger),
  conditions: Type.Optional(Conditions),
  actions: Type.Optional(Actions),
  enabled: Type.Optional(Type.Boolean()),
  position: Type.Optional(Position),
});

export const ListAutomationsQuery = Type.Object(
  {
    trigger: Type.Optional(Trigger),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false },
);
