import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { ALL_EVENTS, EVENT_TYPES } from './catalog.js';

export const MAX_URL_LENGTH = 2000;

/** A catalog type or `*` (every type). */
const EventName = Type.Unsafe<string>({
  type: 'string',
  enum: [ALL_EVENTS, ...EVENT_TYPES],
  description: 'An event type of the catalog, or `*` for every type.',
});

export const Webhook = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    team_ids: Type.Array(Type.String(), { description: 'Private teams whose events this endpoint receives.' }),
    previous_secret_expires_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'After POST /v1/webhooks/{id}/rotate-secret: until when deliveries also carry a v1 signature made with ' +
          'the secret it replaced. Null when none does.',
      }),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Webhook' },
);

/** Hours the replaced secret keeps signing after a rotation: at most a week. */
export const MAX_PREVIOUS_SECRET_HOURS = 168;

export const RotateSecretBody = Body({
  previous_secret_hours: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_PREVIOUS_SECRET_HOURS,
      default: 24,
      description:
        'Hours the replaced secret keeps signing deliveries beside the new one (a second v1 in SVC-Signature), ' +
        `so receivers can switch without losing any (0 to ${MAX_PREVIOUS_SECRET_HOURS}; default 24). 0 ends it now, ` +
        'for a secret that leaked.',
    }),
  ),
});

export const CreatedWebhook = Type.Intersect(
  [
    Webhook,
    Type.Object({
      secret: Type.String({ description: 'The signing secret (`whsec_…`), in this response only.' }),
    }),
  ],
  { title: 'CreatedWebhook' },
);

const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'An https URL on the public internet (http and private addresses only with WEBHOOK_ALLOW_PRIVATE).',
});
const Events = Type.Array(EventName, { minItems: 1, maxItems: EVENT_TYPES.length + 1, uniqueItems: true });
const Description = Nullable(Type.String({ maxLength: 500 }));
const TeamIds = Type.Array(Type.String({ format: 'uuid' }), {
  maxItems: 100,
  uniqueItems: true,
  description: 'Private teams granted: their tickets’ events are delivered in full. Replaces the whole list.',
});

export const CreateWebhookBody = Body({
  url: Url,
  events: Events,
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  team_ids: Type.Optional(TeamIds),
});

export const PatchWebhookBody = Body({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean()),
  team_ids: Type.Optional(TeamIds),
});

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]);

export const Delivery = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: DeliveryStatus,
    attempts: Type.Integer(),
    response_status: Nullable(Type.Integer()),
    duration_ms: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    next_attempt_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { title: 'WebhookDelivery' },
);

export const DeliveryWithBody = Type.Intersect(
  [
    Delivery,
    Type.Object({
      body: Type.String({
        description: 'The request body sent (the envelope without topics, as JSON text), exactly as signed.',
      }),
    }),
  ],
  { title: 'WebhookDeliveryWithBody' },
);

export const ListWebhooksQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);

export const ListDeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
    status: Type.Optional(DeliveryStatus),
  },
  { additionalProperties: false },
);

export const DeliveryParams = Type.Object(
  { id: Type.String({ maxLength: 64 }), delivery_id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
