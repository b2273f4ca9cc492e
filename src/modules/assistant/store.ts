// The assistant's rows (migration 0051): conversations private to their person, their turns, the
// tool steps and the actions waiting for approval. Every query names the workspace; a
// conversation is read only together with its person (another person's id is not found).
import type { Static } from '@sinclair/typebox';
import { type Kysely, type Selectable, sql } from 'kysely';
import { newId, randomId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type {
  AssistantActionsTable,
  AssistantSessionsTable,
  AssistantStepStatus,
  AssistantStepsTable,
  AssistantTurnsTable,
  StoredCall,
  StoredRef,
} from '../../platform/db/tables-assistant.js';
import { iso } from '../../platform/http/schemas.js';
import type { Session, Step } from './schemas.js';

export type SessionRow = Selectable<AssistantSessionsTable>;
export type TurnRow = Selectable<AssistantTurnsTable>;
export type StepRow = Selectable<AssistantStepsTable>;
export type ActionRow = Selectable<AssistantActionsTable>;
export type SessionView = Static<typeof Session>;
export type StepView = Static<typeof Step>;

/**
 * A run holds its conversation for at most this long without a sign of life (each model turn
 * renews it): a process that died mid-run does not lock the conversation for ever.
 */
export const STALE_RUN_SECONDS = 300;

const fresh = sql<Date>`now() - make_interval(secs => ${STALE_RUN_SECONDS})`;

export function presentSession(s: SessionRow): SessionView {
  const running = s.run_id !== null && s.run_at !== null && s.run_at.getTime() > Date.now() - STALE_RUN_SECONDS * 1000;
  return {
    id: s.id,
    title: s.title,
    created_at: iso(s.created_at)!,
    updated_at: iso(s.updated_at)!,
    running,
  };
}

export function presentStep(s: StepRow): StepView {
  return {
    id: s.id,
    tool: s.tool,
    label: s.label,
    status: s.status,
    ...(s.summary !== null ? { summary: s.summary } : {}),
    refs: s.refs,
    action_id: s.action_id,
  };
}

/** A conversation of this person in this workspace, or undefined. */
export function findSession(
  db: Kysely<DB>,
  workspaceId: string,
  userId: string,
  id: string,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('assistant_sessions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function listSessions(db: Kysely<DB>, workspaceId: string, userId: string): Promise<SessionRow[]> {
  return db
    .selectFrom('assistant_sessions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(200)
    .execute();
}

export function insertSession(
  db: Kysely<DB>,
  workspaceId: string,
  userId: string,
  title: string | undefined,
): Promise<SessionRow> {
  return db
    .insertInto('assistant_sessions')
    .values({
      workspace_id: workspaceId,
      id: newId(),
      user_id: userId,
      title: title ?? '',
      titled: title !== undefined,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function renameSession(
  db: Kysely<DB>,
  workspaceId: string,
  userId: string,
  id: string,
  title: string,
): Promise<SessionRow | undefined> {
  return db
    .updateTable('assistant_sessions')
    .set({ title, titled: true, updated_at: new Date() })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the conversation unless a run holds it: 'deleted', 'busy' or 'missing'. */
export async function deleteSession(
  db: Kysely<DB>,
  workspaceId: string,
  userId: string,
  id: string,
): Promise<'deleted' | 'busy' | 'missing'> {
  const r = await db
    .deleteFrom('assistant_sessions')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('run_id', 'is', null), eb('run_at', '<', fresh)]))
    .executeTakeFirst();
  if (Number(r.numDeletedRows) === 1) return 'deleted';
  return (await findSession(db, workspaceId, userId, id)) ? 'busy' : 'missing';
}

/**
 * Takes the conversation for a run: atomically, only when no fresh run holds it. Returns the
 * run's id (to renew and release it with), or null when another run holds it.
 */
export async function takeRun(db: Kysely<DB>, workspaceId: string, sessionId: string): Promise<string | null> {
  const runId = randomId();
  const r = await db
    .updateTable('assistant_sessions')
    .set({ run_id: runId, run_at: sql<Date>`now()` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sessionId)
    .where((eb) => eb.or([eb('run_id', 'is', null), eb('run_at', '<', fresh)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1 ? runId : null;
}

/** A sign of life of the run (each model turn): the staleness bound counts from here. */
export async function renewRun(db: Kysely<DB>, workspaceId: string, sessionId: string, runId: string): Promise<void> {
  await db
    .updateTable('assistant_sessions')
    .set({ run_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sessionId)
    .where('run_id', '=', runId)
    .execute();
}

export async function releaseRun(db: Kysely<DB>, workspaceId: string, sessionId: string, runId: string): Promise<void> {
  await db
    .updateTable('assistant_sessions')
    .set({ run_id: null, run_at: null, updated_at: sql<Date>`now()` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sessionId)
    .where('run_id', '=', runId)
    .execute();
}

/** The person's message: stored, and the conversation titled by it when nobody titled it. */
export async function addUserTurn(
  db: Kysely<DB>,
  session: SessionRow,
  text: string,
  context: Record<string, unknown> | null,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('assistant_turns')
      .values({
        workspace_id: session.workspace_id,
        id: newId(),
        session_id: session.id,
        role: 'user',
        text,
        context: context ? JSON.stringify(context) : null,
      })
      .execute();
    if (!session.titled && session.title === '') {
      await trx
        .updateTable('assistant_sessions')
        .set({ title: titleOf(text) })
        .where('workspace_id', '=', session.workspace_id)
        .where('id', '=', session.id)
        .where('titled', '=', false)
        .where('title', '=', '')
        .execute();
    }
  });
}

/** A title from the first message: its first line, at most 80 characters (cut at a word). */
export function titleOf(text: string): string {
  const line = text.trim().split(/\r?\n/)[0]!.replace(/\s+/g, ' ').trim();
  if (line.length <= 80) return line || 'New conversation';
  const cut = line.slice(0, 80);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export async function addAssistantTurn(
  db: Kysely<DB>,
  session: SessionRow,
  text: string,
  calls: StoredCall[],
): Promise<TurnRow> {
  return db
    .insertInto('assistant_turns')
    .values({
      workspace_id: session.workspace_id,
      id: newId(),
      session_id: session.id,
      role: 'assistant',
      text,
      tool_calls: JSON.stringify(calls),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface NewStep {
  turn: TurnRow;
  callId: string;
  position: number;
  tool: string;
  label: string;
  status: AssistantStepStatus;
  summary?: string | null;
  refs?: StoredRef[];
  result?: string | null;
  isError?: boolean;
  shown?: boolean;
}

export function insertStep(db: Kysely<DB>, s: NewStep): Promise<StepRow> {
  return db
    .insertInto('assistant_steps')
    .values({
      workspace_id: s.turn.workspace_id,
      id: newId(),
      session_id: s.turn.session_id,
      turn_id: s.turn.id,
      call_id: s.callId,
      position: s.position,
      tool: s.tool,
      label: s.label,
      status: s.status,
      summary: s.summary ?? null,
      refs: JSON.stringify(s.refs ?? []),
      result: s.result ?? null,
      is_error: s.isError ?? false,
      shown: s.shown ?? true,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface StepUpdate {
  status: AssistantStepStatus;
  summary?: string | null;
  refs?: StoredRef[];
  actionId?: string | null;
  result?: string | null;
  isError?: boolean;
}

export function updateStep(db: Kysely<DB>, step: StepRow, u: StepUpdate): Promise<StepRow> {
  return db
    .updateTable('assistant_steps')
    .set({
      status: u.status,
      ...(u.summary !== undefined ? { summary: u.summary } : {}),
      ...(u.refs !== undefined ? { refs: JSON.stringify(u.refs) } : {}),
      ...(u.actionId !== undefined ? { action_id: u.actionId } : {}),
      ...(u.result !== undefined ? { result: u.result } : {}),
      ...(u.isError !== undefined ? { is_error: u.isError } : {}),
    })
    .where('workspace_id', '=', step.workspace_id)
    .where('id', '=', step.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findStep(db: Kysely<DB>, workspaceId: string, id: string): Promise<StepRow | undefined> {
  return db
    .selectFrom('assistant_steps')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The conversation's turns (oldest first; the newest `limit` when given) and their steps. */
export async function loadTranscript(
  db: Kysely<DB>,
  session: SessionRow,
  limit?: number,
): Promise<{ turns: TurnRow[]; steps: StepRow[] }> {
  let q = db
    .selectFrom('assistant_turns')
    .selectAll()
    .where('workspace_id', '=', session.workspace_id)
    .where('session_id', '=', session.id)
    .orderBy('id', 'desc');
  if (limit !== undefined) q = q.limit(limit);
  const turns = (await q.execute()).reverse();
  if (turns.length === 0) return { turns, steps: [] };
  const steps = await db
    .selectFrom('assistant_steps')
    .selectAll()
    .where('workspace_id', '=', session.workspace_id)
    .where(
      'turn_id',
      'in',
      turns.map((t) => t.id),
    )
    .orderBy('turn_id')
    .orderBy('position')
    .execute();
  return { turns, steps };
}

export function insertAction(
  db: Kysely<DB>,
  a: {
    workspaceId: string;
    id: string;
    sessionId: string;
    stepId: string;
    userId: string;
    signInSessionId: string;
    tool: string;
    args: unknown;
    plan: unknown;
    preview: Record<string, unknown>;
    expiresAt: Date;
  },
): Promise<ActionRow> {
  return db
    .insertInto('assistant_actions')
    .values({
      workspace_id: a.workspaceId,
      id: a.id,
      session_id: a.sessionId,
      step_id: a.stepId,
      user_id: a.userId,
      sign_in_session_id: a.signInSessionId,
      tool: a.tool,
      args: JSON.stringify(a.args ?? null),
      plan: a.plan === undefined ? null : JSON.stringify(a.plan),
      preview: JSON.stringify(a.preview),
      expires_at: a.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findAction(db: Kysely<DB>, workspaceId: string, id: string): Promise<ActionRow | undefined> {
  return db
    .selectFrom('assistant_actions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function pendingActions(db: Kysely<DB>, workspaceId: string, sessionId: string): Promise<ActionRow[]> {
  return db
    .selectFrom('assistant_actions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .orderBy('id')
    .execute();
}

/**
 * Moves a pending action to `to` (the decision, or expired), only if it is still pending (and,
 * for a decision, not past its expiry): exactly one of concurrent decisions wins. Null: lost.
 */
export function settleAction(
  db: Kysely<DB>,
  a: ActionRow,
  to: 'approved' | 'denied' | 'expired',
): Promise<ActionRow | undefined> {
  let q = db
    .updateTable('assistant_actions')
    .set({ status: to, decided_at: sql<Date>`now()` })
    .where('workspace_id', '=', a.workspace_id)
    .where('id', '=', a.id)
    .where('status', '=', 'pending');
  if (to !== 'expired') q = q.where('expires_at', '>', sql<Date>`now()`);
  return q.returningAll().executeTakeFirst();
}
