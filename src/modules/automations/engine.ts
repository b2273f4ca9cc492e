// The automation engine: a ticket hook (order 10, not nested) that runs the enabled automations
// of the event's trigger, in position order, inside the change's transaction. Each automation
// sees the ticket as it is at that moment (reloaded after an earlier one acted); when all its
// conditions hold, its actions apply through the tickets module's own functions (applyPatch,
// applyTags, insertMessage), so rules, activities and events are those of any other change,
// with the automation as actor.
//
// One pass per event: changes made by automations do not run automations again (TicketHooks
// runs only `nested` hooks for them), so automations cannot trigger each other in a loop.
//
// An action that cannot apply (a deleted team or label, a member who is no longer an agent, an
// archived field) is skipped: every such refusal is an ApiError thrown by the tickets module's
// checks before it writes anything, so the change that triggered the run never fails for it.

import type { Static } from '@sinclair/typebox';
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';
import type { Unit } from '../../platform/db/tx.js';
import { asAutomation, type ServiceContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { predicate } from '../custom-fields/filters.js';
import type { FieldEntity } from '../custom-fields/schemas.js';
import { type FieldDef, unitFieldDefs } from '../custom-fields/service.js';
import type { TicketChange, TicketHook } from '../tickets/hooks.js';
import { cleanBody, insertMessage } from '../tickets/outbound-message.js';
import { applyPatch } from '../tickets/patch.js';
import { presentTicket, reload, type TicketRow } from '../tickets/queries.js';
import type { PatchTicketBody } from '../tickets/schemas.js';
import type { Trigger } from './schemas.js';
import {
  customFieldOf,
  ENUM_VALUES,
  fieldOpOf,
  fieldValueOf,
  type StoredAction,
  type StoredCondition,
  tagNamesOf,
} from './validate.js';

type Patch = Static<typeof PatchTicketBody>;

/** What a message changes on its ticket (as a reply by an agent: the same ticket.updated). */
const STAT_CHANGES = ['message_count', 'last_message_at', 'last_message_preview'];
const TRIGGERS: ReadonlySet<string> = new Set<Trigger>([
  'ticket_created',
  'customer_replied',
  'agent_replied',
  'ticket_updated',
]);

interface AutomationRow {
  id: string;
  name: string;
  conditions: StoredCondition[];
  actions: StoredAction[];
}

export const automationsHook: TicketHook = {
  name: 'automations',
  order: 10,
  run: runAutomations,
  // The trigger's enabled automations in run order (null when there are none: the engine is
  // skipped), read with the other hooks' configuration in one statement (tickets/hooks.ts).
  probe: (workspaceId) =>
    Object.fromEntries(
      [...TRIGGERS].map((t) => [
        t,
        sql<AutomationRow[] | null>`(SELECT json_agg(json_build_object('id', a.id, 'name', a.name,
                  'conditions', a.conditions, 'actions', a.actions) ORDER BY a.position, a.id)
             FROM automations a WHERE a.workspace_id = ${workspaceId} AND a.trigger = ${t} AND a.enabled)`,
      ]),
    ),
};

/** The trigger's enabled automations in run order (one indexed query: automations_run). */
async function enabledAutomations(u: Unit, trigger: Trigger): Promise<AutomationRow[]> {
  return (await u.trx
    .selectFrom('automations')
    .select(['id', 'name', 'conditions', 'actions'])
    .where('workspace_id', '=', u.workspaceId)
    .where('trigger', '=', trigger)
    .where('enabled', '=', true)
    .orderBy('position')
    .orderBy('id')
    .execute()) as unknown as AutomationRow[];
}

/** Registered in runtime.ts: `ticketHooks.add(automationsHook)`. */
export async function runAutomations(
  deps: Deps,
  u: Unit,
  change: TicketChange,
  probed?: unknown,
): Promise<TicketRow | false> {
  if (!TRIGGERS.has(change.trigger)) return false; // note_added: not an automation trigger
  const list = (
    Array.isArray(probed) ? probed : await enabledAutomations(u, change.trigger as Trigger)
  ) as AutomationRow[];
  if (list.length === 0) return false;
  const run = new Run(deps, u, change);
  const ran: string[] = [];
  // Ticket changes of consecutive automations wait in `pending` and apply together (one update,
  // one ticket.updated, each activity with its own automation as actor), as long as no later
  // automation reads what they change and no two change the same thing: the same outcome as
  // applying them one by one, for a fraction of the statements.
  const pending: Plan[] = [];
  const pendingWrites = () => new Set(pending.flatMap((p) => [...p.writes]));
  for (const a of list) {
    if (overlaps(readsOf(a), pendingWrites())) await run.flush(pending);
    const ticket = await run.current();
    if (ticket.deleted_at !== null || ticket.merged_into_id !== null) break;
    if (!(await run.holds(a))) continue;
    ran.push(a.id);
    const plan = await run.plan(a);
    const alone = plan.messages.length > 0 || plan.triage;
    if (alone || overlaps(plan.writes, pendingWrites())) await run.flush(pending);
    if (alone) await run.applyOne(plan);
    else if (plan.parts.length > 0) pending.push(plan);
  }
  await run.flush(pending);
  countRuns(deps, u, ran);
  // The ticket as the run left it (read again only if an action left it unknown).
  return ran.length > 0 ? run.current() : false;
}

/** What an automation's actions do, before anything is written. */
interface Plan {
  automation: AutomationRow;
  /** The automation as the actor of what it does. */
  ctx: ServiceContext;
  /** Replies and notes, in order (they go in first). */
  messages: Array<{ kind: 'reply' | 'note'; html: string }>;
  /** The ticket changes, one per action (tags merged into one add and one remove). */
  parts: Patch[];
  /** The changes (ticket.updated `changes` keys) the parts make. */
  writes: Set<string>;
  triage: boolean;
}

const ALL = '*';
/** What an automation's conditions read that automations' ticket changes can write. */
function readsOf(a: AutomationRow): Set<string> {
  const out = new Set<string>();
  for (const c of a.conditions) {
    if (c.field === 'priority' || c.field === 'severity' || c.field === 'status') out.add(c.field);
    else if (c.field === 'tag') out.add('tags');
    else if (c.field.startsWith('field.')) out.add('fields');
    else if (c.field === 'ai_decide') out.add(ALL); // the decision engine sees the whole ticket
  }
  return out;
}

function overlaps(a: Set<string>, b: Set<string>): boolean {
  if (b.size === 0) return false;
  if (a.has(ALL) || b.has(ALL)) return a.size > 0;
  for (const x of a) if (b.has(x)) return true;
  return false;
}

const WRITES: Record<string, string> = {
  set_status: 'status',
  set_priority: 'priority',
  set_severity: 'severity',
  assign_user: 'assignee_id',
  assign_team: 'team_id',
  mark_spam: 'spam',
  add_tag: 'tags',
  remove_tag: 'tags',
  set_field: 'fields',
};

// ---------------------------------------------------------------------------------------------
// run_count: counted once the change has committed (./run-counts.ts).

const pendingRuns = new WeakMap<Unit, string[]>();

function countRuns(deps: Deps, u: Unit, ids: string[]): void {
  if (ids.length === 0) return;
  let ran = pendingRuns.get(u);
  if (!ran) {
    const list: string[] = [];
    ran = list;
    pendingRuns.set(u, list);
    u.afterCommit(() => deps.runCounts.add(u.workspaceId, list));
  }
  ran.push(...ids);
}

// ---------------------------------------------------------------------------------------------
// One event's pass.

class Run {
  private ticket: TicketRow;
  private dirty = false;
  private latestBody: Promise<string> | null = null;
  private tags: Set<string> | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly u: Unit,
    private readonly change: TicketChange,
  ) {
    this.ticket = change.ticket;
  }

  /** The ticket now: reloaded when an earlier automation acted on it. */
  async current(): Promise<TicketRow> {
    if (this.dirty) {
      this.ticket = await reload(this.u, this.ticket.id);
      this.dirty = false;
      this.latestBody = null;
      this.tags = null;
    }
    return this.ticket;
  }

  private fieldDefs(entity: FieldEntity): Promise<Map<string, FieldDef>> {
    return unitFieldDefs(this.u, entity);
  }

  // --- Conditions ------------------------------------------------------------------------------

  /** All conditions: the ticket's own values first, then custom fields (one query), ai_decide last. */
  async holds(a: AutomationRow): Promise<boolean> {
    const fields: StoredCondition[] = [];
    const ai: StoredCondition[] = [];
    for (const c of a.conditions) {
      if (c.field === 'ai_decide') ai.push(c);
      else if (customFieldOf(c.field)) fields.push(c);
      else if (!(await this.simpleHolds(c))) return false;
    }
    if (fields.length > 0 && !(await this.fieldsHold(fields))) return false;
    if (ai.length > 0 && !(await this.decides(a, ai))) return false;
    return true;
  }

  /**
   * The text of `body`: the event's message; on ticket_updated (no message) the ticket's
   * latest reply, customer's or agent's (notes are internal); '' when there is none.
   */
  private body(): Promise<string> | string {
    if (this.change.message) return this.change.message.body_text;
    if (this.change.trigger !== 'ticket_updated') return '';
    this.latestBody ??= this.u.trx
      .selectFrom('messages')
      .select('body_text')
      .where('workspace_id', '=', this.u.workspaceId)
      .where('ticket_id', '=', this.ticket.id)
      .where('kind', '=', 'reply')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(pageLimit(1))
      .executeTakeFirst()
      .then((r) => r?.body_text ?? '');
    return this.latestBody;
  }

  /** The customer side's address: the sender of an inbound message, else the ticket's contact. */
  private fromEmail(): string {
    const m = this.change.message;
    return (m?.from_email || this.ticket.contact_email || '').trim();
  }

  private async simpleHolds(c: StoredCondition): Promise<boolean> {
    const t = this.ticket;
    const value = typeof c.value === 'string' ? c.value : '';
    switch (c.field) {
      case 'subject':
        return textHolds(t.subject, c.op, value);
      case 'body':
        return textHolds(await this.body(), c.op, value);
      case 'from_email':
        return textHolds(this.fromEmail(), c.op, value);
      case 'channel':
        return enumHolds(t.channel, c.op, value);
      case 'priority':
        return enumHolds(t.priority, c.op, value);
      case 'status':
        return enumHolds(t.status, c.op, value);
      case 'severity':
        return enumHolds(t.severity ?? 'none', c.op, value);
      case 'mailbox_id':
        return enumHolds(t.mailbox_id ?? '', c.op, value.toLowerCase());
      case 'sentiment': {
        const s = (t.custom as Record<string, unknown> | null)?.ai_sentiment;
        const known = typeof s === 'string' && ENUM_VALUES.sentiment!.includes(s.toLowerCase());
        return enumHolds(known ? (s as string).toLowerCase() : 'none', c.op, value);
      }
      case 'tag': {
        this.tags ??= new Set(presentTicket(t).tags.map((g) => g.name.toLowerCase()));
        const held = this.tags;
        const names = tagNamesOf(c.value).map((n) => n.toLowerCase());
        const any = names.some((n) => held.has(n));
        return c.op === 'equals' || c.op === 'contains' ? any : !any;
      }
      default:
        return false; // a field this version does not know: never holds
    }
  }

  /**
   * field.<key> and contact.field.<key>: the predicates of list filters (custom-fields/filters.ts),
   * evaluated on the ticket's row and its contact in one query. A field deleted since (or an
   * option removed) makes its condition fail.
   */
  private async fieldsHold(conds: StoredCondition[]): Promise<boolean> {
    const preds: RawBuilder<SqlBool>[] = [];
    for (const c of conds) {
      const f = customFieldOf(c.field)!;
      const def = (await this.fieldDefs(f.entity)).get(f.key);
      if (!def) return false;
      const col = f.entity === 'ticket' ? sql`t.fields` : sql`coalesce(c.fields, '{}'::jsonb)`;
      try {
        preds.push(predicate(col, def, { key: f.key, op: fieldOpOf(c.op), value: c.value, location: c.field }, null));
      } catch (err) {
        if (err instanceof ApiError) return false;
        throw err;
      }
    }
    const row = await sql<{ ok: boolean | null }>`
      SELECT (${sql.join(preds, sql` AND `)}) AS ok
        FROM tickets t
        LEFT JOIN contacts c ON c.workspace_id = t.workspace_id AND c.id = t.contact_id
       WHERE t.workspace_id = ${this.u.workspaceId} AND t.id = ${this.ticket.id}`.execute(this.u.trx);
    return row.rows[0]?.ok === true;
  }

  /** ai_decide: every question of the run in one call; no engine, no answer: does not hold. */
  private async decides(a: AutomationRow, conds: StoredCondition[]): Promise<boolean> {
    const engine = this.deps.ai.decide;
    if (!engine) return false;
    let answers: Array<number | null> | null;
    try {
      answers = await engine(this.deps, this.u, {
        automation: { id: a.id, name: a.name },
        ticket: this.ticket,
        message: this.change.message,
        questions: conds.map((c) => c.question ?? ''),
      });
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, automation_id: a.id }, 'decision engine failed');
      return false;
    }
    if (!answers) return false;
    return conds.every((c, i) => {
      const p = answers[i];
      if (typeof p !== 'number' || !Number.isFinite(p)) return false;
      return c.op === 'gt' ? p > Number(c.value) : p < Number(c.value);
    });
  }

  // --- Actions ---------------------------------------------------------------------------------

  /** An automation's actions as a plan (set_field values checked now; archived fields skipped). */
  async plan(a: AutomationRow): Promise<Plan> {
    const plan: Plan = {
      automation: a,
      ctx: asAutomation(a),
      messages: [],
      parts: [],
      writes: new Set(),
      triage: false,
    };
    const add: string[] = [];
    const remove: string[] = [];
    for (const act of a.actions) {
      switch (act.type) {
        case 'set_status':
          plan.parts.push({ status: act.value as Patch['status'] });
          break;
        case 'set_priority':
          plan.parts.push({ priority: act.value as Patch['priority'] });
          break;
        case 'set_severity':
          plan.parts.push({ severity: act.value === '' ? null : (act.value as Patch['severity']) });
          break;
        case 'assign_user':
          plan.parts.push({ assignee_id: act.value });
          break;
        case 'assign_team':
          plan.parts.push({ team_id: act.value });
          break;
        case 'mark_spam':
          plan.parts.push({ spam: true });
          break;
        case 'add_tag':
        case 'remove_tag': {
          // The last action naming a label wins.
          const [to, from] = act.type === 'add_tag' ? [add, remove] : [remove, add];
          const i = from.findIndex((n) => n.toLowerCase() === act.value.toLowerCase());
          if (i >= 0) from.splice(i, 1);
          if (!to.some((n) => n.toLowerCase() === act.value.toLowerCase())) to.push(act.value);
          break;
        }
        case 'set_field': {
          const def = act.field ? (await this.fieldDefs('ticket')).get(act.field) : undefined;
          if (!def || def.archived) break; // rule 4: skipped when archived or deleted
          try {
            plan.parts.push({ fields: { [def.key]: fieldValueOf(def, act.value, 'value') } });
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            continue;
          }
          break;
        }
        case 'send_reply':
        case 'add_note':
          plan.messages.push({ kind: act.type === 'send_reply' ? 'reply' : 'note', html: act.value });
          break;
        case 'ai_triage':
          plan.triage = true;
          break;
      }
      if (WRITES[act.type]) plan.writes.add(WRITES[act.type]!);
    }
    if (add.length > 0) plan.parts.push({ add_tags: add });
    if (remove.length > 0) plan.parts.push({ remove_tags: remove });
    return plan;
  }

  /**
   * Applies the waiting plans (all their ticket changes at once, see runAutomations); when the
   * combined change is refused, each plan is applied on its own.
   */
  async flush(pending: Plan[]): Promise<void> {
    const plans = pending.splice(0);
    if (plans.length === 0) return;
    if (plans.length === 1) return this.applyOne(plans[0]!);
    const combined = combine(plans.flatMap((p) => p.parts));
    const actorOf = (change: string) => (plans.find((p) => p.writes.has(change)) ?? plans[0]!).ctx.actor;
    try {
      const { row } = await applyPatch(this.deps, this.u, plans[0]!.ctx, await this.current(), combined, {
        at: 'automation',
        actorOf,
      });
      this.ticket = row;
      this.dirty = false;
      this.latestBody = null;
      this.tags = null;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      this.dirty = true;
      for (const p of plans) await this.applyOne(p);
    }
  }

  /**
   * One automation's plan: notes and replies first (as an agent's reply with a status), then
   * every ticket change as one patch: one ticket.updated. When the patch is refused, each change
   * is tried on its own and the ones that cannot apply are skipped.
   */
  async applyOne(plan: Plan): Promise<void> {
    const { ctx, parts } = plan;
    let wrote = false;
    const ticket = await this.current();
    for (const m of plan.messages) {
      // No mail to spam: replies are not sent on tickets marked spam.
      if (m.kind === 'reply' && ticket.spam) continue;
      let body: ReturnType<typeof cleanBody>;
      try {
        body = cleanBody(m.html, false);
      } catch (err) {
        if (err instanceof ApiError) continue;
        throw err;
      }
      const row = wrote ? await reload(this.u, ticket.id) : ticket;
      const { event } = await insertMessage(this.deps, this.u, ctx.actor, row, { kind: m.kind, body });
      this.u.emit(event);
      wrote = true;
      this.dirty = true;
    }
    const combined = combine(parts);

    let extra = wrote ? [...STAT_CHANGES] : [];
    if (parts.length > 0 || extra.length > 0) {
      try {
        const before = wrote ? await reload(this.u, ticket.id) : ticket;
        // applyPatch answers the ticket as it is after the change (and the hooks it ran): the next
        // automation starts from it without reading it again.
        const { row } = await applyPatch(this.deps, this.u, ctx, before, combined, {
          at: 'automation',
          extraChanges: extra,
        });
        this.ticket = row;
        this.dirty = false;
        this.latestBody = null;
        this.tags = null;
        extra = [];
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        this.dirty = true;
        const single = parts.flatMap((p) =>
          p.add_tags
            ? p.add_tags.map((n) => ({ add_tags: [n] }))
            : p.fields
              ? Object.entries(p.fields).map(([k, v]) => ({ fields: { [k]: v } }))
              : [p],
        );
        for (const p of single) {
          try {
            await applyPatch(this.deps, this.u, ctx, await reload(this.u, ticket.id), p, {
              at: 'automation',
              extraChanges: extra,
            });
            extra = [];
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            this.deps.log.debug({ automation_id: plan.automation.id, detail: e.detail }, 'automation action skipped');
          }
        }
        if (extra.length > 0)
          await applyPatch(
            this.deps,
            this.u,
            ctx,
            await reload(this.u, ticket.id),
            {},
            {
              at: 'automation',
              extraChanges: extra,
            },
          );
      }
    }
    const handler = plan.triage ? this.deps.ai.triage : null;
    if (handler) {
      this.dirty = true;
      await handler(this.deps, this.u, {
        automation: { id: plan.automation.id, name: plan.automation.name },
        ticket: await reload(this.u, ticket.id),
        message: this.change.message,
      });
    }
  }
}

/** Patches as one (field values merged; the plans' writes never overlap). */
function combine(parts: Patch[]): Patch {
  const combined: Patch = {};
  for (const p of parts) {
    if (p.fields && combined.fields) combined.fields = { ...combined.fields, ...p.fields };
    else Object.assign(combined, p);
  }
  return combined;
}

/** contains / not_contains: a part, ignoring case; equals / not_equals: the whole text, ignoring case. */
function textHolds(actual: string, op: string, expected: string): boolean {
  const a = actual.toLowerCase();
  const e = expected.toLowerCase();
  switch (op) {
    case 'contains':
      return a.includes(e);
    case 'not_contains':
      return !a.includes(e);
    case 'equals':
      return a.trim() === e.trim();
    case 'not_equals':
      return a.trim() !== e.trim();
    default:
      return false;
  }
}

function enumHolds(actual: string, op: string, expected: string): boolean {
  if (op === 'equals') return actual === expected;
  if (op === 'not_equals') return actual !== expected;
  return false;
}
