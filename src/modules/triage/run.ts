// A triage run: POST /v1/tickets/{id}/ai/triage (an agent asks), the automatic run on a new
// ticket (auto_triage, in a job), and an automation's ai_triage action (in a job after the
// automation's transaction). Each asks the engine outside any transaction (the provider call can
// take seconds), then locks the ticket and writes the plan (apply.ts) in one transaction.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { aiDisabled } from '../ai/service.js';
import { assignmentHook } from '../assignment/hook.js';
import { listMessagesOfTicket } from '../tickets/messages.js';
import { presentTicket, type TicketRow, ticketQuery } from '../tickets/queries.js';
import { findVisibleTicket, lockVisibleTicket } from '../tickets/service.js';
import { aiActor, planTriage, type TriagePlan, type Via, writeTriage } from './apply.js';
import { type EngineAnswer, engineFor, type TriageInput, type TriageOptions } from './engine.js';
import type { TriageResult } from './schemas.js';
import { loadTriageSettings, type StoredTriage } from './service.js';

export type TriageResultView = Static<typeof TriageResult>;

/** What the ticket offers the engine: the workspace's teams, the Type group's labels and the others. */
export async function optionsOf(deps: Deps, workspaceId: string): Promise<TriageOptions> {
  const db = deps.database.db;
  const teams = await db
    .selectFrom('teams')
    .select(['id', 'name'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('name')
    .execute();
  const labels = await db
    .selectFrom('tags as t')
    .leftJoin('tag_groups as g', (j) =>
      j.onRef('g.workspace_id', '=', 't.workspace_id').onRef('g.id', '=', 't.group_id'),
    )
    .select(['t.name', 'g.name as group_name', 'g.exclusive'])
    .where('t.workspace_id', '=', workspaceId)
    .where('t.archived', '=', false)
    .orderBy('t.position')
    .orderBy('t.name')
    .limit(200)
    .execute();
  const isType = (l: (typeof labels)[number]) => l.exclusive === true && l.group_name?.trim().toLowerCase() === 'type';
  return {
    teams,
    typeLabels: labels.filter(isType).map((l) => l.name),
    labels: labels.filter((l) => !isType(l)).map((l) => l.name),
  };
}

/** The engine's input: the ticket, its messages as the engine reads them, the options. */
async function inputOf(
  deps: Deps,
  ticket: TicketRow,
  workspaceId: string,
  userId: string | null,
): Promise<TriageInput> {
  const messages = await listMessagesOfTicket(deps, deps.database.db, workspaceId, ticket.id);
  return {
    workspaceId,
    userId,
    ticket,
    messages: messages.map((m) => ({
      from: m.direction === 'inbound' ? 'customer' : m.author.type === 'system' ? 'system' : 'agent',
      kind: m.kind,
      text: m.body_text.trim(),
    })),
    options: await optionsOf(deps, workspaceId),
  };
}

/** Asks the workspace's engine (404 ai_disabled when it has none). */
async function ask(deps: Deps, input: TriageInput): Promise<EngineAnswer> {
  const engine = await engineFor(deps, input.workspaceId);
  if (!engine) throw aiDisabled();
  return engine.triage(deps, input);
}

function resultOf(row: TicketRow, plan: TriagePlan, answer: EngineAnswer): TriageResultView {
  const t = presentTicket(row);
  const custom = t.custom as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    tags: t.tags.map((x) => x.name),
    suggested_tags: plan.suggestedTags,
    priority: t.priority,
    severity: t.severity,
    team_id: t.team_id,
    sentiment: str(plan.decisions.fields.sentiment?.value) ?? str(custom.ai_sentiment),
    language: str(plan.decisions.fields.language?.value) ?? str(custom.language),
    category: str(plan.decisions.fields.category?.value) ?? str(custom.ai_category),
    summary: answer.summary,
    applied: plan.applied,
    decisions: plan.decisions,
    suggestions: plan.suggestions,
  } as TriageResultView;
}

/** POST /v1/tickets/{id}/ai/triage. */
export async function triageTicket(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  body: { apply?: boolean },
): Promise<TriageResultView> {
  const ticket = await findVisibleTicket(deps.database.db, ctx, param);
  const userId = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  const answer = await ask(deps, await inputOf(deps, ticket, ctx.workspaceId, userId));
  const settings = await loadTriageSettings(deps.database.db, ctx.workspaceId);
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockVisibleTicket(u, ctx, ticket.id);
    const plan = planTriage({ answer, ticket: before, settings, applyAll: body.apply === true, now: new Date() });
    const row = await writeTriage(deps, u, aiActor(answer.model, userId), before, plan, 'triage');
    return resultOf(row, plan, answer);
  });
}

/** The job of an automatic run or an automation's ai_triage action. */
export interface TriageJob {
  w: string;
  t: string;
  via: Via;
}

export const TRIAGE_JOB = 'ai-triage';

/**
 * A run without a caller: the triage `fields` only (no apply), then, with assign_after_triage
 * and a team that triage set, the assignment once. A ticket gone, or no engine: nothing.
 */
export async function runTriageJob(deps: Deps, job: TriageJob): Promise<void> {
  const db = deps.database.db;
  const ticket = await ticketQuery(db, job.w).where('t.id', '=', job.t).executeTakeFirst();
  if (!ticket || ticket.deleted_at !== null || ticket.merged_into_id !== null) return;
  const engine = await engineFor(deps, job.w);
  if (!engine) return;
  let answer: EngineAnswer;
  try {
    answer = await engine.triage(deps, await inputOf(deps, ticket, job.w, null));
  } catch (err) {
    // Only a provider failure (502) is worth a retry; no balance or AI turned off meanwhile is not.
    if (!(err instanceof ApiError) || err.status === 502) throw err;
    deps.log.info({ workspace_id: job.w, ticket_id: job.t, code: err.code }, 'automatic triage skipped');
    return;
  }
  const settings = await loadTriageSettings(db, job.w);
  await deps.writer.run(job.w, async (u) => {
    const before = await ticketQuery(u.trx, job.w).where('t.id', '=', job.t).forUpdate('t').executeTakeFirst();
    if (!before || before.deleted_at !== null) return;
    const plan = planTriage({ answer, ticket: before, settings, applyAll: false, now: new Date() });
    const row = await writeTriage(deps, u, aiActor(answer.model, null), before, plan, job.via);
    if (plan.patch.team_id) await assignAfterTriage(deps, u, settings, row);
  });
}

/** assign_after_triage: the assignment mode runs once on the ticket triage gave a team. */
async function assignAfterTriage(deps: Deps, u: Unit, settings: StoredTriage, row: TicketRow): Promise<void> {
  if (!settings.assign_after_triage || !assignmentHook.run) return;
  await assignmentHook.run(
    deps,
    u,
    { trigger: 'ticket_created', ticket: row, before: null, changes: [], message: null, ctx: aiActor('', null) },
    undefined,
  );
}

/** Queues a run after the unit commits (never on the request path). */
export function queueTriage(deps: Deps, u: Unit, ticketId: string, via: Via): void {
  const job: TriageJob = { w: u.workspaceId, t: ticketId, via };
  u.afterCommit(async () => {
    try {
      await deps.jobs.send(TRIAGE_JOB, job, { retryLimit: 2, retryDelaySeconds: 30 });
    } catch (err) {
      deps.log.warn({ err: (err as Error).message, ticket_id: ticketId }, 'could not queue the triage job');
    }
  });
}
