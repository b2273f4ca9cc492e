import { Type } from '@sinclair/typebox';
import { Body } from '../../platform/http/schemas.js';

export const AssignMode = Type.Union(
  [Type.Literal('none'), Type.Literal('round_robin'), Type.Literal('load_balanced')],
  {
    description:
      'none: nobody is picked; round_robin: online agents in turn; load_balanced: the one with the fewest open tickets (ties in turn).',
  },
);

export const TargetType = Type.Union([Type.Literal('mailbox'), Type.Literal('team')]);

export const AssignmentRule = Type.Object(
  {
    target_type: TargetType,
    target_id: Type.String({ format: 'uuid', description: 'A mailbox or team of this workspace.' }),
    mode: AssignMode,
  },
  { additionalProperties: false },
);

export const MAX_RULES = 100;

export const Assignment = Type.Object(
  {
    mode: AssignMode,
    rules: Type.Array(AssignmentRule),
    auto_away_minutes: Type.Integer({ description: '0 = off, otherwise 10 to 1440.' }),
  },
  { title: 'Assignment' },
);

export const PatchAssignmentBody = Body({
  mode: Type.Optional(AssignMode),
  auto_away_minutes: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1440,
      description: '0 turns auto-away off; otherwise 10 to 1440 minutes without a heartbeat shows a member as away.',
    }),
  ),
  rules: Type.Optional(
    Type.Array(AssignmentRule, {
      maxItems: MAX_RULES,
      description: 'Replaces the whole list. The first rule matching a new ticket (its mailbox or its team) decides.',
    }),
  ),
});
