// The ticket's SLA clocks (first response, next response, resolution): time left, overdue or met,
// moving every 30 seconds.
import { useEffect, useState } from 'react';
import type { Ticket } from '../../lib/api';

/** Time left (or overdue) in words, to the minute. */
function span(ms: number): string {
  const m = Math.round(Math.abs(ms) / 60_000);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const i = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(i);
  }, [everyMs]);
  return now;
}

/**
 * One clock: time left, overdue, or met. A clock not running (no due date) shows nothing, or
 * `idle` as a done state when given.
 */
function Clock({
  label,
  due,
  doneAt,
  now,
  idle,
}: {
  label: string;
  due: string | null;
  doneAt: string | null;
  now: number;
  idle?: string;
}) {
  if (!due) {
    if (!idle) return null;
    return (
      <li className="sla-clock sla-met">
        <span>{label}</span>
        <span className="sla-idle">{idle}</span>
      </li>
    );
  }
  const dueMs = new Date(due).getTime();
  let text: string;
  let state: 'ok' | 'soon' | 'late' | 'met';
  if (doneAt) {
    const late = new Date(doneAt).getTime() > dueMs;
    text = late ? 'Met late' : 'Met';
    state = late ? 'late' : 'met';
  } else if (now > dueMs) {
    text = `Overdue by ${span(now - dueMs)}`;
    state = 'late';
  } else {
    text = `${span(dueMs - now)} left`;
    state = dueMs - now < 60 * 60_000 ? 'soon' : 'ok';
  }
  return (
    <li className={`sla-clock sla-${state}`}>
      <span>{label}</span>
      <time dateTime={due} title={new Date(due).toLocaleString()}>
        {text}
      </time>
    </li>
  );
}

export function SlaClocks({ t }: { t: Ticket }) {
  const now = useNow(30_000);
  if (!t.sla) return null;
  const done = t.status === 'solved' || t.status === 'closed';
  const solved = done ? (t.solved_at ?? t.updated_at) : null;
  const { first_response_due_at, next_response_due_at, resolution_due_at } = t.sla;
  return (
    <div className="sla">
      <h3>SLA {t.sla.breached && <span className="sla-breached">Breached</span>}</h3>
      {!first_response_due_at && !next_response_due_at && !resolution_due_at ? (
        <p className="hint">No targets on this ticket.</p>
      ) : (
        <ul className="sla-clocks">
          <Clock label="First response" due={first_response_due_at} doneAt={t.first_responded_at} now={now} />
          {/* Runs while a customer's message after the first reply waits for an agent's reply. */}
          <Clock
            label="Next response"
            due={next_response_due_at}
            doneAt={null}
            now={now}
            idle={t.first_responded_at && !done ? 'No reply due' : undefined}
          />
          <Clock label="Resolution" due={resolution_due_at} doneAt={solved} now={now} />
        </ul>
      )}
    </div>
  );
}
