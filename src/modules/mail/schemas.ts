import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Nullable, Timestamp } from '../../platform/http/schemas.js';

export const MailStatus = Type.Object(
  {
    system_mailer: Type.Union([Type.Literal('smtp'), Type.Literal('outbox')], {
      description:
        'smtp: SMTP_URL is set and mail through the system mailer is sent. outbox: it is unset, and every mail ' +
        'through the system mailer is kept in the outbox instead (GET /v1/mail/outbox), not sent.',
    }),
    from: Type.String({
      description: "The system mailer's sender (SMTP_URL's `from`, or no-reply at PUBLIC_URL's host).",
    }),
    outbox_mailbox_ids: Type.Array(Type.String(), {
      description:
        "This workspace's mailboxes whose replies are kept in the outbox, not sent: those with outbound_kind " +
        'system (not disabled) while system_mailer is outbox. Empty when mail is set up.',
    }),
    default_mailbox_id: Nullable(
      Type.String({
        description:
          'The mailbox replies on a ticket without one are sent from (the oldest not disabled); null when the ' +
          'workspace has none: they go through the system mailer.',
      }),
    ),
  },
  { title: 'MailStatus' },
);

const OutboxKind = Type.Union(
  [
    Type.Literal('reply'),
    Type.Literal('auto_reply'),
    Type.Literal('csat_request'),
    Type.Literal('portal_confirmation'),
    Type.Literal('portal_sign_in'),
    Type.Literal('invitation'),
    Type.Literal('notice'),
  ],
  { description: 'What the mail is.' },
);

const outboxFields = {
  id: Type.String(),
  kind: OutboxKind,
  from: Type.String({ description: 'The From header as it would have been sent.' }),
  to: Type.Array(Type.String(), { description: 'Recipients, `Name <address>` or the address alone.' }),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  subject: Type.String(),
  ticket_id: Nullable(Type.String({ description: 'The ticket the mail belongs to (a reply, a rating request).' })),
  message_id: Nullable(Type.String({ description: 'The reply (a message of the ticket) this mail is.' })),
  created_at: Timestamp,
};

export const OutboxMailSummary = Type.Object(outboxFields, { title: 'OutboxMailSummary' });

export const OutboxMail = Type.Object(
  {
    ...outboxFields,
    text: Type.String({ description: 'The plain-text body (empty if it can no longer be read: SECRET_KEY changed).' }),
    html: Nullable(
      Type.String({ description: 'The HTML body, sanitized like message bodies; null for a text-only mail.' }),
    ),
    links: Type.Array(Type.String(), {
      description: 'The absolute http(s) links of the body, in order, each once (sign-in, rating, invitation links).',
    }),
    attachments: Type.Array(
      Type.Object({ filename: Type.String(), content_type: Type.String(), size_bytes: Type.Integer() }),
      { description: "A reply's files (their bytes stay with the message's attachments)." },
    ),
  },
  { title: 'OutboxMail' },
);

export const ListOutboxQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);
