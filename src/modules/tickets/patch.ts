// A change to a ticket (PATCH, bulk, a reply carrying a status, an automation, auto-assignment),
// applied on a ticket its caller locked. Each step checks one part of the patch and notes what it
// changes; then the row is written once, each tracked change gets its activity, ticket.updated is
// appended, and the workflow hooks see what the patch changed.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import type { ActingContext, Actor } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { mergeCustom } from '../../platform/http/values.js';
import { applyFieldValues } from '../custom-fields/values.js';
import { applyTags } from '../tags/records.js';
import { addActivities } from './activities.js';
import { presentTicket, reload, type TicketRow } from './queries.js';
import { checkAssignee, checkSnooze, checkTeam } from './references.js';
import type { PatchTicketBody } from './schemas.js';
import { checkRequiredFields, isDone } from './status.js';

export type PatchInput = Static<typeof PatchTicketBody>;

/** The change (a key of ticket.updated's `changes`) each activity of applyPatch records. */
const CHANGE_OF_ACTIVITY: Record<string, string> = {
  field_changed: 'fields',
  status_changed: 'status',
  priority_changed: 'priority',
  severity_changed: 'severity',
  assigned: 'assignee_id',
  team_changed: 'team_id',
  tagged: 'tags',
  untagged: 'tags',
};

export interface Applied {
  row: TicketRow;
  changes: string[];
}

export interface PatchOptions {
  /** Where errors point: `body` (PATCH, the default), `body.patch` (bulk), `automation`. */
  at?: string;
  /** Changes made before the patch in the same transaction, listed in ticket.updated too. */
  extraChanges?: string[];
  /** Who made each change, when several actors' changes apply as one (an event's automations). */
  actorOf?: (change: string) => Actor;
  /** Extra data of each change's activity (AI triage: via, model, confidence). */
  activityData?: (change: string) => Record<string, unknown>;
  /** Keep custom.ai_suggestions as the patch leaves it (AI triage writes its own set). */
  keepSuggestions?: boolean;
}

/** What the steps found the patch changes, before anything is written. */
interface Draft {
  readonly before: TicketRow;
  /** Where errors point. */
  readonly at: string;
  /** Columns to write. */
  set: Record<string, unknown>;
  /** ticket.updated's `changes`, in order. */
  changes: string[];
  /** One activity per tracked change: its type and data. */
  activities: Array<[string, Record<string, unknown>]>;
  /** Custom field values as the patch leaves them (the status rules read them). */
  fields: Record<string, unknown>;
  /** Set when the assignee changed to someone (ticket.updated also goes to their topic). */
  newAssignee?: string | null;
}

/**
 * Applies a patch to a locked ticket: checks references and the status rules, updates the
 * row, writes an activity per tracked change and the ticket.updated event. Returns the row as
 * it is now.
 */
export async function applyPatch(
  deps: Deps,
  u: Unit,
  ctx: ActingContext,
  before: TicketRow,
  patch: PatchInput,
  { at = 'body', extraChanges = [], actorOf, activityData, keepSuggestions }: PatchOptions = {},
): Promise<Applied> {
  const d: Draft = { before, at, set: {}, changes: [...extraChanges], activities: [], fields: before.fields ?? {} };
  changeSubject(d, patch);
  await changeFields(u, d, patch);
  await changeStatus(u, ctx, d, patch);
  changePriorityAndSeverity(d, patch);
  await changeAssigneeAndTeam(u, d, patch);
  changeSnooze(d, patch);
  await changeLabels(u, ctx, d, patch);
  changeSpamAndCustom(d, patch);
  if (!keepSuggestions) dropSuggestions(d, patch);
  if (d.changes.length === 0) return { row: before, changes: d.changes };

  let row = await writeRow(u, d);
  await recordActivities(u, row, d, (change) => actorOf?.(change) ?? ctx.actor, activityData);
  emitUpdated(u, row, d.changes, d.newAssignee);
  // The workflow sees what this patch changed (not the stat columns a reply passes along).
  const own = d.changes.filter((c) => !extraChanges.includes(c));
  if (own.length > 0) {
    const after = await deps.ticketHooks.run(deps, u, {
      trigger: 'ticket_updated',
      ticket: row,
      before,
      changes: own,
      message: null,
      ctx,
    });
    row = after ?? row;
  }
  return { row, changes: d.changes };
}

/** ticket.updated, also on the new assignee's user topic when the assignee changed. */
export function emitUpdated(u: Unit, row: TicketRow, changes: string[], newAssignee?: string | null): void {
  u.emit({
    type: 'ticket.updated',
    data: { ticket: presentTicket(row), changes },
    teamId: row.private_team_id,
    ...(newAssignee ? { topics: [`user:${newAssignee}`] } : {}),
  });
}

// ---------------------------------------------------------------------------------------------
// The steps, in the order they apply.

function changeSubject(d: Draft, patch: PatchInput): void {
  if (patch.subject === undefined) return;
  const subject = patch.subject.trim();
  if (subject === '') throw invalid(`${d.at}.subject`, 'must not be blank');
  if (subject !== d.before.subject) {
    d.set.subject = subject;
    d.changes.push('subject');
  }
}

/** Custom field values: checked against each field's type and options; one activity per field. */
async function changeFields(u: Unit, d: Draft, patch: PatchInput): Promise<void> {
  if (patch.fields === undefined) return;
  const applied = await applyFieldValues(u, 'ticket', d.fields, patch.fields, `${d.at}.fields`);
  if (applied.changes.length === 0) return;
  d.fields = applied.fields;
  d.set.fields = JSON.stringify(d.fields);
  d.changes.push('fields');
  for (const c of applied.changes) d.activities.push(['field_changed', { key: c.key, from: c.from, to: c.to }]);
}

/**
 * The status and its rules: fields required for the new status (not enforced on an automation's
 * change), solved_at, and a snooze ended by solving or closing.
 */
async function changeStatus(u: Unit, ctx: ActingContext, d: Draft, patch: PatchInput): Promise<void> {
  const { before } = d;
  if (patch.status === undefined || patch.status === before.status) return;
  if (ctx.actor.kind !== 'automation') await checkRequiredFields(u.trx, u.workspaceId, patch.status, d.fields);
  d.set.status = patch.status;
  if (patch.status === 'solved') d.set.solved_at = new Date();
  else if (patch.status === 'closed') d.set.solved_at = before.solved_at ?? new Date();
  else d.set.solved_at = null;
  if (isDone(patch.status) && before.snoozed_until !== null && patch.snoozed_until === undefined) {
    d.set.snoozed_until = null;
    d.changes.push('snoozed_until');
  }
  d.changes.push('status');
  d.activities.push(['status_changed', { from: before.status, to: patch.status }]);
}

function changePriorityAndSeverity(d: Draft, patch: PatchInput): void {
  const { before } = d;
  if (patch.priority !== undefined && patch.priority !== before.priority) {
    d.set.priority = patch.priority;
    d.changes.push('priority');
    d.activities.push(['priority_changed', { from: before.priority, to: patch.priority }]);
  }
  if (patch.severity !== undefined && patch.severity !== before.severity) {
    d.set.severity = patch.severity;
    d.changes.push('severity');
    d.activities.push(['severity_changed', { from: before.severity, to: patch.severity }]);
  }
}

/** The assignee (an agent or above of this workspace) and the team (one of this workspace's). */
async function changeAssigneeAndTeam(u: Unit, d: Draft, patch: PatchInput): Promise<void> {
  const { before } = d;
  if (patch.assignee_id !== undefined) {
    const to = patch.assignee_id?.toLowerCase() ?? null;
    if (to !== before.assignee_id) {
      if (to !== null) await checkAssignee(u, to, `${d.at}.assignee_id`);
      d.set.assignee_id = to;
      d.newAssignee = to;
      d.changes.push('assignee_id');
      d.activities.push(['assigned', { from: before.assignee_id, to }]);
    }
  }
  if (patch.team_id !== undefined) {
    const to = patch.team_id?.toLowerCase() ?? null;
    if (to !== before.team_id) {
      if (to !== null) await checkTeam(u, to, `${d.at}.team_id`);
      d.set.team_id = to;
      d.changes.push('team_id');
      d.activities.push(['team_changed', { from: before.team_id, to }]);
    }
  }
}

/** A snooze time in the future, or null to wake the ticket (no activity). */
function changeSnooze(d: Draft, patch: PatchInput): void {
  if (patch.snoozed_until === undefined) return;
  const to = checkSnooze(patch.snoozed_until, `${d.at}.snoozed_until`);
  if ((to?.getTime() ?? null) !== (d.before.snoozed_until?.getTime() ?? null)) {
    d.set.snoozed_until = to;
    if (!d.changes.includes('snoozed_until')) d.changes.push('snoozed_until');
  }
}

/** Labels (replaced, or added and removed): written now by applyTags; one activity per label. */
async function changeLabels(u: Unit, ctx: ActingContext, d: Draft, patch: PatchInput): Promise<void> {
  if (patch.tags === undefined && patch.add_tags === undefined && patch.remove_tags === undefined) return;
  const { added, removed } = await applyTags(
    u,
    ctx,
    { entity: 'ticket', id: d.before.id },
    { tags: patch.tags, add_tags: patch.add_tags, remove_tags: patch.remove_tags },
    // applyPatch's ticket is locked by its caller, who read it under that lock.
    { at: d.at, locked: true, current: presentTicket(d.before).tags },
  );
  if (added.length + removed.length > 0) d.changes.push('tags');
  for (const tag of added) d.activities.push(['tagged', { tag }]);
  for (const tag of removed) d.activities.push(['untagged', { tag }]);
}

/** The spam flag, and the free-form `custom` object merged key by key (no activity). */
function changeSpamAndCustom(d: Draft, patch: PatchInput): void {
  const { before } = d;
  if (patch.spam !== undefined && patch.spam !== before.spam) {
    d.set.spam = patch.spam;
    d.changes.push('spam');
  }
  if (patch.custom !== undefined) {
    const custom = mergeCustom(before.custom ?? {}, patch.custom, `${d.at}.custom`);
    if (JSON.stringify(custom) !== JSON.stringify(before.custom ?? {})) {
      d.set.custom = JSON.stringify(custom);
      d.changes.push('custom');
    }
  }
}

/** The AI suggestion each patch key settles (interface.md "AI suggestions"). */
const SUGGESTION_OF: Record<string, string> = {
  priority: 'priority',
  severity: 'severity',
  team_id: 'team',
  spam: 'spam',
  tags: 'labels',
  add_tags: 'labels',
  remove_tags: 'labels',
};

/** A patch setting a field removes its pending AI suggestion (custom.ai_suggestions). */
function dropSuggestions(d: Draft, patch: PatchInput): void {
  const custom = (d.set.custom ? JSON.parse(d.set.custom as string) : (d.before.custom ?? {})) as Record<
    string,
    unknown
  >;
  const pending = custom.ai_suggestions;
  if (pending === null || typeof pending !== 'object') return;
  const left: Record<string, unknown> = { ...(pending as Record<string, unknown>) };
  for (const [key, field] of Object.entries(SUGGESTION_OF)) {
    if ((patch as Record<string, unknown>)[key] !== undefined) delete left[field];
  }
  if (Object.keys(left).length === Object.keys(pending).length) return;
  const next = { ...custom };
  if (Object.keys(left).length > 0) next.ai_suggestions = left;
  else delete next.ai_suggestions;
  d.set.custom = JSON.stringify(next);
  if (!d.changes.includes('custom')) d.changes.push('custom');
}

/**
 * Writes the columns (labels are written already, updated_at moves with them) and answers the row
 * as it is now; only extra changes (a message's statistics, which the caller read `before` after):
 * the row as is.
 */
async function writeRow(u: Unit, d: Draft): Promise<TicketRow> {
  const writes = Object.keys(d.set).length > 0 || d.changes.includes('tags');
  if (!writes) return d.before;
  await u.trx
    .updateTable('tickets')
    .set({ ...d.set, updated_at: new Date() })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', d.before.id)
    .execute();
  return reload(u, d.before.id);
}

/** One activity per tracked change, each by whoever made that change. */
async function recordActivities(
  u: Unit,
  row: TicketRow,
  d: Draft,
  actorOf: (change: string) => Actor,
  extra?: (change: string) => Record<string, unknown>,
) {
  await addActivities(
    u,
    { id: row.id, privateTeamId: row.private_team_id },
    d.activities.map(([type, data]) => {
      const change = CHANGE_OF_ACTIVITY[type] ?? type;
      return { actor: actorOf(change), type, data: extra ? { ...data, ...extra(change) } : data };
    }),
  );
}
