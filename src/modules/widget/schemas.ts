// The chat widget's shapes (docs/widget.md): what a visitor sends and sees, and the widget
// settings admins change. Response schemas are allow-lists: an agent's email, a note or an
// internal field cannot leave through them.
import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { Attachment } from '../attachments/schemas.js';
import { Status } from '../tickets/schemas.js';

/** An origin as browsers send it: scheme://host[:port], no path. */
export const ORIGIN_PATTERN = '^https?://[^/?#\\s]+$';
export const MAX_ALLOWED_ORIGINS = 50;
export const MAX_BODY = 10_000;
/** The search box's longest query (as the help center's). */
export const ARTICLE_Q_MAX = 200;

export const WidgetKeyQuery = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 100, description: "The workspace's widget_key." }) },
  { additionalProperties: false },
);

export const WidgetConfig = Type.Object(
  {
    workspace_name: Type.String(),
    brand_color: Type.String(),
    greeting: Type.String(),
    help_center_url: Nullable(Type.String({ description: 'The public help center, null while it is off.' })),
    require_email: Type.Boolean(),
  },
  { title: 'WidgetConfig' },
);

export const SessionBody = Body({
  key: Type.String({ minLength: 1, maxLength: 100, description: "The workspace's widget_key." }),
  visitor_token: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Resume this visitor (svc_vis_…).' }),
  ),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  user_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: "Your site's id of the signed-in person." }),
  ),
  user_hash: Type.Optional(
    Type.String({
      pattern: '^[0-9a-fA-F]{64}$',
      description: 'Hex HMAC-SHA256 of user_id with the widget secret, computed on your server.',
    }),
  ),
  avatar_url: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2000,
      description:
        "The verified person's picture, an HTTPS URL (only with user_id and user_hash: 422 without them). " +
        'Fetched by the server in the background (public addresses only, redirects checked, 5 MB, 10 s), processed ' +
        'like an upload and kept as the contact’s picture (avatar_source widget) unless someone uploaded one; a ' +
        'picture that cannot be fetched is left out quietly.',
    }),
  ),
});

export const VisitorContact = Type.Object(
  {
    id: Type.String(),
    email: Nullable(Type.String()),
    name: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
  },
  { title: 'WidgetContact' },
);

export const WidgetSession = Type.Object(
  {
    visitor_token: Type.String({ description: 'Authorization: Visitor <visitor_token> on the other routes.' }),
    contact: VisitorContact,
    ws_token: Type.String({ description: 'Widget realtime token (purpose widget_ws, 5 minutes, valid at connect).' }),
    gateway_url: Type.String({ description: 'The widget socket: connect with the token parameter ws_token.' }),
    topic: Type.String({ description: "The socket topic to join: contact:<workspace_id>:<the contact's id>." }),
  },
  { title: 'WidgetSession' },
);

export const Conversation = Type.Object(
  {
    id: Type.String({ description: "The chat ticket's id." }),
    number: Type.Integer(),
    subject: Type.String(),
    status: Status,
    created_at: Timestamp,
    last_message_at: Nullable(Timestamp),
    csat_url: Nullable(
      Type.String({
        description:
          'The rating page (/csat/{token}) while the conversation is solved, the workspace asks for ratings (csat_enabled) and the solve is less than 30 days old; otherwise null. The widget shows it in the conversation, as the solved email does.',
      }),
    ),
  },
  { title: 'WidgetConversation' },
);

export const WidgetMessage = Type.Object(
  {
    id: Type.String(),
    conversation_id: Type.String({ description: 'The conversation (chat ticket) the message belongs to.' }),
    direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
    body_html: Type.String(),
    body_text: Type.String(),
    author: Type.Object({
      type: Type.Union([Type.Literal('contact'), Type.Literal('agent'), Type.Literal('ai')]),
      name: Nullable(Type.String()),
      avatar_url: Nullable(Type.String()),
    }),
    attachments: Type.Array(Attachment),
    created_at: Timestamp,
  },
  { title: 'WidgetMessage' },
);

const MessageText = Type.String({
  minLength: 1,
  maxLength: MAX_BODY,
  description: 'Plain text (1 to 10,000 characters); HTML in it is kept as text.',
});
const AttachmentIds = Type.Array(Type.String({ format: 'uuid' }), {
  maxItems: 10,
  uniqueItems: true,
  description: 'Uploads from POST /v1/widget/attachments.',
});

export const NewConversationBody = Body({ body: MessageText, attachment_ids: Type.Optional(AttachmentIds) });
export const NewMessageBody = Body({ body: MessageText, attachment_ids: Type.Optional(AttachmentIds) });

export const ConversationParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export const WidgetSettings = Type.Object(
  {
    greeting: Type.String(),
    require_email: Type.Boolean(),
    enabled: Type.Boolean(),
    allowed_origins: Type.Array(Type.String()),
  },
  { title: 'WidgetSettings' },
);

export const PatchWidgetSettingsBody = Body({
  greeting: Type.Optional(Type.String({ maxLength: 500 })),
  require_email: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean()),
  allowed_origins: Type.Optional(
    Type.Array(Type.String({ maxLength: 300, pattern: ORIGIN_PATTERN }), {
      maxItems: MAX_ALLOWED_ORIGINS,
      description: 'Origins (https://shop.example.com) whose pages may use the widget; empty: every origin.',
    }),
  ),
});

export const WidgetArticlesQuery = Type.Object(
  { q: Type.String({ maxLength: ARTICLE_Q_MAX, description: "The visitor's words: what they are about to ask." }) },
  { additionalProperties: false },
);

export const WidgetArticle = Type.Object(
  {
    title: Type.String(),
    excerpt: Type.String({ description: 'Plain text.' }),
    url: Type.String({ description: "The article's page in the help center." }),
  },
  { title: 'WidgetArticle' },
);
