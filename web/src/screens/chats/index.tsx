// Chats: the widget's conversations (tickets with channel chat, docs/widget.md), newest first,
// with the ones whose visitor wrote last and that I have not opened since marked unread; one open
// beside the list at /chats/<ticket number>. Agents answer through the ticket API, like any
// ticket: the visitor's messages arrive live (lib/queries.ts keeps the messages' cache), the
// visitor's typing shows (customer_typing on the ticket's topic) and mine reaches the widget
// (typing with the contact's id). Reply, solve, close; the visitor's rating when they gave one.
import { Link, useParams } from '@tanstack/react-router';
import { type FormEvent, type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { paths } from '../../api.gen';
import { isAiAnswer, useAiAuthorName } from '../../data/ai';
import { useChatList } from '../../data/chats';
import { useMessages, useSendMessage } from '../../data/messages';
import { useTicket, useUpdateTicket } from '../../data/tickets';
import { errorText, type Message, type Ticket, type TicketStatus } from '../../lib/api';
import { useLiveConnection, useWorkspace } from '../../lib/context';
import { ago, STATUS_LABEL, when } from '../../lib/format';
import type { TicketLive } from '../../lib/live';
import { canWrite, useRole } from '../../lib/role';
import { useSession } from '../../lib/session';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { contactName, ratingText } from '../../ui/words';
import { isUnread, markSeen, useSeen } from '../seen';
import './chats.css';

type ListQuery = NonNullable<paths['/v1/tickets']['get']['parameters']['query']>;
type Filter = 'active' | 'all';

const QUERIES: Record<Filter, ListQuery> = {
  active: { channel: 'chat', status: 'open,pending,on_hold', sort: 'last_message_at', order: 'desc', limit: 50 },
  all: { channel: 'chat', sort: 'last_message_at', order: 'desc', limit: 50 },
};

// Unread: a chat whose visitor wrote last, not opened since in this browser (../seen.ts).
export const visitorName = (t: Ticket): string => contactName(t.contact);

export function Chats() {
  const ws = useWorkspace();
  const params = useParams({ strict: false }) as { _splat?: string };
  const open = Number((params._splat ?? '').split('/')[0]);
  const selected = Number.isSafeInteger(open) && open > 0 ? open : null;
  const [filter, setFilter] = useState<Filter>('active');
  const seen = useSeen(ws);
  const list = useChatList(ws, QUERIES[filter]);
  const chats = list.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <div className={`screen chats${selected ? ' chats-open' : ''}`}>
      <div className="chats-list-pane">
        <PageTitle>Chats</PageTitle>
        <fieldset className="chats-filter">
          <legend className="visually-hidden">Which chats</legend>
          <label>
            <input
              type="radio"
              name="chats-filter"
              checked={filter === 'active'}
              onChange={() => setFilter('active')}
            />
            Active
          </label>
          <label>
            <input type="radio" name="chats-filter" checked={filter === 'all'} onChange={() => setFilter('all')} />
            All, solved and closed too
          </label>
        </fieldset>
        {list.error ? <ErrorNote error={list.error} what="Could not load the chats" /> : null}
        {list.isPending ? (
          <Loading />
        ) : chats.length === 0 ? (
          <p className="empty">
            No chats yet. They start when a visitor writes in the chat widget on your website (
            <Link to="/settings/$" params={{ _splat: 'widget' }}>
              how to install it
            </Link>
            ).
          </p>
        ) : (
          <ul className="chat-list" aria-label="Conversations">
            {chats.map((t) => {
              const unread = t.number !== selected && isUnread(t, seen);
              return (
                <li key={t.id}>
                  <Link
                    to="/chats/$"
                    params={{ _splat: String(t.number) }}
                    className={`chat-row${unread ? ' chat-unread' : ''}`}
                    aria-current={t.number === selected ? 'page' : undefined}
                  >
                    <span className="chat-row-top">
                      <strong className="who">{visitorName(t)}</strong>
                      {unread && <span className="chat-dot">Unread</span>}
                      <time dateTime={t.last_message_at}>{ago(t.last_message_at)}</time>
                    </span>
                    <span className="chat-row-bottom">
                      <span className="preview">{t.last_message_preview || t.subject}</span>
                      <span className={`status status-${t.status}`}>{STATUS_LABEL[t.status]}</span>
                    </span>
                  </Link>
                </li>
              );
            })}
          </ul>
        )}
        {list.hasNextPage && (
          <button type="button" className="button" onClick={() => void list.fetchNextPage()}>
            {list.isFetchingNextPage ? 'Loading…' : 'Show older chats'}
          </button>
        )}
      </div>
      <div className="chat-pane">
        {selected ? (
          <Conversation key={selected} number={selected} onSeen={(t) => markSeen(ws, t)} />
        ) : (
          <p className="chat-none hint">Open a conversation from the list.</p>
        )}
      </div>
    </div>
  );
}

function useChatLive(ticket: Ticket | undefined) {
  const live = useLiveConnection();
  const session = useSession();
  const me = session.status === 'signed_in' ? session.user.id : null;
  const [visitorTyping, setVisitorTyping] = useState(false);
  const [agentTyping, setAgentTyping] = useState<string | null>(null);
  const [handle, setHandle] = useState<TicketLive | null>(null);
  const id = ticket?.id;
  const team = ticket?.team_id ?? null;
  useEffect(() => {
    if (!live || !id) return;
    let clearVisitor: ReturnType<typeof setTimeout> | undefined;
    let clearAgent: ReturnType<typeof setTimeout> | undefined;
    const h = live.ticket(id, team, {
      onViewers: () => {},
      onTyping: (who) => {
        if (who.userId === me) return;
        setAgentTyping(who.name);
        clearTimeout(clearAgent);
        clearAgent = setTimeout(() => setAgentTyping(null), 4000);
      },
      onCustomerTyping: () => {
        setVisitorTyping(true);
        clearTimeout(clearVisitor);
        clearVisitor = setTimeout(() => setVisitorTyping(false), 4000);
      },
    });
    setHandle(h);
    return () => {
      clearTimeout(clearVisitor);
      clearTimeout(clearAgent);
      h.leave();
      setHandle(null);
      setVisitorTyping(false);
      setAgentTyping(null);
    };
  }, [live, id, team, me]);
  return { visitorTyping, agentTyping, handle, stopVisitorTyping: () => setVisitorTyping(false) };
}

function Conversation({ number, onSeen }: { number: number; onSeen(t: Ticket): void }) {
  const ws = useWorkspace();
  const writer = canWrite(useRole());
  const ticket = useTicket(ws, number);
  const t = ticket.data;
  const messages = useMessages(ws, t?.id ?? '', !!t);
  const update = useUpdateTicket(ws, { lists: true });
  const live = useChatLive(t);
  const [statusError, setStatusError] = useState<unknown>(null);
  const count = messages.data?.length ?? 0;
  const lastInbound = messages.data?.filter((m) => m.direction === 'inbound').at(-1)?.id;

  // Open means read: now, and whenever a new message lands while it is open.
  // biome-ignore lint/correctness/useExhaustiveDependencies: onSeen is a new closure each render; the message count is the trigger
  useEffect(() => {
    if (t) onSeen(t);
  }, [t?.id, t?.last_message_at, count]);

  // A new message from the visitor ends their typing.
  // biome-ignore lint/correctness/useExhaustiveDependencies: stopVisitorTyping only sets state; the new message is the trigger
  useEffect(() => {
    if (lastInbound) live.stopVisitorTyping();
  }, [lastInbound]);

  useEffect(() => {
    if (t) document.title = `Chat with ${visitorName(t)} · Help desk`;
  }, [t]);

  const setStatus = async (status: TicketStatus) => {
    if (!t) return;
    setStatusError(null);
    try {
      await update.mutateAsync({ ticket: t, body: { status } });
    } catch (err) {
      setStatusError(err);
    }
  };

  if (ticket.error) {
    return (
      <div role="alert" className="chat-conversation">
        <h2>Chat #{number}</h2>
        <p>
          {(ticket.error as { status?: number }).status === 404
            ? 'There is no such conversation in this workspace, or you may not see it.'
            : `Could not load the conversation: ${errorText(ticket.error)}`}
        </p>
        <Link to="/chats">Back to the chats</Link>
      </div>
    );
  }
  if (!t) return <Loading label="Loading the conversation…" />;
  const handoff = typeof t.custom.handoff_requested_at === 'string' ? t.custom.handoff_requested_at : null;
  return (
    <section className="chat-conversation" aria-labelledby="chat-title">
      <header className="chat-head">
        <Link to="/chats" className="back chat-back">
          ← Chats
        </Link>
        <h2 id="chat-title">
          {visitorName(t)} <span className="number">#{t.number}</span>
        </h2>
        <div className="chat-meta">
          <span className={`status status-${t.status}`}>{STATUS_LABEL[t.status]}</span>
          {t.contact?.email && <span>{t.contact.email}</span>}
          <span>{t.assignee ? `Assigned to ${t.assignee.name}` : 'Unassigned'}</span>
          <Link to="/tickets/$number" params={{ number: String(t.number) }}>
            Open as a ticket
          </Link>
        </div>
        {handoff && <p className="chat-handoff">The visitor asked for a person ({ago(handoff)}).</p>}
        {t.csat && (
          <p className="chat-csat">
            Rated {ratingText(t.csat.score)}
            {t.csat.comment ? `: “${t.csat.comment}”` : ''}
          </p>
        )}
        {writer && (
          <div className="chat-actions">
            <button
              type="button"
              className="button"
              disabled={t.status === 'solved' || t.status === 'closed'}
              onClick={() => void setStatus('solved')}
            >
              Solve
            </button>
            <button
              type="button"
              className="button"
              disabled={t.status === 'closed'}
              onClick={() => void setStatus('closed')}
            >
              Close
            </button>
          </div>
        )}
        <ErrorNote error={statusError} what="Could not change the status" />
      </header>
      <ChatLog messages={messages.data} error={messages.error} />
      <p className="typing" role="status">
        {live.visitorTyping ? `${visitorName(t)} is typing…` : live.agentTyping ? `${live.agentTyping} is typing…` : ''}
      </p>
      {writer ? (
        <ChatComposer ticket={t} live={live.handle} />
      ) : (
        <p className="hint">Viewers read chats; only agents and admins answer them.</p>
      )}
    </section>
  );
}

/** An AI answer's author: the assistant's name and the AI mark (answered from published articles). */
function AiAuthor({ m }: { m: Message }) {
  const name = useAiAuthorName(useWorkspace(), m);
  return (
    <>
      {name}{' '}
      <span className="ai-mark" title="Answered by AI from published articles">
        AI
      </span>
    </>
  );
}

function ChatLog({ messages, error }: { messages: Message[] | undefined; error: unknown }) {
  const end = useRef<HTMLDivElement>(null);
  const count = messages?.length ?? 0;
  useLayoutEffect(() => {
    if (count) end.current?.scrollIntoView({ block: 'end' });
  }, [count]);
  if (error) return <ErrorNote error={error} what="Could not load the messages" />;
  if (!messages) return <Loading label="Loading messages…" />;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is scrolled with the keyboard once focused
    <div className="chat-log" role="log" aria-label="Messages" aria-live="polite" tabIndex={0}>
      <ol>
        {messages.map((m) => (
          <li
            key={m.id}
            className={`bubble bubble-${m.kind} bubble-${m.direction}${isAiAnswer(m) ? ' bubble-ai' : ''}`}
          >
            <span className="bubble-who">
              {m.kind === 'note' ? (
                `Internal note by ${m.author.user?.name ?? 'an agent'}`
              ) : m.direction === 'inbound' ? (
                contactName(m.author.contact)
              ) : isAiAnswer(m) ? (
                <AiAuthor m={m} />
              ) : (
                (m.author.user?.name ?? (m.author.type === 'system' ? 'Automatic answer' : 'Agent'))
              )}
              {' · '}
              <time dateTime={m.created_at} title={when(m.created_at)}>
                {ago(m.created_at)}
              </time>
            </span>
            {/* biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by the service (docs/api.md "Messages") */}
            <div className="body" dangerouslySetInnerHTML={{ __html: m.body_html }} />
            {m.attachments.filter((a) => !a.inline).length > 0 && (
              <ul className="attachments" aria-label="Attachments">
                {m.attachments
                  .filter((a) => !a.inline)
                  .map((a) => (
                    <li key={a.id}>
                      <a href={a.url} target="_blank" rel="noreferrer" download={a.filename}>
                        {a.filename}
                      </a>
                    </li>
                  ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
      <div ref={end} />
    </div>
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

function ChatComposer({ ticket, live }: { ticket: Ticket; live: TicketLive | null }) {
  const ws = useWorkspace();
  const sendMessage = useSendMessage(ws, ticket);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const send = async (e?: FormEvent) => {
    e?.preventDefault();
    if (!text.trim() || busy) return;
    setBusy(true);
    setError(null);
    try {
      await sendMessage.mutateAsync({ kind: 'reply', body_html: plainToHtml(text) });
      setText('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
    }
  };
  useEffect(() => live?.setState(text.trim() ? 'replying' : 'viewing'), [live, text]);
  return (
    <form className="chat-composer" onSubmit={send}>
      <label htmlFor="chat-reply">Reply to {visitorName(ticket)}</label>
      <textarea
        id="chat-reply"
        rows={3}
        value={text}
        aria-describedby="chat-reply-hint"
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value) live?.typing(ticket.contact?.id);
        }}
        onKeyDown={onKeyDown}
      />
      <div className="chat-composer-foot">
        <p id="chat-reply-hint" className="hint">
          Enter sends, Shift+Enter starts a new line.
        </p>
        <button type="submit" className="primary" disabled={busy || !text.trim()}>
          {busy ? 'Sending…' : 'Send'}
        </button>
      </div>
      <ErrorNote error={error} what="Could not send the reply" />
    </form>
  );
}
