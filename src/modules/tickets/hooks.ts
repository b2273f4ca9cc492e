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
import type { Deps, TicketHookRunner } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import type { NewTicketColumns, NewTicketDraft, TicketChange, TicketHookMessage, TicketTrigger } from './change.js';
import { type TicketRow, ticketQuery } from './queries.js';

export type { NewTicketColumns, NewTicketDraft, TicketChange, TicketHookMessage, TicketTrigger } from './change.js';

const reloadRow = (u: Unit, id: string): Promise<TicketRow> =>
  ticketQuery(u.trx, u.workspaceId).where('t.id', '=', id).executeTakeFirstOrThrow();

export interface TicketHook {
  name: string;
  /** Lower runs first: automations 10, assignment 20, SLA 30, notifications 40, CSAT 50. */
  order: number;
  /** Also run for changes the hooks of an event make themselves (see above). */
  nested?: boolean;
  /**
   * Before a new ticket's INSERT: the columns it starts with (SLA due dates belong in the
   * created event, and one INSERT is cheaper than an INSERT and an UPDATE). Reads only.
   */
  prepareCreated?(deps: Deps, u: Unit, draft: NewTicketDraft, probed: unknown): Promise<NewTicketColumns | null>;
  /**
   * Cheap SQL of what the hook needs in a workspace, keyed by trigger (or 'prepare' for
   * prepareCreated): its configuration (the automations of the trigger, the SLA policies) or
   * just whether there is any. The runner asks the keys an event needs of all hooks in one
   * statement per transaction, skips a hook whose answer is false or null, and hands the answer
   * to the hook (`probed`). A hook without SQL for an event always runs (probed undefined).
   */
  probe?(workspaceId: string): Partial<Record<ProbeKey, RawBuilder<unknown>>>;
  /**
   * Returns false when it did not change the ticket's row (the runner then does not read it
   * again), the row as it left it when it has it at hand (the runner takes it as is), and
   * anything else when it changed the row (the runner reads it again).
   */
  run?(deps: Deps, u: Unit, change: TicketChange, probed: unknown): Promise<TicketRow | boolean | undefined>;
}

export type ProbeKey = TicketTrigger | 'prepare';

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

/** The runner deps.ticketHooks holds (its interface, TicketHookRunner, is in deps.ts). */
export class TicketHooks implements TicketHookRunner {
  private hooks: TicketHook[] = [];
  /** Units whose hooks are running: a change made by a hook is a nested call. */
  private readonly running = new WeakSet<Unit>();
  /** Per transaction: the keys asked, and the answers (hook name + key → answer). */
  private readonly probed = new WeakMap<Unit, { asked: Set<ProbeKey>; answers: Map<string, unknown> }>();

  /** Registers a hook (again under the same name: replaced). */
  add(hook: TicketHook): void {
    this.hooks = [...this.hooks.filter((h) => h.name !== hook.name), hook].sort((a, b) => a.order - b.order);
  }

  /**
   * The hooks' answers for `keys` in the unit's workspace: what the transaction has not asked
   * yet is asked in one statement (a new ticket asks for 'prepare' and 'ticket_created' at once).
   */
  async #probe(u: Unit, keys: ProbeKey[]): Promise<Map<string, unknown>> {
    let state = this.probed.get(u);
    if (!state) {
      state = { asked: new Set(), answers: new Map() };
      this.probed.set(u, state);
    }
    const fresh = keys.filter((k) => !state.asked.has(k));
    if (fresh.length === 0) return state.answers;
    for (const k of fresh) state.asked.add(k);
    const names: string[] = [];
    const tests: RawBuilder<unknown>[] = [];
    for (const h of this.hooks) {
      const sqlOf = h.probe?.(u.workspaceId);
      for (const key of fresh) {
        const test = sqlOf?.[key];
        if (test) {
          names.push(`${h.name}:${key}`);
          tests.push(test);
        }
      }
    }
    if (tests.length > 0) {
      const r = await sql<Record<string, unknown>>`SELECT ${sql.join(
        tests.map((t, i) => sql`(${t}) AS ${sql.ref(`p${i}`)}`),
      )}`.execute(u.trx);
      for (const [i, name] of names.entries()) state.answers.set(name, r.rows[0]?.[`p${i}`] ?? null);
    }
    return state.answers;
  }

  /** The hook's answer for the event: undefined when it has no SQL for it (it runs then). */
  async #answer(u: Unit, h: TicketHook, key: ProbeKey): Promise<unknown> {
    const answers = await this.#probe(u, [key]);
    const name = `${h.name}:${key}`;
    return answers.has(name) ? answers.get(name) : undefined;
  }

  /** The columns the hooks give a new ticket in its INSERT (each null when no hook sets it). */
  async prepareCreated(deps: Deps, u: Unit, draft: NewTicketDraft): Promise<NewTicketColumns> {
    const columns: NewTicketColumns = { sla: null, due_at: null, sla_breach_at: null };
    // The ticket_created answers come with the first statement: the same transaction asks them next.
    await this.#probe(u, ['prepare', 'ticket_created']);
    for (const h of this.hooks) {
      if (!h.prepareCreated) continue;
      const probed = await this.#answer(u, h, 'prepare');
      if (probed === false || probed === null) continue;
      Object.assign(columns, await h.prepareCreated(deps, u, draft, probed));
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
        const probed = await this.#answer(u, h, change.trigger);
        if (probed === false || probed === null) continue;
        const result = await h.run(deps, u, current, probed);
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
