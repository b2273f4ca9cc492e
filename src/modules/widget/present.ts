// A message as the widget sees it (docs/widget.md "Messages"): {id, conversation_id, direction,
// body_html, body_text, author {type contact | agent | ai, name, avatar_url}, attachments,
// created_at}. Never a note, never an agent's email, never reply_to, auth_failed, form_sender,
// cc or bcc. Used by the visitor routes and by the gateway for events on contact topics, so
// both show the same shape. Pure: it reads nothing but the message the API already built.
import type { Static } from '@sinclair/typebox';
import type { MessageView } from '../tickets/outbound-message.js';
import type { WidgetMessage } from './schemas.js';

export type WidgetMessageView = Static<typeof WidgetMessage>;

/** The widget's form of a public message (a reply); null for a note, which the widget never sees. */
export function widgetMessage(m: MessageView): WidgetMessageView | null {
  if (m.kind !== 'reply') return null;
  const author: WidgetMessageView['author'] =
    m.author.type === 'contact'
      ? { type: 'contact', name: m.author.contact?.name ?? null, avatar_url: m.author.contact?.avatar_url ?? null }
      : m.author.type === 'ai'
        ? // The workspace's assistant (src/modules/widget/ai-answers.ts), by the name it wrote under.
          { type: 'ai', name: m.from_name || null, avatar_url: null }
        : {
            type: 'agent',
            name: m.author.user?.name ?? (m.from_name || null),
            avatar_url: m.author.user?.avatar_url ?? null,
          };
  return {
    id: m.id,
    conversation_id: m.ticket_id,
    direction: m.direction,
    body_html: m.body_html,
    body_text: m.body_text,
    author,
    attachments: m.attachments,
    created_at: m.created_at,
  };
}

/** An event's data for a contact topic: message events carry the widget's message; null drops it. */
export function widgetEventData(data: Record<string, unknown>): Record<string, unknown> | null {
  const message = data.message as MessageView | undefined;
  if (message === undefined || message === null || typeof message !== 'object') return null;
  const shown = widgetMessage(message);
  return shown ? { ticket_id: data.ticket_id, message: shown } : null;
}
