// Automations: workspace settings (admins, keys with settings:read / settings:write) that act on
// tickets when they are created, replied to or changed (engine.ts runs them). Conditions and
// actions are checked when saved (validate.ts) and stored normalised; labels are stored by
// name, so a label's rename or merge rewrites the automations that name it (the tags module
// calls renameTagInAutomations through deps.tagRenameHooks, registered in runtime.ts).
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import type { RunCounts } from './run-counts.js';
import {
  type Automation,
  type CreateAutomationBody,
  type ListAutomationsQuery,
  MAX_AUTOMATIONS,
  type PatchAutomationBody,
} from './schemas.js';
import { cleanActions, cleanConditions, type StoredAction, type StoredCondition, tagNamesOf } from './validate.js';

export type AutomationView = Static<typeof Automation>;

const NOT_FOUND = 'Automation not found.';

function automationQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('automations as a')
    .leftJoin('automation_run_counts as rc', (j) =>
      j.onRef('rc.workspace_id', '=', 'a.workspace_id').onRef('rc.automation_id', '=', 'a.id'),
    )
    .select([
      'a.id',
      'a.name',
      'a.trigger',
      'a.conditions',
      'a.actions',
      'a.enabled',
      'a.position',
      sql<string | number>`coalesce(rc.run_count, 0)`.as('run_count'),
      'a.created_at',
      'a.updated_at',
    ])
    .where('a.workspace_id', '=', workspaceId);
}

type AutomationRow = Awaited<ReturnType<ReturnType<typeof automationQuery>['executeTakeFirstOrThrow']>>;

/** `unwritten`: runs this process counted and has not written yet (./run-counts.ts). */
const present = (r: AutomationRow, unwritten = 0): AutomationView => ({
  id: r.id,
  name: r.name,
  trigger: r.trigger,
  conditions: (r.conditions ?? []) as AutomationView['conditions'],
  actions: (r.actions ?? []) as AutomationView['actions'],
  enabled: r.enabled,
  position: r.position,
  run_count: Number(r.run_count) + unwritten,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

async function loadAutomation(
  db: Kysely<DB>,
  workspaceId: string,
  id: string,
  counts?: RunCounts,
): Promise<AutomationView | null> {
  const row = await automationQuery(db, workspaceId).where('a.id', '=', id).executeTakeFirst();
  return row ? present(row, counts?.unwritten(workspaceId, id)) : null;
}

/** In run order: position, then id. */
export async function listAutomations(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListAutomationsQuery>,
): Promise<Page<AutomationView>> {
  const limit = q.limit ?? 50;
  const list = `automations:${JSON.stringify([ctx.workspaceId, q.trigger ?? null])}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = automationQuery(deps.database.db, ctx.workspaceId);
  if (q.trigger !== undefined) query = query.where('a.trigger', '=', q.trigger);
  if (after) {
    const [position, id] = after;
    if (typeof position !== 'number' || typeof id !== 'string' || !isUuid(id)) {
      throw invalid('query.cursor', 'is not a cursor of this list; start again without one');
    }
    query = query.where(sql<boolean>`(a.position, a.id) > (${position}::int4, ${id.toLowerCase()}::uuid)`);
  }
  const rows = await query
    .orderBy('a.position', 'asc')
    .orderBy('a.id', 'asc')
    .limit(pageLimit(limit + 1))
    .execute();
  const counts = deps.runCounts;
  return deps.pager.page(
    list,
    rows,
    limit,
    (r) => [r.position, r.id],
    (r) => present(r, counts.unwritten(ctx.workspaceId, r.id)),
  );
}

export async function getAutomation(deps: Deps, ctx: RequestContext, id: string): Promise<AutomationView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const found = await loadAutomation(deps.database.db, ctx.workspaceId, id.toLowerCase(), deps.runCounts);
  if (!found) throw notFound(NOT_FOUND);
  return found;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

/** One writer of the workspace's automations at a time: the count and the end position hold. */
async function lockAutomations(u: Unit): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`automations:${u.workspaceId}`}, 0))`.execute(u.trx);
}

export async function createAutomation(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateAutomationBody>,
): Promise<AutomationView> {
  const name = cleanName(input.name);
  const id = newId();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const conditions = await cleanConditions(u, input.conditions ?? []);
    const actions = await cleanActions(u, input.actions);
    await lockAutomations(u);
    const { n, last } = await u.trx
      .selectFrom('automations')
      .select([sql<number>`count(*)::int`.as('n'), sql<number>`coalesce(max(position), -1)::int`.as('last')])
      .where('workspace_id', '=', ctx.workspaceId)
      .executeTakeFirstOrThrow();
    if (n >= MAX_AUTOMATIONS) throw invalid('body', `a workspace has at most ${MAX_AUTOMATIONS} automations`);
    await u.trx
      .insertInto('automations')
      .values({
        workspace_id: ctx.workspaceId,
        id,
        name,
        trigger: input.trigger,
        conditions: JSON.stringify(conditions),
        actions: JSON.stringify(actions),
        enabled: input.enabled ?? true,
        position: input.position ?? last + 1,
      })
      .execute();
    await u.trx
      .insertInto('automation_run_counts')
      .values({ workspace_id: ctx.workspaceId, automation_id: id })
      .execute();
    const view = (await loadAutomation(u.trx, ctx.workspaceId, id))!;
    u.emit({ type: 'automation.created', data: { automation: view } });
    await recordAudit(u.trx, ctx, {
      action: 'automation.created',
      entityType: 'automation',
      entityId: id,
      data: { name, trigger: view.trigger, enabled: view.enabled },
    });
    return view;
  });
}

export async function updateAutomation(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof PatchAutomationBody>,
): Promise<AutomationView> {
  if (!isUuid(param)) throw notFound(NOT_FOUND);
  const id = param.toLowerCase();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await automationQuery(u.trx, ctx.workspaceId)
      .where('a.id', '=', id)
      .forUpdate('a')
      .executeTakeFirst();
    if (!before) throw notFound(NOT_FOUND);
    const set: Record<string, unknown> = {};
    const changed: string[] = [];
    const change = (key: string, to: unknown, stored: unknown = to) => {
      set[key] = stored;
      changed.push(key);
    };
    if (input.name !== undefined) {
      const name = cleanName(input.name);
      if (name !== before.name) change('name', name);
    }
    if (input.trigger !== undefined && input.trigger !== before.trigger) change('trigger', input.trigger);
    if (input.conditions !== undefined) {
      const conditions = await cleanConditions(u, input.conditions);
      if (JSON.stringify(conditions) !== JSON.stringify(before.conditions ?? [])) {
        change('conditions', conditions, JSON.stringify(conditions));
      }
    }
    if (input.actions !== undefined) {
      const actions = await cleanActions(u, input.actions);
      if (JSON.stringify(actions) !== JSON.stringify(before.actions ?? [])) {
        change('actions', actions, JSON.stringify(actions));
      }
    }
    if (input.enabled !== undefined && input.enabled !== before.enabled) change('enabled', input.enabled);
    if (input.position !== undefined && input.position !== before.position) change('position', input.position);
    if (changed.length === 0) return present(before, deps.runCounts.unwritten(ctx.workspaceId, id));
    await u.trx
      .updateTable('automations')
      .set({ ...set, updated_at: sql<Date>`now()` })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .execute();
    const view = (await loadAutomation(u.trx, ctx.workspaceId, id, deps.runCounts))!;
    u.emit({ type: 'automation.updated', data: { automation: view } });
    await recordAudit(u.trx, ctx, {
      action: 'automation.updated',
      entityType: 'automation',
      entityId: id,
      data: { name: view.name, changed },
    });
    return view;
  });
}

export async function deleteAutomation(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  if (!isUuid(param)) throw notFound(NOT_FOUND);
  const id = param.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('automations')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .returning(['id', 'name', 'trigger'])
      .executeTakeFirst();
    if (!gone) throw notFound(NOT_FOUND);
    u.emit({ type: 'automation.deleted', data: { automation_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'automation.deleted',
      entityType: 'automation',
      entityId: id,
      data: { name: gone.name, trigger: gone.trigger },
    });
  });
}

/**
 * Inside a label's rename or merge (a TagRenameHook, registered in runtime.ts): every automation whose tag conditions or
 * add_tag / remove_tag actions name `from` (ignoring case) names `to` instead, with an
 * automation.updated event per changed automation (its run_count includes the runs this process
 * has counted and not yet written, as every other read of an automation does).
 */
export async function renameTagInAutomations(deps: Deps, u: Unit, from: string, to: string): Promise<void> {
  const counts = deps.runCounts;
  const rows = await u.trx
    .selectFrom('automations')
    .select(['id', 'conditions', 'actions'])
    .where('workspace_id', '=', u.workspaceId)
    .where((eb) =>
      eb.or([
        sql<boolean>`conditions @> '[{"field": "tag"}]'::jsonb`,
        sql<boolean>`actions @> '[{"type": "add_tag"}]'::jsonb`,
        sql<boolean>`actions @> '[{"type": "remove_tag"}]'::jsonb`,
      ]),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
  const same = (a: string) => a.toLowerCase() === from.toLowerCase();
  for (const r of rows) {
    let touched = false;
    const conditions = ((r.conditions ?? []) as unknown as StoredCondition[]).map((c) => {
      if (c.field !== 'tag') return c;
      const names = tagNamesOf(c.value);
      if (!names.some(same)) return c;
      touched = true;
      const next: string[] = [];
      for (const n of names.map((n) => (same(n) ? to : n))) if (!next.includes(n)) next.push(n);
      return { ...c, value: next.join(', ') };
    });
    const actions = ((r.actions ?? []) as unknown as StoredAction[]).map((a) => {
      if ((a.type !== 'add_tag' && a.type !== 'remove_tag') || !same(a.value)) return a;
      touched = true;
      return { ...a, value: to };
    });
    if (!touched) continue;
    await u.trx
      .updateTable('automations')
      .set({ conditions: JSON.stringify(conditions), actions: JSON.stringify(actions), updated_at: sql<Date>`now()` })
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', r.id)
      .execute();
    u.emit({
      type: 'automation.updated',
      data: { automation: (await loadAutomation(u.trx, u.workspaceId, r.id, counts))! },
    });
  }
}
