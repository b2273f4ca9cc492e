// The assistant's panel (issue 37 item 8; docs/app.md "The assistant panel"): a complementary
// region beside the screen, named after the assistant (GET /v1/ai/config `assistant_name`). It
// opens into the message box; Escape or Close closes it and gives the focus back. A message goes
// with the person's current screen (screen-context.ts) and its run streams in: each step's label
// and status as it changes, with the records it found linked, then the text. A write comes back as
// an approval card (parts.tsx) whose Approve / Deny send the decision with its token and stream
// the rest of the run. With nothing said yet the tips are offered (each a button sending its
// prompt). The conversations: a list to pick from, New, Rename and Delete. It stays mounted while
// closed, so a run goes on behind it.
import { useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { useAiConfig } from '../../data/ai';
import {
  type Approval,
  assistantErrorText,
  createSession,
  decide,
  isAssistantOff,
  type RunHandlers,
  type RunStatus,
  type Session,
  type Step,
  sendMessage,
  type Tip,
  type TranscriptMessage,
  useAssistantSession,
  useAssistantSessions,
  useAssistantTips,
  useDeleteSession,
  useRenameSession,
} from '../../data/assistant';
import { keys } from '../../data/keys';
import { useWorkspace } from '../../lib/context';
import { ago } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { Icon } from '../../ui/icons';
import { Markdown } from './markdown';
import { ApprovalCard, Steps } from './parts';
import { useScreenContext } from './screen-context';
import { ASSISTANT_KEY, closeAssistant, onFocusAssistant } from './store';
import './assistant.css';

/** A run under way: what was asked (or decided), and what has come back so far. */
interface Live {
  /** The person's message (null for a decision). */
  question: string | null;
  /** The decision this run continues from. */
  decided: { approval: Approval; decision: 'approve' | 'deny' } | null;
  text: string;
  steps: Step[];
  approval: Approval | null;
  /** The transcript's messages when it began: later ones are this run's, shown from `live` until it ends. */
  known: Set<string>;
}

const typing = (el: EventTarget | null) =>
  el instanceof HTMLElement && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));

export function AssistantPanel({ open }: { open: boolean }) {
  const ws = useWorkspace();
  const qc = useQueryClient();
  const config = useAiConfig(ws);
  const name = config.data?.assistant_name || 'Assistant';
  const configOff = config.data !== undefined && (!config.data.enabled || !config.data.features.assistant);
  const [current, setCurrent] = useState<string | null>(null);
  const [listOpen, setListOpen] = useState(false);
  const [live, setLive] = useState<Live | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [deciding, setDeciding] = useState<'approve' | 'deny' | null>(null);
  const [draft, setDraft] = useState('');
  const [announce, setAnnounce] = useState('');
  const sessions = useAssistantSessions(ws, open && !configOff);
  const detail = useAssistantSession(ws, current);
  const tips = useAssistantTips(ws, open && !configOff);
  const screen = useScreenContext(ws);
  const box = useRef<HTMLTextAreaElement>(null);
  const region = useRef<HTMLElement>(null);
  const running = useRef<AbortController | null>(null);
  const logEnd = useRef<HTMLDivElement>(null);
  const boxId = useId();

  const off = configOff || isAssistantOff(sessions.error) || isAssistantOff(tips.error) || isAssistantOff(error);

  // Opening: into the message box; the tips asked again.
  useEffect(() => {
    if (!open) return;
    // Into the message box; with the assistant off, the panel itself (its words are read first).
    (box.current ?? region.current)?.focus();
    void qc.invalidateQueries({ queryKey: keys.assistantTips(ws) });
  }, [open, qc, ws]);
  // The frame gives the focus back to the panel after a drawer that held it (shell.tsx).
  useEffect(() => {
    onFocusAssistant(() => (box.current ?? region.current)?.focus());
    return () => onFocusAssistant(null);
  }, []);
  // Leaving the frame stops reading a run.
  useEffect(() => () => running.current?.abort(), []);

  const messages = detail.data?.messages ?? [];
  const shown = live ? messages.filter((m) => live.known.has(m.id)) : messages;
  const pending = live ? null : (detail.data?.approval ?? null);
  const session: Session | null = detail.data?.session ?? null;

  // Keep the newest in sight as the run streams.
  // biome-ignore lint/correctness/useExhaustiveDependencies: what grows is the trigger
  useEffect(() => {
    logEnd.current?.scrollIntoView?.({ block: 'end' });
  }, [live?.text, live?.steps.length, live?.approval, shown.length, pending]);

  /** The run's events into `live`. */
  const handlers: RunHandlers = {
    session: (s) => {
      qc.setQueryData<Session[]>(keys.assistantSessions(ws), (l) => (l ? [s, ...l.filter((x) => x.id !== s.id)] : l));
    },
    text: (piece) => setLive((l) => (l ? { ...l, text: l.text + piece } : l)),
    step: (s) =>
      setLive((l) => {
        if (!l) return l;
        const at = l.steps.findIndex((x) => x.id === s.id);
        const steps = at === -1 ? [...l.steps, s] : l.steps.map((x, i) => (i === at ? s : x));
        return { ...l, steps };
      }),
    approval: (a) => setLive((l) => (l ? { ...l, approval: a } : l)),
  };

  /** Runs `go` as the panel's run: its end brings the transcript as stored. */
  const runIt = async (
    id: string,
    start: Omit<Live, 'text' | 'steps' | 'approval' | 'known'>,
    go: (on: RunHandlers, signal: AbortSignal) => Promise<RunStatus>,
  ): Promise<boolean> => {
    running.current?.abort();
    const c = new AbortController();
    running.current = c;
    setError(null);
    setAnnounce(`${name} is working…`);
    const known = new Set(
      (qc.getQueryData<{ messages: TranscriptMessage[] }>(keys.assistantSession(ws, id))?.messages ?? []).map(
        (m) => m.id,
      ),
    );
    setLive({ ...start, text: '', steps: [], approval: null, known });
    let ok = true;
    try {
      const status = await go(handlers, c.signal);
      setAnnounce(status === 'awaiting_approval' ? `${name} asks for your approval.` : `${name} answered.`);
    } catch (err) {
      ok = false;
      if (!(err instanceof DOMException && err.name === 'AbortError')) {
        setError(err);
        setAnnounce('');
      } else setAnnounce('Stopped.');
    } finally {
      if (running.current === c) running.current = null;
      await Promise.all([
        qc.refetchQueries({ queryKey: keys.assistantSession(ws, id), exact: true }),
        qc.invalidateQueries({ queryKey: keys.assistantSessions(ws) }),
      ]).catch(() => {});
      setLive(null);
    }
    return ok;
  };

  const send = async (text: string) => {
    const t = text.trim();
    if (!t || live) return;
    setError(null);
    let id = current;
    if (!id) {
      try {
        const s = await createSession();
        id = s.id;
        qc.setQueryData<Session[]>(keys.assistantSessions(ws), (l) => (l ? [s, ...l] : [s]));
        // The first conversation ticks onboarding's "Ask the assistant".
        void qc.invalidateQueries({ queryKey: keys.onboarding(ws) });
        setCurrent(id);
      } catch (err) {
        setError(err);
        return;
      }
    }
    setDraft('');
    const context = screen();
    const sent = await runIt(id, { question: t, decided: null }, (on, signal) =>
      sendMessage(id, t, context, on, signal),
    );
    // Not taken (out of credit, busy, too many): the words are given back to send again.
    if (!sent) setDraft((d) => d || t);
  };

  const onDecide = async (approval: Approval, decision: 'approve' | 'deny') => {
    if (!current || live) return;
    setDeciding(decision);
    const ok = await runIt(current, { question: null, decided: { approval, decision } }, (on, signal) =>
      decide(approval.action_id, decision, approval.token, on, signal),
    );
    setDeciding(null);
    if (ok && decision === 'approve') {
      // What it changed shows as changed (the live events bring it too).
      void qc.invalidateQueries({ queryKey: keys.tickets(ws) });
      void qc.invalidateQueries({ queryKey: keys.counts(ws) });
      for (const t of approval.preview.targets) {
        if (t.kind !== 'ticket') continue;
        if (t.number !== undefined) void qc.invalidateQueries({ queryKey: keys.ticket(ws, t.number) });
        void qc.invalidateQueries({ queryKey: keys.messages(ws, t.id) });
        void qc.invalidateQueries({ queryKey: keys.activities(ws, t.id) });
      }
    }
    box.current?.focus();
  };

  const startNew = () => {
    if (live) return;
    setCurrent(null);
    setError(null);
    setListOpen(false);
    box.current?.focus();
  };

  const pick = (id: string) => {
    if (live) return;
    setCurrent(id);
    setError(null);
    setListOpen(false);
    box.current?.focus();
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void send(draft);
  };

  const onBoxKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send(draft);
    }
  };

  // The panel's keys stay in the panel (a page's single keys must not act on the screen behind
  // it); Escape closes it, and its own key too when not typing.
  const onPanelKey = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key === 'Escape') {
      if (e.defaultPrevented) return;
      e.preventDefault();
      e.stopPropagation();
      if (listOpen) setListOpen(false);
      else closeAssistant();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === ASSISTANT_KEY && !typing(e.target)) {
      e.preventDefault();
      closeAssistant();
    }
    e.stopPropagation();
  };

  const empty = !live && shown.length === 0 && !pending;
  const list = sessions.data ?? [];

  return (
    <aside ref={region} className="assistant" aria-label={name} hidden={!open} tabIndex={-1} onKeyDown={onPanelKey}>
      <header className="assistant-head">
        <h2>
          <Icon name="ai" /> {name}
        </h2>
        <div className="assistant-head-actions">
          {!off && (
            <>
              <button
                type="button"
                aria-expanded={listOpen}
                onClick={() => setListOpen((o) => !o)}
                disabled={live !== null}
              >
                Conversations
              </button>
              <button type="button" onClick={startNew} disabled={live !== null}>
                New
              </button>
            </>
          )}
          <button type="button" className="icon-button" aria-label={`Close ${name}`} onClick={() => closeAssistant()}>
            <Icon name="close" />
          </button>
        </div>
      </header>

      {off ? (
        <Off name={name} aiOn={config.data?.enabled !== false} />
      ) : (
        <>
          {listOpen && <SessionList sessions={list} current={current} onPick={pick} loading={sessions.isPending} />}
          {session && !listOpen && (
            <SessionBar
              key={session.id}
              session={session}
              disabled={live !== null}
              onDeleted={() => {
                setCurrent(null);
                box.current?.focus();
              }}
            />
          )}
          <section className="assistant-log" aria-label="Conversation">
            {detail.isPending && current && !live && <p className="loading">Loading…</p>}
            {shown.map((m) => (
              <Turn key={m.id} message={m} name={name} />
            ))}
            {live && (
              <>
                {live.question && (
                  <div className="turn turn-user">
                    <p className="turn-who">You</p>
                    <Markdown text={live.question} />
                  </div>
                )}
                {live.decided && (
                  <p className="turn-decision">
                    You {live.decided.decision === 'approve' ? 'approved' : 'denied'}:{' '}
                    {live.decided.approval.preview.title}
                  </p>
                )}
                <div className="turn turn-assistant" aria-busy="true">
                  <p className="turn-who">{name}</p>
                  <Steps steps={live.steps} />
                  {live.text ? (
                    <Markdown text={live.text} />
                  ) : (
                    live.steps.length === 0 && <p className="hint">Thinking…</p>
                  )}
                  {live.approval && <ApprovalCard approval={live.approval} busy={null} disabled onDecide={() => {}} />}
                </div>
              </>
            )}
            {pending && <ApprovalCard approval={pending} busy={deciding} onDecide={(d) => void onDecide(pending, d)} />}
            {empty && (
              <Tips tips={tips.data ?? []} loading={tips.isPending} name={name} onPick={(t) => void send(t.prompt)} />
            )}
            <div ref={logEnd} />
          </section>
          {error !== null && (
            <div className="error assistant-error" role="alert">
              <p>{assistantErrorText(error, name)}</p>
              <ErrorHelp error={error} />
            </div>
          )}
          {detail.error && !isAssistantOff(detail.error) && (
            <p className="error" role="alert">
              {assistantErrorText(detail.error, name)}
            </p>
          )}
          <form className="assistant-compose" onSubmit={onSubmit}>
            <label htmlFor={boxId} className="visually-hidden">
              Message {name}
            </label>
            <textarea
              id={boxId}
              ref={box}
              rows={3}
              value={draft}
              maxLength={8000}
              placeholder={`Ask ${name} to find tickets, summarise or change them…`}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={onBoxKey}
            />
            <div className="assistant-compose-actions">
              <span className="hint">Enter sends; Shift+Enter for a new line.</span>
              {live ? (
                <button type="button" onClick={() => running.current?.abort()}>
                  Stop
                </button>
              ) : (
                <button type="submit" className="primary" disabled={!draft.trim()}>
                  <Icon name="send" /> Send<span className="visually-hidden"> to {name}</span>
                </button>
              )}
            </div>
          </form>
        </>
      )}
      <p className="visually-hidden" role="status">
        {announce}
      </p>
    </aside>
  );
}

function Turn({ message, name }: { message: TranscriptMessage; name: string }) {
  const user = message.role === 'user';
  return (
    <div className={`turn ${user ? 'turn-user' : 'turn-assistant'}`}>
      <p className="turn-who">{user ? 'You' : name}</p>
      {!user && <Steps steps={message.steps} />}
      {message.text && <Markdown text={message.text} />}
    </div>
  );
}

function Tips({ tips, loading, name, onPick }: { tips: Tip[]; loading: boolean; name: string; onPick(t: Tip): void }) {
  return (
    <div className="assistant-tips">
      <p className="hint">
        Ask {name} to find tickets, read a conversation or change tickets for you: it asks before every change.
      </p>
      {!loading && tips.length > 0 && (
        <ul aria-label="Suggestions">
          {tips.map((t) => (
            <li key={t.key}>
              <button type="button" className={`tip tip-${t.severity}`} onClick={() => onPick(t)}>
                {t.text}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function SessionList({
  sessions,
  current,
  onPick,
  loading,
}: {
  sessions: Session[];
  current: string | null;
  onPick(id: string): void;
  loading: boolean;
}) {
  if (loading) return <p className="loading">Loading…</p>;
  if (sessions.length === 0) return <p className="empty">No conversations yet.</p>;
  return (
    <ul className="assistant-sessions" aria-label="Conversations">
      {sessions.map((s) => (
        <li key={s.id}>
          <button type="button" aria-current={s.id === current || undefined} onClick={() => onPick(s.id)}>
            <span className="session-title">{s.title || 'New conversation'}</span>
            <span className="hint">{ago(s.updated_at)}</span>
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The conversation's title with Rename and Delete. */
function SessionBar({ session, disabled, onDeleted }: { session: Session; disabled: boolean; onDeleted(): void }) {
  const ws = useWorkspace();
  const rename = useRenameSession(ws);
  const remove = useDeleteSession(ws);
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [title, setTitle] = useState(session.title);
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const inputId = useId();
  useEffect(() => {
    if (editing) input.current?.select();
  }, [editing]);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const t = title.trim();
    if (!t) return;
    try {
      await rename.mutateAsync({ id: session.id, title: t });
      setEditing(false);
      requestAnimationFrame(() => renameButton.current?.focus());
    } catch {
      // Said below the field.
    }
  };

  if (editing)
    return (
      <form
        className="assistant-session-bar"
        onSubmit={save}
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.preventDefault();
          e.stopPropagation();
          setEditing(false);
          requestAnimationFrame(() => renameButton.current?.focus());
        }}
      >
        <label htmlFor={inputId} className="visually-hidden">
          Conversation title
        </label>
        <input
          id={inputId}
          ref={input}
          value={title}
          maxLength={200}
          onChange={(e) => setTitle(e.target.value)}
          aria-invalid={rename.isError || undefined}
        />
        <button type="submit" className="primary" disabled={rename.isPending || !title.trim()}>
          Save
        </button>
        <button type="button" onClick={() => setEditing(false)}>
          Cancel
        </button>
        {rename.isError && (
          <p className="error" role="alert">
            {assistantErrorText(rename.error, 'The assistant')}
          </p>
        )}
      </form>
    );

  if (confirming)
    return (
      <div className="assistant-session-bar">
        <p>Delete “{session.title}”? Its messages are gone for good.</p>
        <button
          type="button"
          className="danger"
          disabled={remove.isPending}
          onClick={async () => {
            try {
              await remove.mutateAsync(session.id);
              onDeleted();
            } catch {
              // Said below.
            }
          }}
        >
          Delete
        </button>
        <button type="button" onClick={() => setConfirming(false)}>
          Keep it
        </button>
        {remove.isError && (
          <p className="error" role="alert">
            {assistantErrorText(remove.error, 'The assistant')}
          </p>
        )}
      </div>
    );

  return (
    <div className="assistant-session-bar">
      <h3>{session.title || 'New conversation'}</h3>
      <button
        ref={renameButton}
        type="button"
        disabled={disabled}
        onClick={() => {
          setTitle(session.title);
          setEditing(true);
        }}
      >
        Rename
      </button>
      <button type="button" disabled={disabled} onClick={() => setConfirming(true)}>
        Delete
      </button>
    </div>
  );
}

/** What to do about an error, where there is something to do. */
function ErrorHelp({ error }: { error: unknown }) {
  const admin = useIsAdmin();
  const code = (error as { code?: string } | null)?.code;
  if (code === 'ai_balance_empty' && admin)
    return (
      <p>
        <Link to="/settings/$" params={{ _splat: 'billing' }}>
          Buy more AI credit in Settings → Billing
        </Link>
      </p>
    );
  if (code === 'ai_unsupported' && admin)
    return (
      <p>
        <Link to="/settings/$" params={{ _splat: 'ai' }}>
          Open Settings → AI
        </Link>
      </p>
    );
  return null;
}

/** The assistant is off: why, and how an admin turns it on. */
function Off({ name, aiOn }: { name: string; aiOn: boolean }) {
  const admin = useIsAdmin();
  const how = aiOn
    ? `In Settings → AI, under Features, check “The assistant (${name})” and save.`
    : `In Settings → AI, turn AI on for the workspace, then under Features check “The assistant (${name})” and save.`;
  return (
    <div className="assistant-off" role="note">
      <p>
        <strong>
          {name} is off in this workspace{aiOn ? '' : ' (AI is off)'}.
        </strong>
      </p>
      {admin ? (
        <>
          <p>You can turn it on. {how}</p>
          <p>
            <Link to="/settings/$" params={{ _splat: 'ai' }}>
              Open Settings → AI
            </Link>
          </p>
        </>
      ) : (
        <p>An owner or admin of the workspace can turn it on. {how}</p>
      )}
    </div>
  );
}
