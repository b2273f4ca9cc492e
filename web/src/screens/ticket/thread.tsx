// The thread: replies, notes and activities in the order they happened. Each message shows its
// author's picture, its delivery state, its attachments (images as thumbnails, loaded from this
// origin only as the CSP allows; other files as download links) and, for a customer's message,
// "View original" (GET /v1/messages/{id}/original: the whole email, quoted history included). A
// reply whose delivery failed can be sent again (mail-state.tsx).
import * as Dialog from '@radix-ui/react-dialog';
import { Link } from '@tanstack/react-router';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useActivities } from '../../data/activities';
import { isAiAnswer, useAiAuthorName } from '../../data/ai';
import { useMessageOriginal, useMessages } from '../../data/messages';
import { useTicketById } from '../../data/tickets';
import { servicePath } from '../../lib/address';
import { type Activity, errorText, type Message, type Ticket, type TicketStatus } from '../../lib/api';
import { bytes, STATUS_LABEL, when } from '../../lib/format';
import { deliveryText } from '../../lib/mail';
import { askAgain } from '../../lib/queries';
import { Avatar } from '../../ui/avatar';
import { contactName, ratingText } from '../../ui/words';
import { AiActivityItem } from './ai-trail';
import { TranslateButton, useTranslatedMessage } from './ai-translate';
import { SendAgain } from './mail-state';

export type Attachment = Message['attachments'][number];

type Entry = { at: string; message: Message } | { at: string; activity: Activity };

export function Thread({ ws, ticket }: { ws: string; ticket: Ticket }) {
  const messages = useMessages(ws, ticket.id);
  const activities = useActivities(ws, ticket.id);
  const entryCount = (messages.data?.length ?? 0) + (activities.data?.length ?? 0);
  const listRef = useAtNewest(entryCount, !!messages.data);
  if (messages.error) {
    return (
      <p className="error" role="alert">
        Could not load the messages: {errorText(messages.error)}{' '}
        <button type="button" className="link" onClick={askAgain(messages)}>
          Try again
        </button>
      </p>
    );
  }
  if (!messages.data) return <p className="loading">Loading messages…</p>;
  const entries: Entry[] = [
    ...messages.data.map((m) => ({ at: m.created_at, message: m })),
    ...(activities.data ?? []).map((a) => ({ at: a.created_at, activity: a })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return (
    <ol className="thread" aria-label="Conversation" ref={listRef}>
      {entries.map((e) =>
        'message' in e ? (
          <MessageItem key={e.message.id} m={e.message} ws={ws} ticket={ticket} />
        ) : (
          <ActivityItem key={e.activity.id} a={e.activity} />
        ),
      )}
    </ol>
  );
}

/**
 * The thread opens at its newest entry: the first time the messages are in, the last entry is
 * scrolled into view (its scroller, .thread-scroll, when the page is the window's height; else
 * the window). Later entries (a new message, the activities arriving) keep it at the newest while
 * the person had not scrolled up.
 */
function useAtNewest(count: number, loaded: boolean) {
  const listRef = useRef<HTMLOListElement>(null);
  const opened = useRef(false);
  const atEnd = useRef(true);
  const scroller = () => listRef.current?.closest<HTMLElement>('.thread-scroll') ?? null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the list is in once loaded; scroller reads it
  useEffect(() => {
    const el = scroller();
    if (!loaded || !el) return;
    const on = () => {
      atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    };
    el.addEventListener('scroll', on, { passive: true });
    return () => el.removeEventListener('scroll', on);
  }, [loaded]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new entry (the count) is the trigger
  useLayoutEffect(() => {
    const last = listRef.current?.lastElementChild;
    if (!loaded || !last) return;
    if (!opened.current) {
      opened.current = true;
      last.scrollIntoView({ block: 'end' });
      return;
    }
    const el = scroller();
    if (atEnd.current && el && el.scrollHeight > el.clientHeight) el.scrollTop = el.scrollHeight;
  }, [count, loaded]);
  return listRef;
}

function authorOf(m: Message): string {
  const a = m.author;
  if (a.user) return a.user.name;
  if (a.contact) return contactName(a.contact);
  return m.from_name || m.from_email || (a.type === 'contact' ? contactName(null) : a.type);
}

/** An attachment's address when it is this service's (loaded from this origin: the CSP loads images from here only). */
export const sameOrigin = (url: string): string | null => servicePath(url);

const PREVIEWABLE = /^image\/(png|jpeg|gif|webp|avif|bmp)$/;

export function AttachmentList({ files, label = 'Attachments' }: { files: Attachment[]; label?: string }) {
  if (files.length === 0) return null;
  return (
    <ul className="attachments" aria-label={label}>
      {files.map((a) => {
        const src = PREVIEWABLE.test(a.content_type) ? sameOrigin(a.url) : null;
        return (
          <li key={a.id} className={src ? 'attachment attachment-image' : 'attachment'}>
            <a href={a.url} target="_blank" rel="noreferrer" download={a.filename}>
              {src && <img src={src} alt="" className="thumb" width={120} height={90} loading="lazy" />}
              {a.filename}
            </a>{' '}
            <span className="hint">({bytes(a.size_bytes)})</span>
          </li>
        );
      })}
    </ul>
  );
}

function MessageItem({ m, ws, ticket }: { m: Message; ws: string; ticket: Ticket }) {
  const files = m.attachments.filter((a) => !a.inline);
  const ai = isAiAnswer(m);
  const aiName = useAiAuthorName(ws, m);
  const who = ai ? aiName : authorOf(m);
  const picture = m.author.user?.avatar_url ?? m.author.contact?.avatar_url ?? null;
  const translation = useTranslatedMessage(ws, m);
  return (
    <li className={`message message-${m.kind} message-${m.direction}`}>
      <header>
        <Avatar url={picture} name={who} size={32} />
        <strong>{who}</strong>
        {ai && (
          <span className="ai-mark" title="Answered by AI from published articles">
            AI
          </span>
        )}
        <span className="kind">
          {m.kind === 'note' ? 'Internal note' : m.direction === 'inbound' ? 'wrote' : 'replied'}
        </span>
        <time dateTime={m.created_at}>{when(m.created_at)}</time>
        {m.delivery_status !== 'none' && (
          <span className={`delivery delivery-${m.delivery_status}`} title={m.delivery_error ?? undefined}>
            {deliveryText(m)}
          </span>
        )}
        <SendAgain ws={ws} ticket={ticket} m={m} />
        {m.auth_failed && <span className="delivery-failed">Sender not verified</span>}
        {m.direction === 'inbound' && <Original m={m} />}
        <TranslateButton tr={translation} />
      </header>
      {translation.note}
      {/* body_html is sanitized by the service before storage (an allowlist), a translation's html as it */}
      {/* answers it (the same sanitizer), and the CSP allows no script. */}
      {/* biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by the service (docs/api.md "Messages") */}
      <div className="body" dangerouslySetInnerHTML={{ __html: translation.html }} />
      <AttachmentList files={files} />
    </li>
  );
}

/** "View original": the whole message, quoted history included, in a dialog. */
function Original({ m }: { m: Message }) {
  const [open, setOpen] = useState(false);
  const original = useMessageOriginal(m.id, open);
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger className="link-button">View original</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog original-dialog">
          <Dialog.Title>Original message</Dialog.Title>
          <Dialog.Description className="hint">
            From {m.from_name ? `${m.from_name} <${m.from_email}>` : m.from_email || authorOf(m)}, {when(m.created_at)}
            {m.subject ? `: ${m.subject}` : ''}
          </Dialog.Description>
          {original.error ? (
            <p className="error" role="alert">
              Could not load the original: {errorText(original.error)}
            </p>
          ) : original.data ? (
            // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by the service like every body
            <div className="body original-body" dangerouslySetInnerHTML={{ __html: original.data.body_html }} />
          ) : (
            <p className="loading">Loading…</p>
          )}
          <div className="dialog-actions">
            <Dialog.Close className="button">Close</Dialog.Close>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

function activityText(a: Activity): string {
  const d = (a.data ?? {}) as Record<string, unknown>;
  const by =
    a.actor.user?.name ??
    (a.actor.type === 'system'
      ? 'The system'
      : a.actor.type === 'ai'
        ? 'AI'
        : a.actor.type === 'api_key'
          ? 'An API key'
          : 'An automation');
  switch (a.type) {
    case 'status_changed':
      return `${by} changed the status to ${STATUS_LABEL[d.to as TicketStatus] ?? String(d.to)}`;
    case 'assigned':
      return d.to ? `${by} assigned the ticket` : `${by} unassigned the ticket`;
    case 'team_changed':
      return d.to ? `${by} changed the team` : `${by} removed the team`;
    case 'tagged':
      return `${by} added the label ${(d.tag as { name?: string })?.name ?? ''}`;
    case 'untagged':
      return `${by} removed the label ${(d.tag as { name?: string })?.name ?? ''}`;
    case 'priority_changed':
      return `${by} changed the priority to ${String(d.to)}`;
    case 'severity_changed':
      return d.to ? `${by} changed the severity to ${String(d.to)}` : `${by} cleared the severity`;
    case 'sla_breached':
      return `The ${d.kind === 'first_response' ? 'first response' : String(d.kind ?? '').replaceAll('_', ' ')} target was missed`;
    case 'csat_received':
      return typeof d.score === 'number'
        ? `The customer rated the support ${ratingText(d.score)}`
        : 'The customer rated the support';
    case 'field_changed':
      return `${by} changed ${String(d.key ?? d.field ?? 'a field')}`;
    default:
      return `${by}: ${a.type.replaceAll('_', ' ')}`;
  }
}

function ActivityItem({ a }: { a: Activity }) {
  if (a.actor.type === 'ai') return <AiActivityItem a={a} />;
  const d = (a.data ?? {}) as Record<string, unknown>;
  return (
    <li className="activity">
      {a.type === 'merged' && typeof d.into === 'string' ? (
        <>
          {a.actor.user?.name ?? 'Someone'} merged this ticket into <TicketLink id={d.into} />
        </>
      ) : (
        activityText(a)
      )}{' '}
      · <time dateTime={a.created_at}>{when(a.created_at)}</time>
    </li>
  );
}

/** A link to a ticket known by its id (the page's address takes its number). */
function TicketLink({ id }: { id: string }) {
  const t = useTicketById(id);
  if (!t.data) return <span>another ticket</span>;
  return (
    <Link to="/tickets/$number" params={{ number: String(t.data.number) }}>
      #{t.data.number} {t.data.subject}
    </Link>
  );
}
