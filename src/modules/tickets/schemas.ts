import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp, UserRef } from '../../platform/http/schemas.js';
import { Attachment } from '../attachments/schemas.js';
import { Custom } from '../companies/schemas.js';
import { FieldParams, FieldsInput, FieldValues } from '../custom-fields/schemas.js';
import { TagNameList, TagRef } from '../tags/schemas.js';

export const STATUSES = ['open', 'pending', 'on_hold', 'solved', 'closed'] as const;
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const SEVERITIES = ['sev1', 'sev2', 'sev3', 'sev4'] as const;
export const CHANNELS = ['email', 'chat', 'api', 'portal'] as const;
export type TicketStatus = (typeof STATUSES)[number];

const literals = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

export const Status = literals(STATUSES);
export const Priority = literals(PRIORITIES);
export const Severity = literals(SEVERITIES);
export const Channel = literals(CHANNELS);

export const ContactRef = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
});

export const Sla = Type.Object({
  policy_id: Nullable(Type.String()),
  first_response_due_at: Nullable(Timestamp),
  next_response_due_at: Nullable(
    Type.String({
      format: 'date-time',
      description:
        "When the next agent reply is due: set while a customer's message (after the first agent reply) waits for one under a policy with next_response_minutes; null otherwise.",
    }),
  ),
  resolution_due_at: Nullable(Timestamp),
  breached: Type.Boolean(),
});

export const Csat = Type.Object({ score: Type.Number(), comment: Nullable(Type.String()) });

export const Ticket = Type.Object(
  {
    id: Type.String(),
    number: Type.Integer(),
    subject: Type.String(),
    status: Status,
    priority: Priority,
    severity: Nullable(Severity),
    channel: Channel,
    mailbox_id: Nullable(Type.String()),
    contact: Nullable(ContactRef),
    assignee: Nullable(UserRef),
    team_id: Nullable(Type.String()),
    tags: Type.Array(TagRef),
    sla: Nullable(Sla),
    first_responded_at: Nullable(Timestamp),
    solved_at: Nullable(Timestamp),
    snoozed_until: Nullable(Timestamp),
    last_message_at: Timestamp,
    last_customer_message_at: Nullable(Timestamp),
    last_message_preview: Type.String(),
    message_count: Type.Integer(),
    spam: Type.Boolean(),
    csat: Nullable(Csat),
    custom: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Free-form values; a merged ticket carries merged_into {id, number}.',
    }),
    fields: FieldValues,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Ticket' },
);

/** Ticket in a path: its id, its number, or `#` + number (sent as %23). */
export const TicketParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64, description: 'Ticket id, number, or %23 + number.' }) },
  { additionalProperties: false },
);

const Subject = Type.String({ minLength: 1, maxLength: 998, description: 'At most 998 characters (one email line).' });
export const BodyHtml = Type.String({
  minLength: 1,
  maxLength: 500_000,
  description: 'HTML; sanitized with an allowlist before storage.',
});
const Uuid = Type.String({ format: 'uuid' });
const EmailList = Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 50, uniqueItems: true });
export const MessageKind = Type.Union([Type.Literal('reply'), Type.Literal('note')]);

export const CreateTicketBody = Body({
  subject: Subject,
  contact_id: Type.Optional(Uuid),
  contact: Type.Optional(
    Body({
      email: Type.String({ format: 'email', maxLength: 254 }),
      name: Type.Optional(Type.String({ maxLength: 200 })),
    }),
  ),
  channel: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('api')], { description: 'Default api.' })),
  mailbox_id: Type.Optional(Uuid),
  body_html: Type.Optional(BodyHtml),
  kind: Type.Optional(Type.Union([Type.Literal('reply'), Type.Literal('note')], { description: 'Default reply.' })),
  priority: Type.Optional(Priority),
  severity: Type.Optional(Nullable(Severity)),
  assignee_id: Type.Optional(Nullable(Uuid)),
  team_id: Type.Optional(Nullable(Uuid)),
  status: Type.Optional(Status),
  custom: Type.Optional(Custom),
  fields: Type.Optional(FieldsInput),
  tags: Type.Optional(TagNameList),
});

export const PatchTicketFields = {
  subject: Type.Optional(Subject),
  status: Type.Optional(Status),
  priority: Type.Optional(Priority),
  severity: Type.Optional(Nullable(Severity)),
  assignee_id: Type.Optional(Nullable(Uuid)),
  team_id: Type.Optional(Nullable(Uuid)),
  snoozed_until: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  spam: Type.Optional(Type.Boolean()),
  custom: Type.Optional(Custom),
  fields: Type.Optional(FieldsInput),
  tags: Type.Optional(TagNameList),
  add_tags: Type.Optional(TagNameList),
  remove_tags: Type.Optional(TagNameList),
};
export const PatchTicketBody = Body(PatchTicketFields);

export const BulkBody = Body({
  ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: 100,
    uniqueItems: true,
    description: 'Ticket ids or numbers, up to 100.',
  }),
  patch: Type.Optional(Body(PatchTicketFields)),
  delete: Type.Optional(Type.Literal(true)),
});
export const BulkResult = Type.Object({
  data: Type.Array(Ticket, { description: 'The changed tickets (empty for a delete).' }),
  deleted_ids: Type.Array(Type.String()),
});

export const MergeBody = Body({
  into_id: Type.String({ minLength: 1, maxLength: 64, description: 'The ticket to merge into: id or number.' }),
});

const csv = (pattern: string, description: string) =>
  Type.String({ minLength: 1, maxLength: 200, pattern: `^(${pattern})(,(${pattern}))*$`, description });

export const SORTS = ['last_message_at', 'created_at', 'priority', 'severity', 'due'] as const;

export const ListTicketsQuery = Type.Object(
  {
    status: Type.Optional(csv(STATUSES.join('|'), 'Comma-separated statuses.')),
    priority: Type.Optional(csv(PRIORITIES.join('|'), 'Comma-separated priorities.')),
    severity: Type.Optional(csv(`${SEVERITIES.join('|')}|none`, 'Comma-separated sev1 to sev4 and none.')),
    assignee: Type.Optional(
      Type.String({
        pattern: '^(me|none|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$',
        description: 'me, none or a user id.',
      }),
    ),
    team_id: Type.Optional(Uuid),
    mailbox_id: Type.Optional(Uuid),
    contact_id: Type.Optional(Uuid),
    follow_up_of: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          "A ticket's id: the tickets opened as its follow-ups (a customer's message after it closed; custom.follow_up_of names it).",
      }),
    ),
    channel: Type.Optional(csv(CHANNELS.join('|'), 'Comma-separated channels.')),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'A label name (any case).' })),
    view_id: Type.Optional(Type.String({ format: 'uuid', description: "A saved view's filters, added to these." })),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Words of the subject, messages, or contact name/email (partial words match); a number finds that ticket.',
      }),
    ),
    spam: Type.Optional(Type.Boolean({ description: 'Default false: spam is left out unless asked for.' })),
    sort: Type.Optional(
      Type.String({
        pattern: `^(${SORTS.join('|')}|field\\.[a-z][a-z0-9_]{0,39})$`,
        description: `${SORTS.join(', ')} or field.<key>. Default last_message_at; with q, relevance.`,
      }),
    ),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  {
    additionalProperties: false,
    // field.<key>=v and field.<key>[op]=v
    patternProperties: FieldParams,
  },
);

export const TicketCounts = Type.Object(
  {
    unassigned: Type.Integer(),
    mine: Type.Integer(),
    open: Type.Integer(),
    pending: Type.Integer(),
    on_hold: Type.Integer(),
    solved: Type.Integer(),
    spam: Type.Integer(),
    views: Type.Record(Type.String(), Type.Integer()),
  },
  { title: 'TicketCounts' },
);

export const ActivityActor = Type.Object({
  type: Type.Union([
    Type.Literal('user'),
    Type.Literal('api_key'),
    Type.Literal('system'),
    Type.Literal('ai'),
    Type.Literal('automation'),
  ]),
  user: Nullable(UserRef),
  api_key_id: Nullable(Type.String()),
  automation_id: Nullable(Type.String()),
  contact_id: Type.Optional(
    Type.String({
      description:
        'The contact who acted, when a customer did (type system): a message by email, chat or the portal ' +
        'reopening the ticket. Absent for every other actor.',
    }),
  ),
});

export const Activity = Type.Object(
  {
    id: Type.String(),
    ticket_id: Type.String(),
    type: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown()),
    actor: ActivityActor,
    created_at: Timestamp,
  },
  { title: 'Activity' },
);

export const Message = Type.Object(
  {
    id: Type.String(),
    ticket_id: Type.String(),
    kind: MessageKind,
    direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
    author: Type.Object({
      type: Type.Union(
        [
          Type.Literal('contact'),
          Type.Literal('user'),
          Type.Literal('system'),
          Type.Literal('api'),
          Type.Literal('ai'),
        ],
        {
          description:
            "ai: the workspace's assistant answering a chat visitor from published articles (docs/ai.md " +
            '"AI answers in the chat"); its name is from_name.',
        },
      ),
      user: Nullable(UserRef),
      contact: Nullable(ContactRef),
    }),
    body_html: Type.String(),
    body_text: Type.String(),
    has_quoted: Type.Boolean(),
    subject: Type.String(),
    from_email: Type.String(),
    from_name: Type.String(),
    to: Type.Array(Type.String()),
    cc: Type.Array(Type.String()),
    bcc: Type.Array(Type.String()),
    attachments: Type.Array(Attachment),
    delivery_status: Type.Union([
      Type.Literal('none'),
      Type.Literal('pending'),
      Type.Literal('sent'),
      Type.Literal('failed'),
      Type.Literal('bounced'),
    ]),
    delivery_error: Nullable(Type.String()),
    reply_to: Nullable(Type.String()),
    auth_failed: Type.Boolean(),
    form_sender: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { title: 'Message' },
);

export const CreateMessageBody = Body({
  kind: MessageKind,
  body_html: BodyHtml,
  cc: Type.Optional(EmailList),
  bcc: Type.Optional(EmailList),
  attachment_ids: Type.Optional(Type.Array(Uuid, { maxItems: 20, uniqueItems: true })),
  status: Type.Optional(Status),
});

export const MessageOriginal = Type.Object(
  {
    id: Type.String(),
    ticket_id: Type.String(),
    body_html: Type.String({ description: 'The whole original, quoted history included.' }),
    body_text: Type.String(),
    has_quoted: Type.Boolean(),
  },
  { title: 'MessageOriginal' },
);
