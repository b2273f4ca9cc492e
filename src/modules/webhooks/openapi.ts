// The webhook catalog of the OpenAPI document: the top-level `webhooks`
// section holds one entry per event type an endpoint can receive, each a POST with the signature
// headers and the delivered body (delivery.ts deliveryBody: the envelope without topics), whose
// `data` lists the keys the service emits (catalog.ts, docs/webhooks.md) with the resources as the
// REST API returns them (the modules' response schemas, as `components.schemas`).
//
// Not here: `event.hidden` (a stand-in for replay and sockets; a webhook gets the full event of
// a private team it was granted, and nothing for the others) and `chat.typing` (gateway only).
// docs/decisions.md "OpenAPI: the webhook catalog" says why one entry per type.
import type { TSchema } from '@sinclair/typebox';
import { Automation } from '../automations/schemas.js';
import { Company } from '../companies/schemas.js';
import { Contact } from '../contacts/schemas.js';
import { CustomField, Entity } from '../custom-fields/schemas.js';
import { KbArticle, KbCollection } from '../kb/schemas.js';
import { Mailbox } from '../mailboxes/schemas.js';
import { Member } from '../members/schemas.js';
import { Notification } from '../notifications/schemas.js';
import { SavedReply } from '../saved-replies/schemas.js';
import { SlaPolicy } from '../sla/schemas.js';
import { TagGroup } from '../tag-groups/schemas.js';
import { Tag } from '../tags/schemas.js';
import { Team } from '../teams/schemas.js';
import { Activity, Message, Ticket } from '../tickets/schemas.js';
import { View } from '../views/schemas.js';
import { Workspace } from '../workspace/schemas.js';
import { EVENT_TYPES, TEST_EVENT } from './catalog.js';
import { Webhook } from './schemas.js';

/** The resources events carry, by their name in `components.schemas`. */
const RESOURCES = {
  Ticket,
  Message,
  Activity,
  Contact,
  Company,
  Tag,
  TagGroup,
  CustomField,
  Mailbox,
  Member,
  Workspace,
  Notification,
  SavedReply,
  View,
  Automation,
  SlaPolicy,
  KbArticle,
  KbCollection,
  Team,
  Webhook,
} satisfies Record<string, TSchema>;
type ResourceName = keyof typeof RESOURCES;

type JsonSchema = Record<string, unknown>;
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const id = (what: string): JsonSchema => ({ type: 'string', format: 'uuid', description: `The ${what} id.` });
const CHANGES: JsonSchema = {
  type: 'array',
  items: { type: 'string' },
  description: 'The names of the fields that changed.',
};

/** What one event type delivers: its `data` keys (all required) and words for the reader. */
interface EventDoc {
  summary: string;
  description?: string;
  data: Record<string, JsonSchema>;
  /** Only message.created can be public (replies on chat tickets). */
  visibility?: Array<'agents' | 'public'>;
  /** Subscribable, but no module emits it yet: `data` is left open. */
  notEmitted?: boolean;
}

const resourceName = (type: string) => type.split('.')[0]!;
const words = (type: string) => {
  const [resource, verb] = type.split('.') as [string, string];
  const text = `${resource.replace(/_/g, ' ')} ${verb}`;
  return text[0]!.toUpperCase() + text.slice(1);
};

/** `<resource>.created` and `.updated` carry the resource; `.deleted` its id. */
function crud(type: string, schema: ResourceName, extra: { updated?: Record<string, JsonSchema> } = {}): EventDoc {
  const resource = resourceName(type);
  if (type.endsWith('.deleted')) return { summary: words(type), data: { [`${resource}_id`]: id(resource) } };
  const data: Record<string, JsonSchema> = { [resource]: ref(schema) };
  if (type.endsWith('.updated')) Object.assign(data, extra.updated ?? {});
  return { summary: words(type), data };
}

const TICKET_ID = id('ticket');

/** Event types whose `data` is not plain CRUD, or that say more. */
const SPECIAL: Record<string, EventDoc> = {
  'ticket.updated': {
    summary: 'Ticket updated',
    description:
      '`changes` lists the changed fields (for example status, assignee_id, fields, custom, priority, severity, ' +
      'tags). AI summaries and triage results arrive as ticket.updated with `custom` in changes.',
    data: { ticket: ref('Ticket'), changes: CHANGES },
  },
  'message.created': {
    summary: 'Message created',
    description:
      'A reply or an internal note. `visibility` is public for replies on chat tickets, agents otherwise. ' +
      'Chat widget AI answers arrive as ordinary message.created.',
    data: { ticket_id: TICKET_ID, message: ref('Message') },
    visibility: ['agents', 'public'],
  },
  'message.updated': {
    summary: 'Message updated',
    description: 'The delivery status of an outbound email reply changed.',
    data: { ticket_id: TICKET_ID, message: ref('Message') },
  },
  'activity.created': {
    summary: 'Activity created',
    description: 'A timeline entry of a ticket that is not a message (status change, assignment, field change, …).',
    data: { ticket_id: TICKET_ID, activity: ref('Activity') },
  },
  'tag.merged': {
    summary: 'Tag merged',
    description: 'The tag `tag_id` was merged into `into` and is gone; records that carried it change without events.',
    data: { tag_id: id('merged (removed) tag'), into: id('surviving tag') },
  },
  'custom_field.deleted': {
    summary: 'Custom field deleted',
    data: {
      custom_field_id: id('custom field'),
      entity: Entity as unknown as JsonSchema,
      key: { type: 'string', description: 'The key the values were stored under.' },
    },
  },
  'mailbox.updated': crud('mailbox.updated', 'Mailbox', { updated: { changes: CHANGES } }),
  'member.added': { summary: 'Member added', data: { member: ref('Member') } },
  'member.updated': {
    summary: 'Member updated',
    description: 'Also on a change of picture, availability or open-ticket cap.',
    data: { member: ref('Member') },
  },
  'member.removed': { summary: 'Member removed', data: { user_id: id('user') } },
  'workspace.updated': {
    summary: 'Workspace updated',
    description: 'Name, settings, logo or brand image changed.',
    data: { workspace: ref('Workspace') },
  },
  'notification.created': {
    summary: 'Notification created',
    description:
      'A notification is personal: it goes to its user only (their realtime topic), so a webhook endpoint ' +
      'subscribed to this type receives none. Listed because the catalog accepts it.',
    data: { notification: ref('Notification') },
  },
  'view.created': {
    ...crud('view.created', 'View'),
    description: 'Shared views only: personal views are their owner’s and never reach webhooks.',
  },
  'view.updated': {
    ...crud('view.updated', 'View'),
    description: 'Shared views only. A shared view made personal arrives as view.deleted.',
  },
  'view.deleted': { ...crud('view.deleted', 'View'), description: 'Shared views only.' },
  'webhook.updated': {
    ...crud('webhook.updated', 'Webhook', { updated: { changes: CHANGES } }),
    description: 'Also when the service disables an endpoint whose deliveries failed for 3 days (changes: enabled).',
  },
  [TEST_EVENT]: {
    summary: 'Test event',
    description:
      'Sent by POST /v1/webhooks/{id}/test to that endpoint only; not part of the workspace stream (seq 0, not ' +
      'stored, not replayed) and cannot be subscribed to.',
    data: { webhook_id: id('webhook'), url: { type: 'string', description: 'The endpoint URL.' } },
  },
};

/** The components.schemas name of each resource with plain CRUD events (`<resource>.created`, ...). */
const SCHEMA_OF: Record<string, ResourceName> = {
  ticket: 'Ticket',
  contact: 'Contact',
  company: 'Company',
  tag: 'Tag',
  tag_group: 'TagGroup',
  custom_field: 'CustomField',
  mailbox: 'Mailbox',
  saved_reply: 'SavedReply',
  view: 'View',
  automation: 'Automation',
  sla_policy: 'SlaPolicy',
  kb_article: 'KbArticle',
  kb_collection: 'KbCollection',
  team: 'Team',
  webhook: 'Webhook',
};

/** Catalog rows whose modules do not exist yet (billing). */
const NOT_EMITTED: Record<string, string> = {
  billing: 'Billing (hosted offering only)',
};

function docOf(type: string): EventDoc {
  const special = SPECIAL[type];
  if (special) return special;
  const resource = resourceName(type);
  const planned = NOT_EMITTED[resource];
  if (planned) {
    return {
      summary: words(type),
      description: `Not emitted by this version of the service (its module does not exist yet); data will be: ${planned}.`,
      data: {},
      notEmitted: true,
    };
  }
  const schema = SCHEMA_OF[resource];
  if (!schema) throw new Error(`the OpenAPI webhook catalog does not describe ${type}`);
  return crud(type, schema);
}

const pascal = (type: string) =>
  type
    .split(/[._]/)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
/** `ticket.created` → `TicketCreatedEvent` in components.schemas. */
export const eventSchemaName = (type: string) => `${pascal(type)}Event`;

/** The delivered body of one type: the envelope without topics. */
function envelope(type: string, d: EventDoc): JsonSchema {
  const visibility = d.visibility ?? ['agents'];
  const data: JsonSchema = d.notEmitted
    ? { type: 'object', additionalProperties: true, description: d.description }
    : { type: 'object', required: Object.keys(d.data), properties: d.data };
  return {
    type: 'object',
    title: eventSchemaName(type),
    description: `The body of a ${type} delivery: the event envelope without topics.`,
    required: ['id', 'seq', 'workspace_id', 'type', 'visibility', 'data', 'occurred_at'],
    properties: {
      id: {
        type: 'string',
        format: 'uuid',
        description: 'UUID v7, unique; the SVC-Event-Id header. Deduplicate on it.',
      },
      seq: {
        type: 'integer',
        minimum: 0,
        description:
          type === TEST_EVENT
            ? 'Always 0: a test event is not part of the workspace stream.'
            : 'Increases by exactly one per event within a workspace; order by seq and occurred_at.',
      },
      workspace_id: { type: 'string', format: 'uuid' },
      type: { type: 'string', const: type },
      visibility:
        visibility.length === 1
          ? { type: 'string', const: visibility[0] }
          : {
              type: 'string',
              enum: visibility,
              description: 'public events may reach the end customer (chat widget).',
            },
      data,
      occurred_at: { type: 'string', format: 'date-time' },
    },
  };
}

export const WEBHOOK_EVENTS_TAG = 'webhook-events';

/** Shared header parameters, in `components.parameters`. */
const PARAMETERS = {
  WebhookSignature: {
    name: 'SVC-Signature',
    in: 'header',
    required: true,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256>`: the HMAC, keyed with the endpoint secret, of the text ' +
      '`<t>.<raw body>`. Recompute it over the raw body, compare in constant time, and reject a t more than ' +
      '5 minutes from your clock.',
    schema: { type: 'string', pattern: '^t=\\d+,v1=[0-9a-f]{64}$' },
  },
  WebhookEventId: {
    name: 'SVC-Event-Id',
    in: 'header',
    required: true,
    description: 'The event id (the body’s `id`): deliveries may repeat, deduplicate on it.',
    schema: { type: 'string', format: 'uuid' },
  },
};

/** One webhook (a Path Item with a POST) per event type. */
function webhookItem(type: string, d: EventDoc): JsonSchema {
  return {
    post: {
      tags: [WEBHOOK_EVENTS_TAG],
      summary: d.summary,
      description: [
        d.description,
        `Sent to endpoints subscribed to \`${type}\` or \`*\`` +
          (type === TEST_EVENT ? ' (here: only the endpoint being tested).' : '.'),
      ]
        .filter(Boolean)
        .join(' '),
      security: [],
      parameters: [
        { $ref: '#/components/parameters/WebhookSignature' },
        { $ref: '#/components/parameters/WebhookEventId' },
        {
          name: 'SVC-Event-Type',
          in: 'header',
          required: true,
          description: 'The event type (the body’s `type`).',
          schema: { type: 'string', enum: [type] },
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref(eventSchemaName(type)) } },
      },
      responses: {
        '2XX': { description: 'Any 2xx acknowledges the delivery.' },
        default: {
          description:
            'Any other status, a timeout or a connection error is a failure: the delivery is retried with ' +
            'exponential backoff.',
        },
      },
    },
  };
}

/** Every type a webhook endpoint can be sent: the catalog, then the test event. */
export const WEBHOOK_TYPES: readonly string[] = [...EVENT_TYPES, TEST_EVENT];

/** The `webhooks` section, and the schemas and parameters it refers to. */
export function webhookCatalog(): {
  webhooks: Record<string, JsonSchema>;
  schemas: Record<string, TSchema | JsonSchema>;
  parameters: Record<string, JsonSchema>;
  tag: { name: string; description: string };
} {
  const webhooks: Record<string, JsonSchema> = {};
  const schemas: Record<string, TSchema | JsonSchema> = { ...RESOURCES };
  for (const type of WEBHOOK_TYPES) {
    const d = docOf(type);
    webhooks[type] = webhookItem(type, d);
    schemas[eventSchemaName(type)] = envelope(type, d);
  }
  return {
    webhooks,
    schemas,
    parameters: PARAMETERS,
    tag: {
      name: WEBHOOK_EVENTS_TAG,
      description:
        'What a webhook endpoint receives: one POST per event, its body the event envelope without topics, signed ' +
        'in SVC-Signature. Events of a private team’s tickets reach only endpoints granted that team (team_ids); ' +
        'stand-ins (event.hidden) and personal events never reach webhooks. Any 2xx acknowledges; anything else ' +
        'is retried with backoff. Deliveries may repeat and arrive out of order.',
    },
  };
}
