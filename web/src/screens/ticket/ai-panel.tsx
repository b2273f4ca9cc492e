// The ticket page's AI panel (docs/app.md "AI"), at the top of the details, shown only while AI is
// on: the stored summary (custom.ai_summary: the summary, its key points, the customer's sentiment,
// when it was made) with Summarize or Refresh (s), which updates live for everyone (ticket.updated);
// and "Ask about this ticket" (a): a question, the answer streamed as it arrives, then with its
// sources. Escape or Stop stops what runs, as leaving the page does.

import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import {
  type Answer,
  aiErrorText,
  askAboutTicket,
  isStopped,
  type Summary,
  storedSummary,
  useAiOn,
  useStoppable,
  useSummarize,
} from '../../data/ai';
import type { Ticket } from '../../lib/api';
import { when } from '../../lib/format';
import { useShortcuts } from '../../lib/keys';
import { Icon } from '../../ui/icons';
import { AiErrorText } from './ai-error';
import './ai.css';

/** What the page's keys asked of the panel (summarize, or the question box), until it is done. */
export interface AiRequest {
  what: 'summarize' | 'ask';
  done(): void;
}

/** The panel's keys (s, a) while AI is on: the details are shown first when hidden. */
export function useAiPanelKeys(ws: string, showDetails: () => void): AiRequest | null {
  const on = useAiOn(ws);
  const [request, setRequest] = useState<AiRequest | null>(null);
  const ask = (what: AiRequest['what']) => {
    showDetails();
    const r: AiRequest = { what, done: () => setRequest((now) => (now === r ? null : now)) };
    setRequest(r);
  };
  useShortcuts({ s: () => ask('summarize'), a: () => ask('ask') }, on);
  return request;
}

export function AiPanel({ ws, ticket, request }: { ws: string; ticket: Ticket; request: AiRequest | null }) {
  if (!useAiOn(ws)) return null;
  return (
    <section className="side-section ai-panel" aria-labelledby="ai-panel-title">
      <h2 id="ai-panel-title">
        <Icon name="ai" /> AI
      </h2>
      <SummaryBox ws={ws} ticket={ticket} request={request} />
      <AskBox ticket={ticket} request={request} />
    </section>
  );
}

const SENTIMENT: Record<string, string> = {
  positive: 'Positive',
  neutral: 'Neutral',
  negative: 'Negative',
  frustrated: 'Frustrated',
};

function SummaryBox({ ws, ticket, request }: { ws: string; ticket: Ticket; request: AiRequest | null }) {
  const summarize = useSummarize(ws, ticket);
  const run = useStoppable();
  const [error, setError] = useState<string | null>(null);
  const stored = storedSummary(ticket);
  const go = async () => {
    if (run.busy) return;
    const signal = run.begin();
    setError(null);
    try {
      await summarize.mutateAsync(signal);
    } catch (err) {
      if (!isStopped(err)) setError(aiErrorText(err));
    } finally {
      run.end(signal);
    }
  };
  const asked = request?.what === 'summarize' ? request : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new request is the trigger
  useEffect(() => {
    if (!asked) return;
    asked.done();
    void go();
  }, [asked]);
  return (
    <div className="ai-summary" aria-busy={run.busy}>
      <h3 id="ai-summary-title">Summary</h3>
      {stored ? <SummaryText s={stored} /> : <p className="hint">No summary yet.</p>}
      <div className="ai-actions">
        {run.busy ? (
          <>
            <span role="status">Summarizing…</span>
            <button type="button" className="button small" onClick={run.stop}>
              Stop <kbd>Esc</kbd>
            </button>
          </>
        ) : (
          <button type="button" className="button small" onClick={() => void go()}>
            <Icon name={stored ? 'refresh' : 'ai'} />
            {stored ? 'Refresh summary' : 'Summarize'} <kbd>s</kbd>
          </button>
        )}
      </div>
      <p className="error" role="alert" hidden={!error}>
        <AiErrorText text={error} />
      </p>
    </div>
  );
}

function SummaryText({ s }: { s: Summary }) {
  return (
    <>
      <p className="ai-summary-text">{s.summary}</p>
      {s.key_points.length > 0 && (
        <ul className="ai-key-points" aria-label="Key points">
          {s.key_points.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <p className="hint">
        {s.sentiment && (
          <span className={`ai-sentiment ai-sentiment-${s.sentiment}`}>
            Customer: {SENTIMENT[s.sentiment] ?? s.sentiment}
          </span>
        )}
        {s.sentiment ? ' · ' : ''}
        Updated <time dateTime={s.updated_at}>{when(s.updated_at)}</time>
      </p>
    </>
  );
}

function AskBox({ ticket, request }: { ticket: Ticket; request: AiRequest | null }) {
  const run = useStoppable();
  const [question, setQuestion] = useState('');
  const [streamed, setStreamed] = useState('');
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const id = useId();
  const asked = request?.what === 'ask' ? request : null;
  useEffect(() => {
    if (!asked) return;
    asked.done();
    input.current?.focus();
  }, [asked]);

  const ask = async (e?: FormEvent) => {
    e?.preventDefault();
    const q = question.trim();
    if (!q || run.busy) return;
    const signal = run.begin();
    setError(null);
    setAnswer(null);
    setStreamed('');
    try {
      const a = await askAboutTicket(ticket.id, q, (delta) => setStreamed((s) => s + delta), signal);
      setAnswer(a);
    } catch (err) {
      if (!isStopped(err)) setError(aiErrorText(err));
    } finally {
      run.end(signal);
    }
  };

  return (
    <form className="ai-ask" onSubmit={(e) => void ask(e)} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Ask about this ticket</h3>
      <label htmlFor={`${id}-q`} className="visually-hidden">
        Question about this ticket
      </label>
      <textarea
        id={`${id}-q`}
        ref={input}
        rows={2}
        maxLength={2000}
        value={question}
        placeholder="What did the customer already try?"
        aria-describedby={`${id}-hint`}
        onChange={(e) => setQuestion(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) void ask(e);
        }}
      />
      <p id={`${id}-hint`} className="hint">
        Enter asks; <kbd>a</kbd> comes back here.
      </p>
      <div className="ai-actions">
        {run.busy ? (
          <>
            <span role="status">Answering…</span>
            <button type="button" className="button small" onClick={run.stop}>
              Stop <kbd>Esc</kbd>
            </button>
          </>
        ) : (
          <button type="submit" className="button small" disabled={!question.trim()}>
            <Icon name="ask" />
            Ask
          </button>
        )}
      </div>
      <section className="ai-answer" aria-live="polite" aria-label="Answer">
        {answer ? (
          // biome-ignore lint/security/noDangerouslySetInnerHtml: the service sanitizes the model's HTML as it does messages
          <div className="body" dangerouslySetInnerHTML={{ __html: answer.answer_html }} />
        ) : streamed ? (
          <p className="ai-streamed">{streamed}</p>
        ) : null}
        {answer && answer.sources.length > 0 && (
          <ul className="ai-source-list" aria-label="Sources of the answer">
            {answer.sources.map((s) => (
              <li key={s.article_id}>
                <a href={s.url} target="_blank" rel="noopener">
                  {s.title}
                  <span className="visually-hidden"> (opens in a new tab)</span>
                </a>
              </li>
            ))}
          </ul>
        )}
      </section>
      <p className="error" role="alert" hidden={!error}>
        <AiErrorText text={error} />
      </p>
    </form>
  );
}
