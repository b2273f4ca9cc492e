import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../platform/http/pagination.js';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';

/** trusted_form_senders entries, at most. */
export const MAX_TRUSTED_FORM_SENDERS = 50;
/** Signature and auto-reply HTML, before sanitizing. */
export const MAX_MAILBOX_HTML = 100_000;

const Tls = Type.Union([Type.Literal('tls'), Type.Literal('starttls'), Type.Literal('none')], {
  description: 'tls (implicit TLS), starttls (upgrade after connecting) or none (plain; loopback test servers).',
});
const Host = Type.String({ minLength: 1, maxLength: 253, description: 'A host name or IP address.' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Username = Type.String({ minLength: 1, maxLength: 320 });
const Email = Type.String({ minLength: 3, maxLength: 254, format: 'email' });

export const MailboxConfig = Type.Object(
  {
    imap_host: Type.Optional(Host),
    imap_port: Type.Optional(Port),
    imap_username: Type.Optional(Username),
    imap_tls: Type.Optional(Tls),
    smtp_host: Type.Optional(Host),
    smtp_port: Type.Optional(Port),
    smtp_username: Type.Optional(Username),
    smtp_tls: Type.Optional(Tls),
    oauth_email: Type.Optional(Type.String()),
  },
  { title: 'MailboxConfig' },
);

/** The same keys for writes; in a PATCH, null removes a key and absent keys stay as they are. */
const ConfigInput = (nullable: boolean) => {
  const n = <T extends Parameters<typeof Nullable>[0]>(s: T) => (nullable ? Nullable(s) : s);
  return Type.Object(
    {
      imap_host: Type.Optional(n(Host)),
      imap_port: Type.Optional(n(Port)),
      imap_username: Type.Optional(n(Username)),
      imap_tls: Type.Optional(n(Tls)),
      smtp_host: Type.Optional(n(Host)),
      smtp_port: Type.Optional(n(Port)),
      smtp_username: Type.Optional(n(Username)),
      smtp_tls: Type.Optional(n(Tls)),
      oauth_email: Type.Optional(n(Email)),
    },
    { additionalProperties: false },
  );
};

export const InboundKind = Type.Union([
  Type.Literal('forwarding'),
  Type.Literal('imap'),
  Type.Literal('google'),
  Type.Literal('microsoft'),
]);
export const OutboundKind = Type.Union([
  Type.Literal('smtp'),
  Type.Literal('google'),
  Type.Literal('microsoft'),
  Type.Literal('system'),
]);
export const MailboxStatus = Type.Union([Type.Literal('active'), Type.Literal('error'), Type.Literal('disabled')]);

export const Mailbox = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    display_name: Type.String(),
    inbound_kind: InboundKind,
    outbound_kind: OutboundKind,
    forwarding_address: Type.String({ description: 'Forward the mailbox’s mail here (generated, never changes).' }),
    config: MailboxConfig,
    team_id: Nullable(Type.String()),
    signature_html: Type.String(),
    auto_reply_enabled: Type.Boolean(),
    auto_reply_subject: Type.String(),
    auto_reply_html: Type.String(),
    status: MailboxStatus,
    last_error: Nullable(Type.String()),
    last_synced_at: Nullable(Timestamp),
    trusted_form_senders: Type.Array(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Mailbox' },
);

const Name = Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters, trimmed.' });
const DisplayName = Type.String({
  maxLength: 100,
  description: 'The From name of outgoing mail (defaults to the name).',
});
const Html = Type.String({ maxLength: MAX_MAILBOX_HTML, description: 'HTML, sanitized before storage.' });
const Subject = Type.String({ maxLength: 200 });
const Secret = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'Write-only: stored encrypted, never returned.',
});
const TrustedFormSenders = Type.Array(Type.String({ minLength: 2, maxLength: 254 }), {
  maxItems: MAX_TRUSTED_FORM_SENDERS,
  description:
    'Exact addresses or `@domain`; replaces the stored list; at most 50; domains of public email providers are refused.',
});

export const CreateMailboxBody = Body({
  name: Name,
  email: Email,
  display_name: Type.Optional(DisplayName),
  inbound_kind: Type.Optional(InboundKind),
  outbound_kind: Type.Optional(OutboundKind),
  config: Type.Optional(ConfigInput(false)),
  team_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
  signature_html: Type.Optional(Html),
  auto_reply_enabled: Type.Optional(Type.Boolean()),
  auto_reply_subject: Type.Optional(Subject),
  auto_reply_html: Type.Optional(Html),
  trusted_form_senders: Type.Optional(TrustedFormSenders),
  password: Type.Optional(Secret),
  smtp_password: Type.Optional(Secret),
});

export const PatchMailboxBody = Body({
  name: Type.Optional(Name),
  email: Type.Optional(Email),
  display_name: Type.Optional(DisplayName),
  inbound_kind: Type.Optional(InboundKind),
  outbound_kind: Type.Optional(OutboundKind),
  config: Type.Optional(ConfigInput(true)),
  team_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
  signature_html: Type.Optional(Html),
  auto_reply_enabled: Type.Optional(Type.Boolean()),
  auto_reply_subject: Type.Optional(Subject),
  auto_reply_html: Type.Optional(Html),
  trusted_form_senders: Type.Optional(TrustedFormSenders),
  status: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
      description: 'disabled pauses the mailbox; active resumes it (error is set by the service only).',
    }),
  ),
  password: Type.Optional(Nullable(Secret)),
  smtp_password: Type.Optional(Nullable(Secret)),
});

export const ListMailboxesQuery = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);

const Check = Type.Object({
  ok: Type.Boolean(),
  error: Nullable(Type.String({ description: 'Why the check failed; null when ok.' })),
});

export const MailboxTestResult = Type.Object({ inbound: Check, outbound: Check }, { title: 'MailboxTestResult' });
