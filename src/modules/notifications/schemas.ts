import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Nullable, Timestamp } from '../../platform/http/schemas.js';

export const NotificationType = Type.Union(
  [
    'assigned',
    'mentioned',
    'customer_replied',
    'sla_breached',
    'ai_handoff',
    'ai_cap_reached',
    'ai_balance_low',
    'ai_balance_out',
    'auto_recharge_failed',
    'ai_key_failed',
  ].map((t) => Type.Literal(t)),
);

export const NotificationSettings = Type.Object(
  {
    muted: Type.Array(NotificationType, {
      description:
        'The notification types you are not told about in this workspace: none is created for you (nor its ' +
        'notification.created event). Empty: every type.',
    }),
  },
  { title: 'NotificationSettings', description: 'Your notification choices in this workspace.' },
);

export const PatchNotificationSettingsBody = Type.Object(
  {
    muted: Type.Array(NotificationType, {
      uniqueItems: true,
      maxItems: 10,
      description: 'The whole list of types to mute (replaces it); [] to be told about everything.',
    }),
  },
  { additionalProperties: false },
);

export const Notification = Type.Object(
  {
    id: Type.String(),
    type: NotificationType,
    ticket: Nullable(Type.Object({ id: Type.String(), number: Type.Integer(), subject: Type.String() })),
    data: Type.Object({}, { additionalProperties: true }),
    read_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { title: 'Notification' },
);

export const NotificationPage = Type.Object({
  data: Type.Array(Notification),
  next_cursor: Nullable(Type.String()),
  unread_count: Type.Integer({ description: "The caller's unread notifications in this workspace (all pages)." }),
});

export const ListNotificationsQuery = Type.Object(
  {
    sort: Type.Optional(
      Type.Union([Type.Literal('newest'), Type.Literal('unread_first')], {
        default: 'newest',
        description:
          'newest: by time, newest first (default); unread_first: unread ones (newest first), then read ones.',
      }),
    ),
    unread: Type.Optional(Type.Boolean({ description: 'true: unread notifications only.' })),
    limit: Type.Optional(PageQuery.limit),
    cursor: Type.Optional(PageQuery.cursor),
  },
  { additionalProperties: false },
);

export const MAX_READ_IDS = 100;

export const ReadNotificationsBody = Type.Object(
  {
    ids: Type.Optional(
      Type.Array(Type.String({ format: 'uuid' }), {
        minItems: 1,
        maxItems: MAX_READ_IDS,
        description: "Notifications to mark read (ids that are not the caller's are ignored).",
      }),
    ),
    all: Type.Optional(Type.Literal(true, { description: "true marks every one of the caller's notifications read." })),
  },
  { additionalProperties: false, description: 'Exactly one of ids and all.' },
);

export const ReadResult = Type.Object({
  read: Type.Integer({ description: 'How many notifications this call marked read.' }),
  unread_count: Type.Integer(),
});
