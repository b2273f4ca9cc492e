// SLA policies: targets for the first response, the next responses (optional) and the resolution
// of tickets of one priority (or any), evaluated in position order: the first enabled policy that matches a ticket's
// priority sets its clocks (src/modules/sla/hook.ts). Settings: admins, or keys with
// settings:read / settings:write. Editing, disabling or deleting a policy changes the clocks of
// tickets created (or re-prioritised, or reopened) from then on; running clocks keep their dates.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { addCalendarMinutes, addOpenMinutes, type Calendar } from '../business-hours/calendar.js';
import { enabledCalendar } from '../business-hours/service.js';
import type { DueFn, PolicyTargets } from './engine.js';
import { type CreateSlaPolicyBody, MAX_SLA_POLICIES, type PatchSlaPolicyBody, type SlaPolicy } from './schemas.js';

export type SlaPolicyView = Static<typeof SlaPolicy>;

const NOT_FOUND = 'SLA policy not found.';

const COLUMNS = [
  'id',
  'name',
  'priority',
  'first_response_minutes',
  'next_response_minutes',
  'resolution_minutes',
  'business_hours',
  'enabled',
  'position',
  'created_at',
  'updated_at',
] as const;

type PolicyRow = Awaited<ReturnType<ReturnType<typeof policyQuery>['executeTakeFirstOrThrow']>>;

function policyQuery(db: Kysely<DB>, workspaceId: string) {
  return db.selectFrom('sla_policies').select(COLUMNS).where('workspace_id', '=', workspaceId);
}

const present = (r: PolicyRow): SlaPolicyView => ({
  id: r.id,
  name: r.name,
  priority: r.priority as SlaPolicyView['priority'],
  first_response_minutes: r.first_response_minutes,
  next_response_minutes: r.next_response_minutes,
  resolution_minutes: r.resolution_minutes,
  business_hours: r.business_hours,
  enabled: r.enabled,
  position: r.position,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

async function loadPolicy(db: Kysely<DB>, workspaceId: string, id: string): Promise<SlaPolicyView | null> {
  const row = await policyQuery(db, workspaceId).where('id', '=', id).executeTakeFirst();
  return row ? present(row) : null;
}

/** Every policy of the workspace in evaluation order (at most MAX_SLA_POLICIES: no pages). */
export async function listSlaPolicies(deps: Deps, ctx: RequestContext): Promise<{ data: SlaPolicyView[] }> {
  const rows = await policyQuery(deps.database.db, ctx.workspaceId)
    .orderBy('position')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { data: rows.map(present) };
}

export async function getSlaPolicy(deps: Deps, ctx: RequestContext, id: string): Promise<SlaPolicyView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const policy = await loadPolicy(deps.database.db, ctx.workspaceId, id.toLowerCase());
  if (!policy) throw notFound(NOT_FOUND);
  return policy;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

export async function createSlaPolicy(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateSlaPolicyBody>,
): Promise<SlaPolicyView> {
  const name = cleanName(input.name);
  const id = newId();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    // One creator at a time per workspace: the count and the end position hold.
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`sla_policies:${ctx.workspaceId}`}, 0))`.execute(u.trx);
    const { n, last } = await u.trx
      .selectFrom('sla_policies')
      .select([sql<number>`count(*)::int`.as('n'), sql<number>`coalesce(max(position), -1)::int`.as('last')])
      .where('workspace_id', '=', ctx.workspaceId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_SLA_POLICIES) {
      throw invalid('body', `a workspace has at most ${MAX_SLA_POLICIES} SLA policies; delete some first`);
    }
    await u.trx
      .insertInto('sla_policies')
      .values({
        workspace_id: ctx.workspaceId,
        id,
        name,
        priority: input.priority ?? null,
        first_response_minutes: input.first_response_minutes,
        next_response_minutes: input.next_response_minutes ?? null,
        resolution_minutes: input.resolution_minutes,
        business_hours: input.business_hours ?? false,
        enabled: input.enabled ?? true,
        position: input.position ?? Number(last) + 1,
      })
      .execute();
    const view = (await loadPolicy(u.trx, ctx.workspaceId, id))!;
    u.emit({ type: 'sla_policy.created', data: { sla_policy: view } });
    return view;
  });
}

export async function updateSlaPolicy(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchSlaPolicyBody>,
): Promise<SlaPolicyView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  const name = input.name === undefined ? undefined : cleanName(input.name);
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await policyQuery(u.trx, ctx.workspaceId).where('id', '=', rowId).forUpdate().executeTakeFirst();
    if (!before) throw notFound(NOT_FOUND);
    const set: Record<string, unknown> = {};
    if (name !== undefined && name !== before.name) set.name = name;
    if (input.priority !== undefined && input.priority !== before.priority) set.priority = input.priority;
    for (const k of [
      'first_response_minutes',
      'next_response_minutes',
      'resolution_minutes',
      'business_hours',
      'enabled',
      'position',
    ] as const) {
      if (input[k] !== undefined && input[k] !== before[k]) set[k] = input[k];
    }
    if (Object.keys(set).length === 0) return present(before);
    await u.trx
      .updateTable('sla_policies')
      .set({ ...set, updated_at: sql<Date>`now()` })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', rowId)
      .execute();
    const view = (await loadPolicy(u.trx, ctx.workspaceId, rowId))!;
    u.emit({ type: 'sla_policy.updated', data: { sla_policy: view } });
    return view;
  });
}

export async function deleteSlaPolicy(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('sla_policies')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', rowId)
      .returning('id')
      .executeTakeFirst();
    if (!gone) throw notFound(NOT_FOUND);
    u.emit({ type: 'sla_policy.deleted', data: { sla_policy_id: rowId } });
  });
}

// ---------------------------------------------------------------------------------------------
// What the clocks need.

/** The first enabled policy, by position, for this priority or any priority; null when none. */
export async function matchPolicy(
  db: Kysely<DB>,
  workspaceId: string,
  priority: string,
): Promise<PolicyTargets | null> {
  const row = await db
    .selectFrom('sla_policies')
    .select(['id', 'first_response_minutes', 'next_response_minutes', 'resolution_minutes', 'business_hours'])
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', true)
    .where((eb) => eb.or([eb('priority', '=', priority), eb('priority', 'is', null)]))
    .orderBy('position')
    .orderBy('created_at')
    .orderBy('id')
    .limit(pageLimit(1))
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Due dates under `policy`: calendar minutes, or open minutes of the workspace's business hours
 * for a policy with business_hours while they are enabled (read only then).
 */
export async function dueFunction(db: Kysely<DB>, workspaceId: string, policy: PolicyTargets | null): Promise<DueFn> {
  return dueIn(policy?.business_hours ? await enabledCalendar(db, workspaceId) : null);
}

/** Due dates in open minutes of `calendar` (for policies with business_hours), else calendar minutes. */
export function dueIn(calendar: Calendar | null): DueFn {
  return (from, minutes, businessHours) =>
    businessHours && calendar ? addOpenMinutes(calendar, from, minutes) : addCalendarMinutes(from, minutes);
}
