// The changes update_ticket and bulk_update_tickets propose: checked before anything is shown
// (an unknown assignee or label is a ToolError the model reads), then described per ticket as the
// preview names them (`{field: 'status', from: 'open', to: 'solved'}`, fields as the API names
// them), and finally the PATCH the tickets module applies when the person approves.
import { type Static, Type } from '@sinclair/typebox';
import { roleAtLeast } from '../../../platform/http/context.js';
import { getMemberView } from '../../members/service.js';
import { listTagGroups } from '../../tag-groups/service.js';
import { listTags } from '../../tags/service.js';
import type { PatchInput } from '../../tickets/patch.js';
import type { TicketView } from '../../tickets/queries.js';
import { PRIORITIES, SEVERITIES } from '../../tickets/schemas.js';
import { checkRequiredFields, isDone } from '../../tickets/status.js';
import { StatusArg } from './common.js';
import { UUID_PATTERN } from './ticket-filters.js';
import { type PreviewT, type ToolEnv, ToolError } from './types.js';

type Change = PreviewT['changes'][number];

const LabelList = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 50 }), {
    minItems: 1,
    maxItems: 20,
    uniqueItems: true,
    description,
  });

/** The changes the model may ask for (each optional; at least one). */
export const changeProperties = {
  status: Type.Optional(StatusArg),
  priority: Type.Optional(
    Type.Union(
      PRIORITIES.map((p) => Type.Literal(p)),
      { description: 'low, normal, high or urgent' },
    ),
  ),
  severity: Type.Optional(
    Type.Union([...SEVERITIES.map((s) => Type.Literal(s)), Type.Null()], {
      description: 'sev1 to sev4, or null to clear',
    }),
  ),
  assignee_id: Type.Optional(
    Type.Union(
      [
        Type.String({
          pattern: `^(me|${UUID_PATTERN.slice(1, -1)})$`,
          description: 'A member’s user id (an agent or above), or me',
        }),
        Type.Null(),
      ],
      { description: 'Who the ticket is assigned to: a member’s user id, me, or null to unassign.' },
    ),
  ),
  add_labels: Type.Optional(LabelList('Names of existing labels to add.')),
  remove_labels: Type.Optional(LabelList('Names of labels to take off.')),
};
const ChangeArgs = Type.Object(changeProperties);
export type ChangeArgsT = Static<typeof ChangeArgs>;

interface Label {
  id: string;
  name: string;
  group_id: string | null;
}

/** The checked changes: what every ticket's patch holds, and what a preview needs to name them. */
export interface CheckedChanges {
  status?: string;
  priority?: string;
  severity?: string | null;
  assignee?: { id: string; name: string } | null;
  add: Label[];
  remove: Label[];
  /** Groups of which a ticket holds one label at most (adding one takes the other off). */
  exclusiveGroups: Set<string>;
}

/** Checks the values: the assignee a member who works tickets, each label one of the workspace's. */
export async function checkChanges(env: ToolEnv, args: ChangeArgsT): Promise<CheckedChanges> {
  const { deps, ctx } = env;
  const out: CheckedChanges = { add: [], remove: [], exclusiveGroups: new Set() };
  if (args.status !== undefined) out.status = args.status;
  if (args.priority !== undefined) out.priority = args.priority;
  if (args.severity !== undefined) out.severity = args.severity;
  if (args.assignee_id !== undefined) {
    if (args.assignee_id === null) out.assignee = null;
    else {
      const id = args.assignee_id === 'me' && ctx.actor.kind === 'member' ? ctx.actor.userId : args.assignee_id;
      const member = await getMemberView(deps.database.db, ctx.workspaceId, id.toLowerCase());
      if (!member) throw new ToolError(`No member of this workspace has the id ${id}.`);
      if (!roleAtLeast(member.role, 'agent')) {
        throw new ToolError(`${member.user.name} is a viewer; viewers cannot be assigned tickets.`);
      }
      out.assignee = { id: member.user.id, name: member.user.name };
    }
  }
  const resolve = async (name: string, adding: boolean): Promise<Label> => {
    const wanted = name.normalize('NFC').trim().toLowerCase();
    const { data } = await listTags(deps, ctx, { q: name.normalize('NFC').trim() });
    const tag = data.find((t) => t.name.toLowerCase() === wanted);
    if (!tag) throw new ToolError(`No label named “${name}” in this workspace (the assistant does not create labels).`);
    if (adding && tag.archived) throw new ToolError(`The label “${tag.name}” is archived and cannot be applied.`);
    if (adding && !tag.applies_to.includes('tickets')) {
      throw new ToolError(`The label “${tag.name}” does not apply to tickets.`);
    }
    return { id: tag.id, name: tag.name, group_id: tag.group_id };
  };
  for (const n of args.add_labels ?? []) out.add.push(await resolve(n, true));
  for (const n of args.remove_labels ?? []) out.remove.push(await resolve(n, false));
  const clash = out.add.find((a) => out.remove.some((r) => r.id === a.id));
  if (clash) throw new ToolError(`The label “${clash.name}” is both added and removed.`);
  if (out.add.some((l) => l.group_id !== null)) {
    for (const g of (await listTagGroups(deps, ctx)).data) if (g.exclusive) out.exclusiveGroups.add(g.id);
  }
  return out;
}

/** Whether the model named any change at all. */
export const namesAChange = (c: CheckedChanges): boolean =>
  c.status !== undefined ||
  c.priority !== undefined ||
  c.severity !== undefined ||
  c.assignee !== undefined ||
  c.add.length > 0 ||
  c.remove.length > 0;

/** The labels a ticket will carry: the removed ones gone, an exclusive group's other label replaced. */
function labelsAfter(t: TicketView, c: CheckedChanges): string[] {
  let next = t.tags.filter((x) => !c.remove.some((r) => r.id === x.id));
  for (const l of c.add) {
    if (l.group_id !== null && c.exclusiveGroups.has(l.group_id)) {
      next = next.filter((x) => x.group_id !== l.group_id || x.id === l.id);
    }
    if (!next.some((x) => x.id === l.id)) next.push({ id: l.id, name: l.name, color: 'gray', group_id: l.group_id });
  }
  return next.map((x) => x.name).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
}

const sortedNames = (t: TicketView) =>
  t.tags.map((x) => x.name).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));

/** What the changes do to one ticket (nothing listed: they change nothing on it). */
export function changesFor(t: TicketView, c: CheckedChanges): Change[] {
  const out: Change[] = [];
  if (c.status !== undefined && c.status !== t.status) out.push({ field: 'status', from: t.status, to: c.status });
  if (c.priority !== undefined && c.priority !== t.priority) {
    out.push({ field: 'priority', from: t.priority, to: c.priority });
  }
  if (c.severity !== undefined && c.severity !== t.severity) {
    out.push({ field: 'severity', from: t.severity, to: c.severity });
  }
  if (c.assignee !== undefined && (c.assignee?.id ?? null) !== (t.assignee?.id ?? null)) {
    out.push({ field: 'assignee_id', from: t.assignee?.id ?? null, to: c.assignee?.id ?? null });
  }
  if (c.add.length + c.remove.length > 0) {
    const before = sortedNames(t);
    const after = labelsAfter(t, c);
    if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ field: 'tags', from: before, to: after });
  }
  return out;
}

/** Refuses a solve or close the API would refuse (a required field empty), before the person is asked. */
export async function checkStatusRules(
  env: ToolEnv,
  t: TicketView,
  c: CheckedChanges,
  fields: Record<string, unknown> = t.fields,
): Promise<void> {
  if (c.status === undefined || !isDone(c.status) || c.status === t.status) return;
  try {
    await checkRequiredFields(env.deps.database.db, env.ctx.workspaceId, c.status, fields);
  } catch (err) {
    throw new ToolError(`#${t.number} cannot be ${c.status} yet: ${(err as Error).message}`);
  }
}

/** The PATCH the tickets module applies on approval (labels by their names as the workspace spells them). */
export function patchOf(c: CheckedChanges): PatchInput {
  return {
    ...(c.status !== undefined ? { status: c.status as PatchInput['status'] } : {}),
    ...(c.priority !== undefined ? { priority: c.priority as PatchInput['priority'] } : {}),
    ...(c.severity !== undefined ? { severity: c.severity as PatchInput['severity'] } : {}),
    ...(c.assignee !== undefined ? { assignee_id: c.assignee?.id ?? null } : {}),
    ...(c.add.length > 0 ? { add_tags: c.add.map((l) => l.name) } : {}),
    ...(c.remove.length > 0 ? { remove_tags: c.remove.map((l) => l.name) } : {}),
  };
}

/** "status to solved, assignee to Dana" for a preview's summary. */
export function describeChanges(c: CheckedChanges): string {
  const parts: string[] = [];
  if (c.status !== undefined) parts.push(`status to ${c.status}`);
  if (c.priority !== undefined) parts.push(`priority to ${c.priority}`);
  if (c.severity !== undefined) parts.push(c.severity === null ? 'clear the severity' : `severity to ${c.severity}`);
  if (c.assignee !== undefined) parts.push(c.assignee === null ? 'unassign' : `assign to ${c.assignee.name}`);
  if (c.add.length > 0) parts.push(`add ${c.add.map((l) => `“${l.name}”`).join(', ')}`);
  if (c.remove.length > 0) parts.push(`remove ${c.remove.map((l) => `“${l.name}”`).join(', ')}`);
  return parts.join(', ');
}
