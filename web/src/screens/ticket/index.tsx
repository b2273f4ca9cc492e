// A ticket: its thread (thread.tsx), the composer (composer.tsx), and beside them its properties
// (properties.tsx: assignee, team, priority, severity, labels, custom fields, SLA clocks, CSAT,
// merge and follow-up links) and the customer (contact.tsx: contact, company, their other
// tickets). Other agents' presence and typing come through the ticket's topic. Keyboard: r reply,
// n note, Ctrl+Enter send, e solve, Escape leaves the text box, then back to the inbox.
// Above 1000 px the page is the window's height: the thread scrolls on its own and opens at its
// newest message, the composer stays below it, and the details beside them can be hidden (the
// choice kept in this browser). Opening a ticket marks it read here (../seen.ts).
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { useMembers } from '../../data/members';
import { useTicket, useUpdateTicket } from '../../data/tickets';
import { errorText, type Ticket, type TicketStatus } from '../../lib/api';
import { useLiveConnection, useShowShortcuts, useWorkspace } from '../../lib/context';
import { STATUS_LABEL } from '../../lib/format';
import { useShortcuts } from '../../lib/keys';
import type { TicketLive, Viewer } from '../../lib/live';
import { askAgain } from '../../lib/queries';
import { useSession } from '../../lib/session';
import { Avatar } from '../../ui/avatar';
import { Icon } from '../../ui/icons';
import { contactName } from '../../ui/words';
import { markSeen } from '../seen';
import { AiArticleLink } from './ai-article';
import { AiPanel, useAiPanelKeys } from './ai-panel';
import { SimilarTickets } from './ai-similar';
import { TriagePanel } from './ai-triage';
import { Composer, type ComposerHandle } from './composer';
import { ContactPanel } from './contact';
import { RepliesNotLeaving } from './mail-state';
import { Properties } from './properties';
import { Thread } from './thread';
import './ticket.css';

export function TicketPage() {
  const ws = useWorkspace();
  const { number } = useParams({ from: '/app/tickets/$number' });
  const n = Number(number);
  const navigate = useNavigate();
  const showShortcuts = useShowShortcuts();
  const ticket = useTicket(ws, n, Number.isSafeInteger(n) && n > 0);
  const t = ticket.data;
  const composer = useRef<ComposerHandle>(null);
  const [statusError, setStatusError] = useState<string | null>(null);
  const setStatus = useStatusChange(ws, t, setStatusError);
  const presence = useTicketPresence(t);
  const readOnly = useReadOnly(ws);
  const [details, setDetails] = useDetailsShown();
  // s summarizes, a asks (AI on only): the details, where the AI panel is, are shown first.
  const aiRequest = useAiPanelKeys(ws, () => setDetails(true));
  useEffect(() => {
    if (t) markSeen(ws, t);
  }, [ws, t]);

  useEffect(() => {
    document.title = t ? `#${t.number} ${t.subject} · Help desk` : 'Ticket · Help desk';
  }, [t]);

  useShortcuts({
    r: () => composer.current?.open('reply'),
    n: () => composer.current?.open('note'),
    e: () => {
      if (readOnly) setStatusError('Only agents and admins can solve a ticket.');
      else void setStatus('solved');
    },
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
        {(ticket.error as { status?: number }).status !== 404 && (
          <button type="button" onClick={askAgain(ticket)}>
            Try again
          </button>
        )}{' '}
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
          <span>
            {t.contact
              ? t.contact.name?.trim() && t.contact.email
                ? `${t.contact.name} <${t.contact.email}>`
                : contactName(t.contact)
              : ''}
          </span>
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
          <select
            id="ticket-status"
            value={t.status}
            disabled={readOnly}
            onChange={(e) => void setStatus(e.target.value as TicketStatus)}
          >
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
            disabled={t.status === 'solved' || readOnly}
          >
            <Icon name="solve" />
            Solve <kbd>e</kbd>
          </button>
          <AiArticleLink ws={ws} ticket={t} readOnly={readOnly} />
          <button
            type="button"
            className="button details-toggle"
            aria-expanded={details}
            aria-controls="ticket-details"
            onClick={() => setDetails(!details)}
          >
            <Icon name={details ? 'hideDetails' : 'showDetails'} />
            Details
          </button>
          <button type="button" className="icon-button" onClick={showShortcuts} aria-label="Keyboard shortcuts">
            <Icon name="shortcuts" />
          </button>
        </div>
        {statusError && (
          <p className="error" role="alert">
            {statusError}
          </p>
        )}
        <Viewers ws={ws} viewers={presence.viewers} />
      </header>
      <div className={details ? 'ticket-body' : 'ticket-body ticket-body-wide'}>
        <div className="ticket-main">
          {/* Scrolls on its own on wide screens: focusable, so the keyboard scrolls it too. */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus (axe: scrollable-region-focusable) */}
          <section className="thread-scroll" tabIndex={0} aria-label="Conversation">
            <Thread ws={ws} ticket={t} />
          </section>
          <RepliesNotLeaving ws={ws} ticket={t} />
          {readOnly ? (
            <p className="hint read-only">You can read this ticket; only agents and admins can reply or change it.</p>
          ) : (
            <Composer
              ref={composer}
              ws={ws}
              ticket={t}
              live={presence.handle}
              typing={presence.typing}
              customerTyping={presence.customerTyping}
            />
          )}
        </div>
        {details && (
          <aside className="ticket-side" id="ticket-details" aria-label="Ticket details">
            <AiPanel ws={ws} ticket={t} request={aiRequest} />
            <TriagePanel ws={ws} ticket={t} readOnly={readOnly} />
            <SimilarTickets ws={ws} ticket={t} />
            <Properties ws={ws} ticket={t} readOnly={readOnly} />
            {t.contact && <ContactPanel ws={ws} contactId={t.contact.id} ticket={t} />}
          </aside>
        )}
      </div>
    </article>
  );
}

const DETAILS_KEY = 'helpdesk.ticket.details';

/** Whether the details panel is shown: yes unless hidden in this browser (kept across tickets). */
function useDetailsShown(): [boolean, (shown: boolean) => void] {
  const [shown, setShown] = useState(() => {
    try {
      return localStorage.getItem(DETAILS_KEY) !== 'hidden';
    } catch {
      return true;
    }
  });
  const set = (v: boolean) => {
    setShown(v);
    try {
      localStorage.setItem(DETAILS_KEY, v ? 'shown' : 'hidden');
    } catch {
      // storage refused: the choice holds for this page only
    }
  };
  return [shown, set];
}

/** Viewers (role viewer) read tickets but change nothing: the page says so instead of a 403. */
function useReadOnly(ws: string): boolean {
  const session = useSession();
  const me = session.status === 'signed_in' ? session.user.id : null;
  const members = useMembers(ws).data;
  return members?.find((m) => m.user.id === me)?.role === 'viewer';
}

/** Who else has this ticket open (and is replying), who is typing; and my own state, for them. */
function useTicketPresence(ticket: Ticket | undefined) {
  const live = useLiveConnection();
  const session = useSession();
  const me = session.status === 'signed_in' ? session.user.id : null;
  const [viewers, setViewers] = useState<Viewer[]>([]);
  const [typing, setTyping] = useState<string | null>(null);
  const [customerTyping, setCustomerTyping] = useState(false);
  const [handle, setHandle] = useState<TicketLive | null>(null);
  const id = ticket?.id;
  const team = ticket?.team_id ?? null;
  useEffect(() => {
    if (!live || !id) return;
    let clear: ReturnType<typeof setTimeout> | undefined;
    let clearCustomer: ReturnType<typeof setTimeout> | undefined;
    const h = live.ticket(id, team, {
      onViewers: (v) => setViewers(v.filter((x) => x.userId !== me)),
      onTyping: (who) => {
        if (who.userId === me) return;
        setTyping(who.name);
        clearTimeout(clear);
        clear = setTimeout(() => setTyping(null), 4000);
      },
      onCustomerTyping: () => {
        setCustomerTyping(true);
        clearTimeout(clearCustomer);
        clearCustomer = setTimeout(() => setCustomerTyping(false), 4000);
      },
    });
    setHandle(h);
    return () => {
      clearTimeout(clear);
      clearTimeout(clearCustomer);
      h.leave();
      setHandle(null);
      setViewers([]);
      setTyping(null);
      setCustomerTyping(false);
    };
  }, [live, id, team, me]);
  return { viewers, typing, customerTyping, handle };
}

function Viewers({ ws, viewers }: { ws: string; viewers: Viewer[] }) {
  const members = useMembers(ws).data ?? [];
  const avatar = (id: string) => members.find((m) => m.user.id === id)?.user.avatar_url ?? null;
  return (
    <p className="viewers" aria-live="polite">
      {viewers.length > 0 && (
        <>
          <span className="viewer-faces">
            {viewers.map((v) => (
              <Avatar key={v.userId} url={avatar(v.userId)} name={v.name} size={24} />
            ))}
          </span>
          {`Also here: ${viewers.map((v) => (v.state === 'replying' ? `${v.name} (replying)` : v.name)).join(', ')}`}
        </>
      )}
    </p>
  );
}

/**
 * The status, shown once the API has it: a status sends the ticket out of queues and may mail the
 * customer (a rating request), so the page says "Solved" only when it is (the other properties
 * show at once: properties.tsx).
 */
function useStatusChange(ws: string, t: Ticket | undefined, onError: (e: string | null) => void) {
  const update = useUpdateTicket(ws);
  return async (status: TicketStatus) => {
    if (!t || t.status === status) return;
    onError(null);
    try {
      await update.mutateAsync({ ticket: t, body: { status } });
    } catch (err) {
      onError(`Could not change the status: ${errorText(err)}`);
    }
  };
}
