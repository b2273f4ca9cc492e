// What other modules do inside a ticket's own transaction when it changes: automations, SLA
// clocks, auto-assignment, notifications. The tickets module calls `deps.ticketHooks` at five
// points (ticket created, customer reply, agent reply, ticket updated, note added);
// each workflow module registers one hook in src/runtime.ts. Hooks run in `order`, inside the
// same transaction, so a change and its consequences commit (or fail) together.
//
// One pass per event: while the hooks of an event run, the changes they make (an automation
// setting the priority, auto-assignment picking an agent) call the hooks again only for those
// registered with `nested: true` (SLA clocks must follow a priority an automation set), never
// automations again. So an automation cannot trigger itself or another automation in a loop.
import { type RawBuilder, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import type { TicketActor } from './activities.js';
import { type TicketRow, ticketQuery } from './queries.js';

const reloadRow = (u: Unit, id: string): Promise<TicketRow> =>
  ticketQuery(u.trx, u.workspaceId).where('t.id', '=', id).executeTakeFirstOrThrow();

export type TicketTrigger = 'ticket_created' | 'customer_replied' | 'agent_replied' | 'ticket_updated' | 'note_added';

export interface TicketHookMessage {
  id: string;
  kind: 'reply' | 'note';
  /** Plain text of the body (quoted history included as stored). */
  body_text: string;
  body_html: string;
  from_email: string | null;
}

export interface TicketChange {
  trigger: TicketTrigger;
  /**
   * The ticket as the change and the hooks before this one left it, in the change's
   * transaction (locked or freshly inserted).
   */
  ticket: TicketRow;
  /** The ticket as the change itself left it, before any hook (set by the runner). */
  origin?: TicketRow;
  /** The ticket before the change (ticket_updated only). */
  before: TicketRow | null;
  /** The names of what changed (ticket_updated: the keys of ticket.updated's `changes`). */
  changes: string[];
  /** The message of the event: the first message on creation (if any), the reply or the note. */
  message: TicketHookMessage | null;
  /** Who made the change: a request's caller, the system, or an automation. */
  actor: TicketActor;
}

/** What a new ticket is before its INSERT: what the hooks' prepareCreated read. */
export interface NewTicketDraft {
  priority: string;
  status: string;
  /** The ticket's created_at (the INSERT writes this very time). */
  created_at: Date;
  /** Set when the first message is an agent's reply. */
  first_responded_at: Date | null;
  spam: boolean;
}

/** Columns a hook gives a new ticket in its INSERT. */
export interface NewTicketColumns {
  sla: string | null;
  due_at: Date | null;
  sla_breach_at: Date | null;
}

export interface TicketHook {
  name: string;
  /** Lower runs first: automations 10, assignment 20, SLA 30, notifications 40. */
  order: number;
  /** Also run for changes the hooks of an event make themselves (see above). */
  nested?: boolean;
  /**
   * Before a new ticket's INSERT: the columns it starts with (SLA due dates belong in the
   * created event, and one INSERT is cheaper than an INSERT and an UPDATE). Reads only.
   */
  prepareCreated?(deps: Deps, u: Unit, draft: NewTicketDraft): Promise<NewTicketColumns | null>;
  /**
   * Cheap SQL tests of whether the hook can have anything to do in a workspace, keyed by trigger
   * (or 'prepare' for prepareCreated): the runner asks all hooks' tests in one statement, once
   * per transaction, and skips a hook whose test for the event is false. A hook without a test
   * for an event always runs.
   */
  probe?(workspaceId: string): Partial<Record<TicketTrigger | 'prepare', RawBuilder<boolean>>>;
  /**
   * Returns false when it did not change the ticket's row (the runner then does not read it
   * again), the row as it left it when it has it at hand (the runner takes it as is), and
   * anything else when it changed the row (the runner reads it again).
   */
  run?(deps: Deps, u: Unit, change: TicketChange): Promise<TicketRow | boolean | undefined>;
}

/** The part of a message the hooks read. */
export function hookMessage(m: {
  id: string;
  kind: string;
  body_text: string;
  body_html: string;
  from_email: string | null;
}): TicketHookMessage {
  return {
    id: m.id,
    kind: m.kind === 'note' ? 'note' : 'reply',
    body_text: m.body_text,
    body_html: m.body_html,
    from_email: m.from_email,
  };
}

export class TicketHooks {
  private hooks: TicketHook[] = [];
  /** Units whose hooks are running: a change made by a hook is a nested call. */
  private readonly running = new WeakSet<Unit>();
  /** The probes' answers per transaction. */
  private readonly probed = new WeakMap<Unit, Promise<Map<string, boolean>>>();

  /** Registers a hook (again under the same name: replaced). */
  add(hook: TicketHook): void {
    this.hooks = [...this.hooks.filter((h) => h.name !== hook.name), hook].sort((a, b) => a.order - b.order);
  }

  /** The hooks' probes of the unit's workspace, asked once per transaction (hook name + key → answer). */
  async #probes(u: Unit): Promise<Map<string, boolean>> {
    let answers = this.probed.get(u);
    if (!answers) {
      const keys: string[] = [];
      const tests: RawBuilder<boolean>[] = [];
      for (const h of this.hooks) {
        for (const [key, test] of Object.entries(h.probe?.(u.workspaceId) ?? {})) {
          keys.push(`${h.name}:${key}`);
          tests.push(test as RawBuilder<boolean>);
        }
      }
      const found = new Map<string, boolean>();
      if (tests.length > 0) {
        const r = await sql<Record<string, boolean>>`SELECT ${sql.join(
          tests.map((t, i) => sql`(${t}) AS ${sql.ref(`p${i}`)}`),
        )}`.execute(u.trx);
        for (const [i, k] of keys.entries()) found.set(k, r.rows[0]?.[`p${i}`] !== false);
      }
      answers = Promise.resolve(found);
      this.probed.set(u, answers);
    }
    return answers;
  }

  /** Whether a hook may have work for this event (its probe says so, or it has none). */
  async #wanted(u: Unit, h: TicketHook, key: string): Promise<boolean> {
    if (!h.probe) return true;
    return (await this.#probes(u)).get(`${h.name}:${key}`) ?? true;
  }

  /** The columns the hooks give a new ticket in its INSERT (each null when no hook sets it). */
  async prepareCreated(deps: Deps, u: Unit, draft: NewTicketDraft): Promise<NewTicketColumns> {
    const columns: NewTicketColumns = { sla: null, due_at: null, sla_breach_at: null };
    for (const h of this.hooks) {
      if (!h.prepareCreated || !(await this.#wanted(u, h, 'prepare'))) continue;
      Object.assign(columns, await h.prepareCreated(deps, u, draft));
    }
    return columns;
  }

  /**
   * Runs the hooks of a change in order; each sees the ticket as the hooks before it left it.
   * Returns the ticket as they all left it, or null when none changed it.
   */
  async run(deps: Deps, u: Unit, change: TicketChange): Promise<TicketRow | null> {
    const nested = this.running.has(u);
    if (!nested) this.running.add(u);
    let current: TicketChange = { ...change, origin: change.ticket };
    let changed = false;
    try {
      for (const h of this.hooks) {
        if (!h.run || (nested && !h.nested)) continue;
        if (!(await this.#wanted(u, h, change.trigger))) continue;
        const result = await h.run(deps, u, current);
        if (result === false) continue;
        changed = true;
        const ticket = typeof result === 'object' ? result : await reloadRow(u, change.ticket.id);
        current = { ...current, ticket };
      }
    } finally {
      if (!nested) this.running.delete(u);
    }
    return changed ? current.ticket : null;
  }
}
