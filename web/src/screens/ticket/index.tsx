// A ticket: its thread (replies, notes and activities in the order they happened, attachments
// listed), labels and status, and the composer (reply or internal note, the status to set on
// send). New messages arrive live (lib/queries.ts). Keyboard: r reply, n note, Ctrl+Enter send,
// e solve, Escape leaves the text box, then back to the inbox.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { type FormEvent, type KeyboardEvent, type Ref, useEffect, useImperativeHandle, useRef, useState } from 'react';
import { type Activity, api, errorText, type Message, ok, type Ticket, type TicketStatus } from '../../lib/api';
import { useLiveConnection, useShowShortcuts, useWorkspace } from '../../lib/context';
import { bytes, STATUS_LABEL, when } from '../../lib/format';
import { useShortcuts } from '../../lib/keys';
import type { TicketLive, Viewer } from '../../lib/live';
import { keys } from '../../lib/queries';
import { useSession } from '../../lib/session';

type Kind = 'reply' | 'note';

export function TicketPage() {
  const ws = useWorkspace();
  const { number } = useParams({ from: '/app/tickets/$number' });
  const n = Number(number);
  const navigate = useNavigate();
  const showShortcuts = useShowShortcuts();
  const ticket = useQuery({
    queryKey: keys.ticket(ws, n),
    queryFn: () => ok(api.GET('/v1/tickets/{id}', { params: { path: { id: String(n) } } })),
    enabled: Number.isSafeInteger(n) && n > 0,
  });
  const t = ticket.data;
  const composer = useRef<ComposerHandle>(null);
  const [statusError, setStatusError] = useState<string | null>(null);
  const setStatus = useStatusChange(ws, t, setStatusError);
  const presence = useTicketPresence(t);

  useEffect(() => {
    document.title = t ? `#${t.number} ${t.subject} · Help desk` : 'Ticket · Help desk';
  }, [t]);

  useShortcuts({
    r: () => composer.current?.open('reply'),
    n: () => composer.current?.open('note'),
    e: () => void setStatus('solved'),
    Escape: (e) => {
      if (e.target instanceof HTMLTextAreaElement) e.target.blur();
      else void navigate({ to: '/inbox', search: {} });
    },
  });

  if (ticket.error) {
    return (
      <div className="page-error" role="alert">
        <h1>Ticket #{number}</h1>
        <p>
          {(ticket.error as { status?: number }).status === 404
            ? 'There is no such ticket in this workspace, or you may not see it.'
            : `Could not load the ticket: ${errorText(ticket.error)}`}
        </p>
        <Link to="/inbox" search={{}}>
          Back to the inbox
        </Link>
      </div>
    );
  }
  if (!t) return <p className="loading">Loading ticket…</p>;
  return (
    <article className="ticket" aria-labelledby="ticket-title">
      <header className="ticket-head">
        <Link to="/inbox" search={{}} className="back">
          ← Inbox
        </Link>
        <h1 id="ticket-title">
          <span className="number">#{t.number}</span> {t.subject}
        </h1>
        <div className="ticket-meta">
          <span className={`status status-${t.status}`}>{STATUS_LABEL[t.status]}</span>
          <span>{t.contact ? `${t.contact.name ?? ''} ${t.contact.email ? `<${t.contact.email}>` : ''}` : ''}</span>
          <span>{t.assignee ? `Assigned to ${t.assignee.name}` : 'Unassigned'}</span>
          {t.tags.length > 0 && (
            <ul className="labels" aria-label="Labels">
              {t.tags.map((tag) => (
                <li key={tag.id} className={`label label-${tag.color}`}>
                  {tag.name}
                </li>
              ))}
            </ul>
          )}
        </div>
        <div className="ticket-actions">
          <label htmlFor="ticket-status">Status</label>
          <select id="ticket-status" value={t.status} onChange={(e) => void setStatus(e.target.value as TicketStatus)}>
            {Object.entries(STATUS_LABEL).map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="primary"
            onClick={() => void setStatus('solved')}
            disabled={t.status === 'solved'}
          >
            Solve <kbd>e</kbd>
          </button>
          <button type="button" className="icon-button" onClick={showShortcuts} aria-label="Keyboard shortcuts">
            ?
          </button>
        </div>
        {statusError && (
          <p className="error" role="alert">
            {statusError}
          </p>
        )}
        <Viewers viewers={presence.viewers} />
      </header>
      <Thread ws={ws} ticket={t} />
      <Composer ref={composer} ws={ws} ticket={t} live={presence.handle} typing={presence.typing} />
    </article>
  );
}

/** Who else has this ticket open (and is replying), who is typing; and my own state, for them. */
function useTicketPresence(ticket: Ticket | undefined) {
  const live = useLiveConnection();
  const session = useSession();
  const me = session.status === 'signed_in' ? session.user.id : null;
  const [viewers, setViewers] = useState<Viewer[]>([]);
  const [typing, setTyping] = useState<string | null>(null);
  const [handle, setHandle] = useState<TicketLive | null>(null);
  const id = ticket?.id;
  const team = ticket?.team_id ?? null;
  useEffect(() => {
    if (!live || !id) return;
    let clear: ReturnType<typeof setTimeout> | undefined;
    const h = live.ticket(id, team, {
      onViewers: (v) => setViewers(v.filter((x) => x.userId !== me)),
      onTyping: (who) => {
        if (who.userId === me) return;
        setTyping(who.name);
        clearTimeout(clear);
        clear = setTimeout(() => setTyping(null), 4000);
      },
    });
    setHandle(h);
    return () => {
      clearTimeout(clear);
      h.leave();
      setHandle(null);
      setViewers([]);
      setTyping(null);
    };
  }, [live, id, team, me]);
  return { viewers, typing, handle };
}

function Viewers({ viewers }: { viewers: Viewer[] }) {
  return (
    <p className="viewers" aria-live="polite">
      {viewers.length > 0 &&
        `Also here: ${viewers.map((v) => (v.state === 'replying' ? `${v.name} (replying)` : v.name)).join(', ')}`}
    </p>
  );
}

function useStatusChange(ws: string, t: Ticket | undefined, onError: (e: string | null) => void) {
  const queryClient = useQueryClient();
  return async (status: TicketStatus) => {
    if (!t || t.status === status) return;
    onError(null);
    try {
      const updated = await ok(api.PATCH('/v1/tickets/{id}', { params: { path: { id: t.id } }, body: { status } }));
      queryClient.setQueryData(keys.ticket(ws, updated.number), updated);
      void queryClient.invalidateQueries({ queryKey: keys.counts(ws) });
    } catch (err) {
      onError(`Could not change the status: ${errorText(err)}`);
    }
  };
}

type Entry = { at: string; message: Message } | { at: string; activity: Activity };

function Thread({ ws, ticket }: { ws: string; ticket: Ticket }) {
  const messages = useQuery({
    queryKey: keys.messages(ws, ticket.id),
    queryFn: async () => (await ok(api.GET('/v1/tickets/{id}/messages', { params: { path: { id: ticket.id } } }))).data,
  });
  const activities = useQuery({
    queryKey: keys.activities(ws, ticket.id),
    queryFn: async () =>
      (await ok(api.GET('/v1/tickets/{id}/activities', { params: { path: { id: ticket.id } } }))).data,
  });
  if (messages.error) {
    return (
      <p className="error" role="alert">
        Could not load the messages: {errorText(messages.error)}
      </p>
    );
  }
  if (!messages.data) return <p className="loading">Loading messages…</p>;
  const entries: Entry[] = [
    ...messages.data.map((m) => ({ at: m.created_at, message: m })),
    ...(activities.data ?? []).map((a) => ({ at: a.created_at, activity: a })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return (
    <ol className="thread" aria-label="Conversation">
      {entries.map((e) =>
        'message' in e ? (
          <MessageItem key={e.message.id} m={e.message} />
        ) : (
          <ActivityItem key={e.activity.id} a={e.activity} />
        ),
      )}
    </ol>
  );
}

function authorOf(m: Message): string {
  const a = m.author;
  return a.user?.name ?? a.contact?.name ?? a.contact?.email ?? (m.from_name || m.from_email || a.type);
}

const DELIVERY: Record<Message['delivery_status'], string> = {
  none: '',
  pending: 'Sending…',
  sent: 'Sent',
  failed: 'Not delivered',
  bounced: 'Bounced',
};

function MessageItem({ m }: { m: Message }) {
  const files = m.attachments.filter((a) => !a.inline);
  return (
    <li className={`message message-${m.kind} message-${m.direction}`}>
      <header>
        <strong>{authorOf(m)}</strong>
        <span className="kind">
          {m.kind === 'note' ? 'Internal note' : m.direction === 'inbound' ? 'wrote' : 'replied'}
        </span>
        <time dateTime={m.created_at}>{when(m.created_at)}</time>
        {DELIVERY[m.delivery_status] && (
          <span className={`delivery delivery-${m.delivery_status}`} title={m.delivery_error ?? undefined}>
            {DELIVERY[m.delivery_status]}
            {m.delivery_error ? `: ${m.delivery_error}` : ''}
          </span>
        )}
      </header>
      {/* body_html is sanitized by the service before storage (an allowlist), and the CSP allows no script. */}
      {/* biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by the service (docs/api.md "Messages") */}
      <div className="body" dangerouslySetInnerHTML={{ __html: m.body_html }} />
      {files.length > 0 && (
        <ul className="attachments" aria-label="Attachments">
          {files.map((a) => (
            <li key={a.id}>
              <a href={a.url} target="_blank" rel="noreferrer" download={a.filename}>
                {a.filename}
              </a>{' '}
              <span className="hint">({bytes(a.size_bytes)})</span>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

function activityText(a: Activity): string {
  const d = (a.data ?? {}) as Record<string, unknown>;
  const by = a.actor.user?.name ?? (a.actor.type === 'system' ? 'The system' : 'An automation');
  switch (a.type) {
    case 'status_changed':
      return `${by} changed the status to ${STATUS_LABEL[d.to as TicketStatus] ?? String(d.to)}`;
    case 'assigned':
      return d.to ? `${by} assigned the ticket` : `${by} unassigned the ticket`;
    case 'tagged':
      return `${by} added the label ${(d.tag as { name?: string })?.name ?? ''}`;
    case 'untagged':
      return `${by} removed the label ${(d.tag as { name?: string })?.name ?? ''}`;
    case 'priority_changed':
      return `${by} changed the priority to ${String(d.to)}`;
    default:
      return `${by}: ${a.type.replaceAll('_', ' ')}`;
  }
}

function ActivityItem({ a }: { a: Activity }) {
  return (
    <li className="activity">
      {activityText(a)} · <time dateTime={a.created_at}>{when(a.created_at)}</time>
    </li>
  );
}

const plainToHtml = (text: string): string =>
  text
    .trim()
    .split(/\n{2,}/)
    .map(
      (p) =>
        `<p>${p.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll('\n', '<br>')}</p>`,
    )
    .join('');

interface ComposerHandle {
  open(kind: Kind): void;
}

function Composer({
  ws,
  ticket,
  ref,
  live,
  typing,
}: {
  ws: string;
  ticket: Ticket;
  ref: Ref<ComposerHandle>;
  /** The ticket's topic: the others see that I reply and type. */
  live: TicketLive | null;
  /** Who else is typing on this ticket now. */
  typing: string | null;
}) {
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<Kind>('reply');
  const [text, setText] = useState('');
  const [status, setStatus] = useState<'' | TicketStatus>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const box = useRef<HTMLTextAreaElement>(null);

  useImperativeHandle(ref, () => ({
    open(k) {
      setKind(k);
      box.current?.focus();
    },
  }));

  const send = async (e?: FormEvent) => {
    e?.preventDefault();
    if (!text.trim() || busy) return;
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      const m = await ok(
        api.POST('/v1/tickets/{id}/messages', {
          params: { path: { id: ticket.id } },
          body: { kind, body_html: plainToHtml(text), ...(status ? { status } : {}) },
        }),
      );
      queryClient.setQueryData<Message[]>(keys.messages(ws, ticket.id), (old) =>
        old && !old.some((x) => x.id === m.id) ? [...old, m] : old,
      );
      if (status) void queryClient.invalidateQueries({ queryKey: keys.ticket(ws, ticket.number) });
      setText('');
      setStatus('');
      setSent(kind === 'note' ? 'Note added.' : 'Reply sent.');
    } catch (err) {
      setError(`Could not send: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void send();
    }
  };
  const noun = kind === 'note' ? 'note' : 'reply';
  useEffect(() => live?.setState(text.trim() ? 'replying' : 'viewing'), [live, text]);
  return (
    <form className={`composer composer-${kind}`} onSubmit={send} aria-label="Write a reply or note">
      <fieldset className="kind-switch">
        <legend className="visually-hidden">Kind of message</legend>
        <label>
          <input type="radio" name="kind" value="reply" checked={kind === 'reply'} onChange={() => setKind('reply')} />
          Reply <kbd>r</kbd>
        </label>
        <label>
          <input type="radio" name="kind" value="note" checked={kind === 'note'} onChange={() => setKind('note')} />
          Internal note <kbd>n</kbd>
        </label>
      </fieldset>
      <label htmlFor="composer-text" className="visually-hidden">
        {kind === 'note' ? 'Internal note (only agents see it)' : `Reply to ${ticket.contact?.name ?? 'the customer'}`}
      </label>
      <textarea
        id="composer-text"
        ref={box}
        rows={5}
        value={text}
        placeholder={kind === 'note' ? 'Write an internal note: only agents see it' : 'Write your reply'}
        onChange={(e) => {
          setText(e.target.value);
          live?.typing();
        }}
        onKeyDown={onKeyDown}
      />
      <div className="composer-foot">
        <label htmlFor="composer-status">Then set status</label>
        <select id="composer-status" value={status} onChange={(e) => setStatus(e.target.value as TicketStatus | '')}>
          <option value="">Keep {STATUS_LABEL[ticket.status]}</option>
          <option value="pending">Pending</option>
          <option value="on_hold">On hold</option>
          <option value="solved">Solved</option>
        </select>
        <button type="submit" className="primary" disabled={busy || !text.trim()}>
          {busy ? 'Sending…' : kind === 'note' ? 'Add note' : 'Send reply'}
        </button>
      </div>
      <p className="hint">Ctrl+Enter sends the {noun}.</p>
      <p className="typing" role="status">
        {typing ? `${typing} is typing…` : ''}
      </p>
      <p className="error" role="alert" hidden={!error}>
        {error}
      </p>
      <p className="sent" role="status">
        {sent}
      </p>
    </form>
  );
}
