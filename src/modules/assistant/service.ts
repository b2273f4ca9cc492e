// The assistant's conversations (interface.md "Assistant", "Assistant approval"; docs/assistant.md):
// private to their person, listed, started, read (transcript and pending approval), renamed,
// deleted; a message starts a run (run.ts); a decision on a pending action runs or drops it, and
// the run goes on in the same request.
//
// Order of checks of a send: the conversation (404: a malformed, missing or another person's id
// says nothing of the workspace's settings), assistant_off (403), the balance (402 ai_balance_empty, before
// anything is stored), the run lock (409 assistant_busy); then a pending approval expires, the
// message is stored and the run starts.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { priceFor, type ReadyAi } from '../ai/service.js';
import { estimateUsd, markupOf, maySpend, settleSpend } from '../ai/spend.js';
import { recordAudit } from '../audit/service.js';
import { personOf, requireAssistant } from './gate.js';
import { resultText } from './prompt.js';
import {
  APPROVAL_MINUTES,
  approvalToken,
  continueRun,
  envOf,
  failureOf,
  presentApproval,
  RESULTS,
  type RunIo,
  type RunStatusT,
  TURN_TOKENS,
  tokenMatches,
} from './run.js';
import type {
  CreateSessionBody,
  DecisionBody,
  RenameBody,
  SendBody,
  SessionDetail,
  TranscriptMessage,
} from './schemas.js';
import {
  type ActionRow,
  addUserTurn,
  deleteSession,
  findAction,
  findSession,
  findStep,
  insertSession,
  listSessions,
  loadTranscript,
  pendingActions,
  presentSession,
  presentStep,
  releaseRun,
  renameSession,
  type SessionRow,
  type SessionView,
  settleAction,
  takeRun,
  updateStep,
} from './store.js';
import type { AssistantTool, PreviewT } from './tools/types.js';

export { APPROVAL_MINUTES };

const gone = () => notFound('No such conversation.');

async function ownSession(deps: Deps, ctx: RequestContext, id: string): Promise<SessionRow> {
  const { userId } = personOf(ctx);
  if (!isUuid(id)) throw gone();
  const s = await findSession(deps.database.db, ctx.workspaceId, userId, id);
  if (!s) throw gone();
  return s;
}

export async function listOwnSessions(deps: Deps, ctx: RequestContext): Promise<{ data: SessionView[] }> {
  await requireAssistant(deps, ctx);
  const rows = await listSessions(deps.database.db, ctx.workspaceId, personOf(ctx).userId);
  return { data: rows.map(presentSession) };
}

export async function startSession(
  deps: Deps,
  ctx: RequestContext,
  body: Static<typeof CreateSessionBody>,
): Promise<SessionView> {
  await requireAssistant(deps, ctx);
  const title = body.title?.trim();
  const row = await insertSession(deps.database.db, ctx.workspaceId, personOf(ctx).userId, title || undefined);
  return presentSession(row);
}

export async function renameOwnSession(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  body: Static<typeof RenameBody>,
): Promise<SessionView> {
  await ownSession(deps, ctx, id);
  await requireAssistant(deps, ctx);
  const row = await renameSession(
    deps.database.db,
    ctx.workspaceId,
    personOf(ctx).userId,
    id,
    body.title.trim() || body.title,
  );
  if (!row) throw gone();
  return presentSession(row);
}

export async function deleteOwnSession(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  await ownSession(deps, ctx, id);
  await requireAssistant(deps, ctx);
  const r = await deleteSession(deps.database.db, ctx.workspaceId, personOf(ctx).userId, id);
  if (r === 'missing') throw gone();
  if (r === 'busy') throw busy();
}

const busy = () =>
  new ApiError('assistant_busy', 'The assistant is still answering in this conversation; wait for it to finish.');

/**
 * Expires the conversation's pending approvals: all of them (`by` message: a new message came), or
 * those past their time. Each one's step shows `expired`, and its call's result says why.
 */
async function expirePending(deps: Deps, session: SessionRow, by: 'message' | 'time'): Promise<void> {
  const db = deps.database.db;
  for (const a of await pendingActions(db, session.workspace_id, session.id)) {
    if (by === 'time' && a.expires_at.getTime() > Date.now()) continue;
    await expireAction(deps, a, by);
  }
}

async function expireAction(deps: Deps, a: ActionRow, by: 'message' | 'time'): Promise<void> {
  const db = deps.database.db;
  if (!(await settleAction(db, a, 'expired'))) return;
  const step = await findStep(db, a.workspace_id, a.step_id);
  if (step) {
    await updateStep(db, step, {
      status: 'expired',
      result: by === 'message' ? RESULTS.expiredByMessage : RESULTS.expiredByTime,
      isError: true,
    });
  }
}

/** The transcript: the person's messages, and the assistant's answers with their steps; the pending approval. */
export async function getSessionDetail(
  deps: Deps,
  ctx: RequestContext,
  id: string,
): Promise<Static<typeof SessionDetail>> {
  const session = await ownSession(deps, ctx, id);
  await requireAssistant(deps, ctx);
  await expirePending(deps, session, 'time');
  const db = deps.database.db;
  const { turns, steps } = await loadTranscript(db, session);
  const byTurn = new Map<string, typeof steps>();
  for (const s of steps) {
    if (!s.shown) continue;
    const list = byTurn.get(s.turn_id) ?? [];
    list.push(s);
    byTurn.set(s.turn_id, list);
  }
  const messages: Static<typeof TranscriptMessage>[] = [];
  for (const t of turns) {
    const last = messages.at(-1);
    const own = (byTurn.get(t.id) ?? []).map(presentStep);
    if (t.role === 'assistant' && last?.role === 'assistant') {
      if (t.text !== '') last.text = last.text === '' ? t.text : `${last.text}\n\n${t.text}`;
      last.steps.push(...own);
      continue;
    }
    messages.push({ id: t.id, role: t.role, text: t.text, steps: own, created_at: t.created_at.toISOString() });
  }
  const person = personOf(ctx);
  const pending = (await pendingActions(db, session.workspace_id, session.id))[0];
  let approval = null;
  if (pending) {
    const step = await findStep(db, pending.workspace_id, pending.step_id);
    // The token works only in the sign-in session the approval was made in: elsewhere it is empty.
    const token =
      pending.sign_in_session_id === person.sessionId
        ? approvalToken(deps, {
            workspaceId: pending.workspace_id,
            actionId: pending.id,
            userId: person.userId,
            signInSessionId: person.sessionId,
          })
        : '';
    approval = presentApproval(pending, step?.call_id ?? '', token);
  }
  const fresh = (await findSession(db, session.workspace_id, person.userId, session.id)) ?? session;
  return { session: presentSession(fresh), messages, approval };
}

/**
 * 402 ai_balance_empty unless the balance covers a model turn's estimate (hosted offering): the
 * estimate is held and released at once, before anything is stored.
 */
async function checkBalance(deps: Deps, ctx: RequestContext, ai: ReadyAi, text: string): Promise<void> {
  const estimate = estimateUsd({
    feature: 'assistant',
    source: ai.target.source,
    price: priceFor(ai.target, ai.tiers.default),
    system: '',
    messages: [{ role: 'user', content: text }],
    maxTokens: TURN_TOKENS,
    markup: markupOf(deps),
  });
  const held = await maySpend(deps, ctx.workspaceId, estimate);
  await settleSpend(deps, held, 0, null);
}

export interface RunOutcome {
  session: SessionView;
  status: RunStatusT;
}

/** Holds the conversation for a run (409 assistant_busy when one is under way), and lets it go. */
async function withRun<T>(
  deps: Deps,
  session: SessionRow,
  onBusy: () => Promise<ApiError>,
  fn: (runId: string) => Promise<T>,
): Promise<T> {
  const db = deps.database.db;
  const runId = await takeRun(db, session.workspace_id, session.id);
  if (!runId) throw await onBusy();
  try {
    return await fn(runId);
  } finally {
    await releaseRun(db, session.workspace_id, session.id, runId).catch((err: unknown) =>
      deps.log.error({ error: String(err), session: session.id }, 'assistant run lock not released'),
    );
  }
}

async function sessionView(deps: Deps, session: SessionRow, userId: string): Promise<SessionView> {
  const row = await findSession(deps.database.db, session.workspace_id, userId, session.id);
  return presentSession(row ?? session);
}

/** POST /v1/assistant/sessions/{id}/messages. */
export async function sendMessage(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  body: Static<typeof SendBody>,
  tools: readonly AssistantTool[],
  io: RunIo,
): Promise<RunOutcome> {
  const session = await ownSession(deps, ctx, id);
  const ai = await requireAssistant(deps, ctx);
  const person = personOf(ctx);
  await checkBalance(deps, ctx, ai, body.text);
  const status = await withRun(
    deps,
    session,
    async () => busy(),
    async (runId) => {
      const db = deps.database.db;
      await expirePending(deps, session, 'message');
      await addUserTurn(db, session, body.text, (body.context as Record<string, unknown> | undefined) ?? null);
      io.emit({ event: 'session', data: await sessionView(deps, session, person.userId) });
      return continueRun({
        deps,
        ctx,
        userId: person.userId,
        signInSessionId: person.sessionId,
        ai,
        session,
        runId,
        tools,
        io,
      });
    },
  );
  return { session: await sessionView(deps, session, person.userId), status };
}

const notPending = () =>
  new ApiError('approval_not_pending', 'This action is no longer waiting for a decision (decided or expired).');

/** POST /v1/assistant/actions/{id}/decision: runs the approved change once, or drops it; the run goes on. */
export async function decide(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  body: Static<typeof DecisionBody>,
  tools: readonly AssistantTool[],
  io: RunIo,
): Promise<RunOutcome> {
  const person = personOf(ctx);
  const db = deps.database.db;
  const action = isUuid(id) ? await findAction(db, ctx.workspaceId, id) : undefined;
  if (!action) throw notFound('No such action.');
  const ai = await requireAssistant(deps, ctx);
  const bound = tokenMatches(deps, body.token, {
    workspaceId: ctx.workspaceId,
    actionId: action.id,
    userId: person.userId,
    signInSessionId: person.sessionId,
  });
  if (!bound || action.user_id !== person.userId || action.sign_in_session_id !== person.sessionId) {
    throw new ApiError(
      'approval_invalid',
      'This token does not approve this action: it belongs to another action, person, sign-in or workspace.',
    );
  }
  const session = await findSession(db, ctx.workspaceId, person.userId, action.session_id);
  if (!session) throw notFound('No such action.');
  if (action.status !== 'pending') throw notPending();
  if (action.expires_at.getTime() <= Date.now()) {
    await expireAction(deps, action, 'time');
    throw notPending();
  }
  await checkBalance(deps, ctx, ai, '');
  const onBusy = async () =>
    (await findAction(db, ctx.workspaceId, id))?.status === 'pending' ? busy() : notPending();
  const status = await withRun(deps, session, onBusy, async (runId) => {
    const to = body.decision === 'approve' ? 'approved' : 'denied';
    const won = await settleAction(db, action, to);
    if (!won) {
      const now = await findAction(db, ctx.workspaceId, id);
      if (now?.status === 'pending') await expireAction(deps, now, 'time');
      throw notPending();
    }
    let step = await findStep(db, action.workspace_id, action.step_id);
    const preview = action.preview as PreviewT;
    await deps.writer.run(ctx.workspaceId, async (u) =>
      recordAudit(u.trx, ctx, {
        action: 'assistant.action',
        entityType: 'assistant_action',
        entityId: action.id,
        data: { tool: action.tool, decision: body.decision, targets: preview.targets, session_id: session.id },
      }),
    );
    if (step) {
      if (to === 'denied') {
        step = await updateStep(db, step, { status: 'denied', result: RESULTS.denied, isError: false });
      } else {
        const tool = tools.find((t) => t.name === action.tool);
        const env = envOf({ deps, ctx, session }, ai.tiers.default ?? '');
        try {
          if (tool?.kind !== 'write') throw new Error(`the write tool ${action.tool} is not offered`);
          const out = await tool.execute(env, action.plan);
          step = await updateStep(db, step, {
            status: 'approved',
            summary: out.summary,
            refs: out.refs.length > 0 ? out.refs : undefined,
            result: resultText(out.content),
            isError: false,
          });
        } catch (err) {
          const error = failureOf(deps, action.tool, err);
          step = await updateStep(db, step, {
            status: 'error',
            summary: error.replace(/^Error: /, ''),
            result: error,
            isError: true,
          });
        }
      }
    }
    io.emit({ event: 'session', data: await sessionView(deps, session, person.userId) });
    if (step) io.emit({ event: 'tool', data: presentStep(step) });
    return continueRun({
      deps,
      ctx,
      userId: person.userId,
      signInSessionId: person.sessionId,
      ai,
      session,
      runId,
      tools,
      io,
    });
  });
  return { session: await sessionView(deps, session, person.userId), status };
}

/** Onboarding's try_ollie: done once the person has a conversation in the workspace. */
export async function hasSession(db: Deps['database']['db'], workspaceId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('assistant_sessions')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
