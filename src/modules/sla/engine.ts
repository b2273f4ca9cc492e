// The SLA clocks of one ticket, as pure functions over what tickets.sla stores.
//
// Three clocks. First response and resolution run from the ticket's creation; next response runs
// from a customer's message on a ticket already answered. Each has a due date (the policy's
// minutes added to its start, counting only open minutes for a policy with business_hours while
// business hours are enabled) and stops:
// - first response: at the first agent reply (tickets.first_responded_at; notes and automations'
//   replies do not count), or when the ticket is solved or closed without one. Its due date
//   becomes null: a due date shown is a clock still running.
// - next response (only for a policy with next_response_minutes): starts when a customer's message
//   arrives on a ticket that has its first agent reply and no next-response clock running, from
//   that message (so later messages before an answer keep the oldest unanswered one as the start);
//   stops at the next agent reply (the same replies as a first response), or when the ticket is
//   solved or closed. Each new cycle takes the targets of the policy matching the ticket's priority
//   then (as a reopening does) and may breach again.
// - resolution: when the ticket is solved or closed (due date null). Reopening a solved or closed
//   ticket starts a fresh resolution clock from the moment it reopened (the policy's full
//   resolution time); the first-response clock never restarts.
// A clock past its due date is breached once: `breached` turns true and stays true (the ticket
// breached its SLA at some point), and the clock is remembered in `breached_kinds` so a sweep never
// marks it twice (a reopened ticket's new resolution clock, and each new next-response cycle, may
// breach again: starting them clears their kind).
// A priority change recomputes the running clocks from their starts with the policy of the new
// priority, keeping `breached`, the stopped clocks and the clocks already breached; with no policy
// for the new priority the clocks stop (sla becomes null, or keeps breached true with no due dates).
// A new priority whose policy has no next-response target stops that clock too, though the
// customer's message stays unanswered: a later priority whose policy has one restarts it from there.

export type SlaKind = 'first_response' | 'next_response' | 'resolution';

/** tickets.sla: the API's five fields plus the clocks' bookkeeping (not shown). */
export interface StoredSla {
  policy_id: string | null;
  first_response_due_at: string | null;
  next_response_due_at: string | null;
  resolution_due_at: string | null;
  breached: boolean;
  /** When the resolution clock started: the ticket's creation, or its last reopening ('' unknown). */
  resolution_from: string;
  /**
   * The oldest customer message not answered yet, since the first agent reply: the start of the
   * next-response clock ('' none waiting: answered, solved or closed, or not answered a first time).
   */
  next_response_from: string;
  /** Clocks already marked breached. */
  breached_kinds: SlaKind[];
}

export interface PolicyTargets {
  id: string;
  first_response_minutes: number;
  /** null: no next-response clock. */
  next_response_minutes: number | null;
  resolution_minutes: number;
  business_hours: boolean;
}

/** What of a ticket the clocks depend on. */
export interface ClockState {
  created_at: Date;
  status: string;
  first_responded_at: Date | null;
  spam: boolean;
}

/** A due date: `minutes` after `from` (open minutes with business hours); null when none exists. */
export type DueFn = (from: Date, minutes: number, businessHours: boolean) => Date | null;

const isDone = (status: string) => status === 'solved' || status === 'closed';
const isoOf = (d: Date | null) => (d === null ? null : d.toISOString());

/** tickets.sla as stored (null or an object written by this module; older ones lack next response). */
export function parseSla(raw: unknown): StoredSla | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Partial<StoredSla>;
  return {
    policy_id: r.policy_id ?? null,
    first_response_due_at: r.first_response_due_at ?? null,
    next_response_due_at: r.next_response_due_at ?? null,
    resolution_due_at: r.resolution_due_at ?? null,
    breached: r.breached === true,
    resolution_from: typeof r.resolution_from === 'string' ? r.resolution_from : '',
    next_response_from: typeof r.next_response_from === 'string' ? r.next_response_from : '',
    breached_kinds: Array.isArray(r.breached_kinds) ? r.breached_kinds : [],
  };
}

/** The next-response due date of a cycle started at `from` under `policy` (null without a target). */
function nextResponseDue(policy: PolicyTargets | null, from: string, due: DueFn): string | null {
  if (policy === null || policy.next_response_minutes === null || from === '') return null;
  return isoOf(due(new Date(from), policy.next_response_minutes, policy.business_hours));
}

/** The clocks of a new ticket under `policy` (already stopped ones have no due date). */
export function startSla(policy: PolicyTargets, t: ClockState, due: DueFn): StoredSla {
  const run = running(t);
  return {
    policy_id: policy.id,
    first_response_due_at: run.first_response
      ? isoOf(due(t.created_at, policy.first_response_minutes, policy.business_hours))
      : null,
    // Only a customer's message after the first agent reply starts it.
    next_response_due_at: null,
    resolution_due_at: run.resolution
      ? isoOf(due(t.created_at, policy.resolution_minutes, policy.business_hours))
      : null,
    breached: false,
    resolution_from: t.created_at.toISOString(),
    next_response_from: '',
    breached_kinds: [],
  };
}

/**
 * Which clocks the ticket's state lets run: a first reply stops one (and lets the next-response
 * clock run), solved or closed all.
 */
function running(t: ClockState): Record<SlaKind, boolean> {
  return {
    first_response: t.first_responded_at === null && !isDone(t.status),
    next_response: t.first_responded_at !== null && !isDone(t.status),
    resolution: !isDone(t.status),
  };
}

/** Stops the clocks the ticket's state has stopped (first reply; solved or closed stops all). */
export function syncSla(s: StoredSla, t: ClockState): StoredSla {
  const next = { ...s };
  const run = running(t);
  if (!run.first_response) next.first_response_due_at = null;
  if (!run.next_response) {
    next.next_response_due_at = null;
    next.next_response_from = '';
  }
  if (!run.resolution) next.resolution_due_at = null;
  return next;
}

/** After a priority change: the running clocks again from their starts under `policy`. */
export function recomputeSla(
  prev: StoredSla | null,
  policy: PolicyTargets | null,
  t: ClockState,
  due: DueFn,
): StoredSla | null {
  if (policy === null) {
    if (prev === null || !prev.breached) return null;
    return { ...prev, first_response_due_at: null, next_response_due_at: null, resolution_due_at: null };
  }
  if (prev === null) return startSla(policy, t, due);
  const from = prev.resolution_from === '' ? t.created_at : new Date(prev.resolution_from);
  return syncSla(
    {
      ...prev,
      policy_id: policy.id,
      first_response_due_at: isoOf(due(t.created_at, policy.first_response_minutes, policy.business_hours)),
      next_response_due_at: nextResponseDue(policy, prev.next_response_from, due),
      resolution_due_at: isoOf(due(from, policy.resolution_minutes, policy.business_hours)),
    },
    t,
  );
}

/**
 * A solved or closed ticket reopened at `now`: a fresh resolution clock under `policy` (none
 * without a policy). The same `now` gives the same clock, so applying it twice changes nothing.
 */
export function reopenSla(
  prev: StoredSla,
  policy: PolicyTargets | null,
  t: ClockState,
  due: DueFn,
  now: Date,
): StoredSla {
  if (policy === null || isDone(t.status)) return prev;
  return {
    ...prev,
    policy_id: policy.id,
    resolution_from: now.toISOString(),
    resolution_due_at: isoOf(due(now, policy.resolution_minutes, policy.business_hours)),
    breached_kinds: prev.breached_kinds.filter((k) => k !== 'resolution'),
  };
}

/**
 * Whether a customer's message now starts a next-response cycle: the ticket has its first agent
 * reply, is not solved or closed, and no customer message is waiting for an answer already.
 */
export function startsNextResponse(s: StoredSla, t: ClockState): boolean {
  return running(t).next_response && s.next_response_from === '';
}

/**
 * A customer's message at `at`: a new next-response cycle from it under `policy` (the policy
 * matching the ticket's priority now) when startsNextResponse, else the SLA as it was. The cycle
 * is remembered even without a target (a priority change may give it one); its kind may breach
 * again.
 */
export function customerWroteSla(
  prev: StoredSla,
  policy: PolicyTargets | null,
  t: ClockState,
  due: DueFn,
  at: Date,
): StoredSla {
  if (!startsNextResponse(prev, t)) return prev;
  const from = at.toISOString();
  return {
    ...prev,
    policy_id: policy?.id ?? prev.policy_id,
    next_response_due_at: nextResponseDue(policy, from, due),
    next_response_from: from,
    breached_kinds: prev.breached_kinds.filter((k) => k !== 'next_response'),
  };
}

/** An agent's reply (not a note, not an automation's): the next-response clock stops. */
export function agentRepliedSla(prev: StoredSla): StoredSla {
  if (prev.next_response_from === '' && prev.next_response_due_at === null) return prev;
  return { ...prev, next_response_due_at: null, next_response_from: '' };
}

/** The clocks past due at `now` and not yet breached, and the SLA once they are marked. */
export function breachSla(prev: StoredSla, t: ClockState, now: Date): { sla: StoredSla; kinds: SlaKind[] } {
  const s = syncSla(prev, t);
  const kinds: SlaKind[] = [];
  const past = (at: string | null) => at !== null && new Date(at).getTime() <= now.getTime();
  if (past(s.first_response_due_at) && !s.breached_kinds.includes('first_response')) kinds.push('first_response');
  if (past(s.next_response_due_at) && !s.breached_kinds.includes('next_response')) kinds.push('next_response');
  if (past(s.resolution_due_at) && !s.breached_kinds.includes('resolution')) kinds.push('resolution');
  if (kinds.length === 0) return { sla: s, kinds };
  return { sla: { ...s, breached: true, breached_kinds: [...s.breached_kinds, ...kinds] }, kinds };
}

const earliest = (dates: Array<string | null>): Date | null => {
  const ms = dates.filter((d): d is string => d !== null).map((d) => new Date(d).getTime());
  return ms.length === 0 ? null : new Date(Math.min(...ms));
};

/**
 * The indexed columns: due_at, the nearest due date of a running clock (sort=due, breached
 * ones included: they are the most urgent); sla_breach_at, the nearest one not yet breached (the
 * sweep's; none for spam).
 */
export function slaColumns(s: StoredSla | null, t: ClockState): { due_at: Date | null; sla_breach_at: Date | null } {
  if (s === null) return { due_at: null, sla_breach_at: null };
  const due_at = earliest([s.first_response_due_at, s.next_response_due_at, s.resolution_due_at]);
  const unbreached = (kind: SlaKind, at: string | null) => (s.breached_kinds.includes(kind) ? null : at);
  const sla_breach_at = t.spam
    ? null
    : earliest([
        unbreached('first_response', s.first_response_due_at),
        unbreached('next_response', s.next_response_due_at),
        unbreached('resolution', s.resolution_due_at),
      ]);
  return { due_at, sla_breach_at };
}

/** The part the API shows (what decides whether ticket.updated names `sla`). */
export function shownSla(s: StoredSla | null) {
  if (s === null) return null;
  return {
    policy_id: s.policy_id,
    first_response_due_at: s.first_response_due_at,
    next_response_due_at: s.next_response_due_at,
    resolution_due_at: s.resolution_due_at,
    breached: s.breached,
  };
}
