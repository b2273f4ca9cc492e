// The SLA clocks of one ticket, as pure functions over what tickets.sla stores.
//
// Two clocks run from the ticket's creation: first response and resolution. Each has a due date
// (the policy's minutes added to its start, counting only open minutes for a policy with
// business_hours while business hours are enabled) and stops:
// - first response: at the first agent reply (tickets.first_responded_at; notes and automations'
//   replies do not count), or when the ticket is solved or closed without one. Its due date
//   becomes null: a due date shown is a clock still running.
// - resolution: when the ticket is solved or closed (due date null). Reopening a solved or closed
//   ticket starts a fresh resolution clock from the moment it reopened (the policy's full
//   resolution time); the first-response clock never restarts.
// A clock past its due date is breached once: `breached` turns true and stays true (the ticket
// breached its SLA at some point), and the clock is remembered in `breached_kinds` so a sweep never
// marks it twice (a reopened ticket's new resolution clock may breach again).
// A priority change recomputes the running clocks from their starts with the policy of the new
// priority, keeping `breached`, the stopped clocks and the clocks already breached; with no policy
// for the new priority the clocks stop (sla becomes null, or keeps breached true with no due dates).

export type SlaKind = 'first_response' | 'resolution';

/** tickets.sla: the API's four fields plus the clocks' bookkeeping (not shown). */
export interface StoredSla {
  policy_id: string | null;
  first_response_due_at: string | null;
  resolution_due_at: string | null;
  breached: boolean;
  /** When the resolution clock started: the ticket's creation, or its last reopening ('' unknown). */
  resolution_from: string;
  /** Clocks already marked breached. */
  breached_kinds: SlaKind[];
}

export interface PolicyTargets {
  id: string;
  first_response_minutes: number;
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

/** tickets.sla as stored (null or an object written by this module). */
export function parseSla(raw: unknown): StoredSla | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Partial<StoredSla>;
  return {
    policy_id: r.policy_id ?? null,
    first_response_due_at: r.first_response_due_at ?? null,
    resolution_due_at: r.resolution_due_at ?? null,
    breached: r.breached === true,
    resolution_from: typeof r.resolution_from === 'string' ? r.resolution_from : '',
    breached_kinds: Array.isArray(r.breached_kinds) ? r.breached_kinds : [],
  };
}

/** The clocks of a new ticket under `policy` (already stopped ones have no due date). */
export function startSla(policy: PolicyTargets, t: ClockState, due: DueFn): StoredSla {
  const run = running(t);
  return {
    policy_id: policy.id,
    first_response_due_at: run.first_response
      ? isoOf(due(t.created_at, policy.first_response_minutes, policy.business_hours))
      : null,
    resolution_due_at: run.resolution
      ? isoOf(due(t.created_at, policy.resolution_minutes, policy.business_hours))
      : null,
    breached: false,
    resolution_from: t.created_at.toISOString(),
    breached_kinds: [],
  };
}

/** Which clocks the ticket's state lets run: a first reply stops one, solved or closed both. */
function running(t: ClockState): Record<SlaKind, boolean> {
  return { first_response: t.first_responded_at === null && !isDone(t.status), resolution: !isDone(t.status) };
}

/** Stops the clocks the ticket's state has stopped (first reply; solved or closed stops both). */
export function syncSla(s: StoredSla, t: ClockState): StoredSla {
  const next = { ...s };
  const run = running(t);
  if (!run.first_response) next.first_response_due_at = null;
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
    return { ...prev, first_response_due_at: null, resolution_due_at: null };
  }
  if (prev === null) return startSla(policy, t, due);
  const from = prev.resolution_from === '' ? t.created_at : new Date(prev.resolution_from);
  return syncSla(
    {
      ...prev,
      policy_id: policy.id,
      first_response_due_at: isoOf(due(t.created_at, policy.first_response_minutes, policy.business_hours)),
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

/** The clocks past due at `now` and not yet breached, and the SLA once they are marked. */
export function breachSla(prev: StoredSla, t: ClockState, now: Date): { sla: StoredSla; kinds: SlaKind[] } {
  const s = syncSla(prev, t);
  const kinds: SlaKind[] = [];
  const past = (at: string | null) => at !== null && new Date(at).getTime() <= now.getTime();
  if (past(s.first_response_due_at) && !s.breached_kinds.includes('first_response')) kinds.push('first_response');
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
  const due_at = earliest([s.first_response_due_at, s.resolution_due_at]);
  const sla_breach_at = t.spam
    ? null
    : earliest([
        s.breached_kinds.includes('first_response') ? null : s.first_response_due_at,
        s.breached_kinds.includes('resolution') ? null : s.resolution_due_at,
      ]);
  return { due_at, sla_breach_at };
}

/** The part the API shows (what decides whether ticket.updated names `sla`). */
export function shownSla(s: StoredSla | null) {
  if (s === null) return null;
  return {
    policy_id: s.policy_id,
    first_response_due_at: s.first_response_due_at,
    resolution_due_at: s.resolution_due_at,
    breached: s.breached,
  };
}
