// The assistant's loop (docs/assistant.md "The loop"): model turn after model turn (at most
// MAX_MODEL_TURNS a run), each rebuilt from the stored conversation and metered by runAi (feature
// `assistant`, default tier, the tools' specs offered). Each tool call of a turn becomes a step:
//   - arguments that are not JSON or not of the tool's schema, an unknown tool, a ToolError: the
//     step is `error` and the model gets the error as the call's result (nothing changed);
//   - a read tool runs with the person's permissions: `done`, its output is the result;
//   - a write tool is only prepared: an action is stored (pending, 15 minutes) with its preview,
//     the step is `awaiting_approval`, the `approval` event carries a token, and the run stops
//     there. The turn's later calls are not run; their results say so (the model may call them
//     again), so every call has a result before the next model turn.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { StoredCall } from '../../platform/db/tables-assistant.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { callerOf } from '../ai/features/context.js';
import type { ToolSpec } from '../ai/providers/types.js';
import { runAi } from '../ai/run.js';
import type { ReadyAi } from '../ai/service.js';
import { HISTORY_TURNS, historyOf, resultText, systemPrompt } from './prompt.js';
import type { Approval, RunStatus } from './schemas.js';
import {
  type ActionRow,
  addAssistantTurn,
  insertAction,
  insertStep,
  loadTranscript,
  presentStep,
  renewRun,
  type SessionRow,
  type SessionView,
  type StepRow,
  type StepView,
  type TurnRow,
  updateStep,
} from './store.js';
import { type AssistantTool, type PreviewT, type ToolEnv, ToolError, type ToolOutput } from './tools/types.js';

export const MAX_MODEL_TURNS = 8;
/** The answer of one model turn, in tokens. */
export const TURN_TOKENS = 1_500;
/** How long an approval waits for the person's decision. */
export const APPROVAL_MINUTES = 15;

export type ApprovalView = Static<typeof Approval>;
export type RunStatusT = Static<typeof RunStatus>;

/** What a run tells its client: the stream's events, or what the JSON answer is made of. */
export type RunEvent =
  | { event: 'session'; data: SessionView }
  | { event: 'text'; data: { text: string } }
  | { event: 'tool'; data: StepView }
  | { event: 'approval'; data: ApprovalView }
  | { event: 'done'; data: { status: RunStatusT } };

export interface RunIo {
  emit(e: RunEvent): void;
  /** Aborted when the client goes away (the provider call stops, the run ends). */
  signal: AbortSignal;
  /** The client reads a stream: text is sent as the model writes it. */
  streaming: boolean;
}

/** One run of a conversation: the person's request, their workspace's AI, the tools offered. */
export interface Run {
  deps: Deps;
  ctx: RequestContext;
  userId: string;
  signInSessionId: string;
  ai: ReadyAi;
  session: SessionRow;
  runId: string;
  tools: readonly AssistantTool[];
  io: RunIo;
}

export const RESULTS = {
  notRun:
    'Not run: an earlier call of this turn is waiting for the person to approve it. Call this again after their ' +
    'decision if it is still needed.',
  denied: 'The person denied this action. Nothing was changed.',
  expiredByMessage:
    'Not done: the person sent a new message instead of deciding, so the approval expired. Nothing was changed.',
  expiredByTime: `Not done: the person did not decide within ${APPROVAL_MINUTES} minutes, so the approval expired. Nothing was changed.`,
  failed: 'The tool failed. Nothing was changed.',
};

/** A tool as offered to the model: its name, what it does, its arguments' JSON Schema. */
export function specOf(tool: AssistantTool): ToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    parameters: JSON.parse(JSON.stringify(tool.parameters)) as Record<string, unknown>,
  };
}

// --- The approval token: an HMAC over the workspace, the action, the person and their sign-in
// session, with a key of its own derived from SECRET_KEY. Nothing to store; another action's,
// person's, sign-in session's or workspace's token never matches.
const tokenKeys = new WeakMap<Deps, Buffer>();
function tokenKey(deps: Deps): Buffer {
  let key = tokenKeys.get(deps);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', deps.config.secretKey, 'svc-assistant', 'assistant approval token v1', 32));
    tokenKeys.set(deps, key);
  }
  return key;
}

export function approvalToken(
  deps: Deps,
  b: { workspaceId: string; actionId: string; userId: string; signInSessionId: string },
): string {
  return createHmac('sha256', tokenKey(deps))
    .update(`${b.workspaceId}\n${b.actionId}\n${b.userId}\n${b.signInSessionId}`)
    .digest('base64url');
}

export function tokenMatches(
  deps: Deps,
  token: string,
  b: { workspaceId: string; actionId: string; userId: string; signInSessionId: string },
): boolean {
  const want = Buffer.from(approvalToken(deps, b));
  const got = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

export function presentApproval(a: ActionRow, callId: string, token: string): ApprovalView {
  return {
    action_id: a.id,
    call_id: callId,
    tool: a.tool,
    preview: a.preview as PreviewT,
    token,
    expires_at: iso(a.expires_at)!,
  };
}

/**
 * Model turns until the model answers without calling a tool (complete), a write waits for
 * approval (awaiting_approval), or MAX_MODEL_TURNS were used (complete, with a note). Emits the
 * run's events as they happen, `done` last. Errors of runAi (402, 501, 502, aborted) propagate.
 */
export async function continueRun(run: Run): Promise<RunStatusT> {
  const { deps, ctx, ai, session, io } = run;
  const db = deps.database.db;
  const specs = run.tools.map(specOf);
  const system = await systemPrompt(deps, ctx, run.userId);
  let wrote = false;
  const say = (text: string) => {
    if (text === '') return;
    if (wrote) io.emit({ event: 'text', data: { text: '\n\n' } });
    wrote = true;
    io.emit({ event: 'text', data: { text } });
  };
  for (let turn = 0; turn < MAX_MODEL_TURNS; turn++) {
    await renewRun(db, session.workspace_id, session.id, run.runId);
    let { turns, steps } = await loadTranscript(db, session, HISTORY_TURNS);
    // A long chain of decisions can push the person's last message out of the window: read it all.
    if (!turns.some((t) => t.role === 'user')) ({ turns, steps } = await loadTranscript(db, session));
    let streamed = false;
    const onDelta = io.streaming
      ? (piece: string) => {
          if (piece === '') return;
          if (!streamed && wrote) io.emit({ event: 'text', data: { text: '\n\n' } });
          streamed = true;
          wrote = true;
          io.emit({ event: 'text', data: { text: piece } });
        }
      : undefined;
    const result = await runAi(
      deps,
      callerOf(ctx),
      {
        feature: 'assistant',
        tier: 'default',
        system,
        messages: historyOf(turns, steps),
        maxTokens: TURN_TOKENS,
        ...(specs.length > 0 ? { tools: specs } : {}),
        ...(onDelta ? { onDelta } : {}),
        signal: io.signal,
      },
      ai,
    );
    if (!streamed) say(result.text);
    const calls: StoredCall[] = result.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    const stored = await addAssistantTurn(db, session, result.text, calls);
    if (calls.length === 0) {
      io.emit({ event: 'done', data: { status: 'complete' } });
      return 'complete';
    }
    let waiting = false;
    for (const [position, call] of calls.entries()) {
      if (waiting) {
        await insertStep(db, {
          turn: stored,
          callId: call.id,
          position,
          tool: call.name,
          label: call.name,
          status: 'error',
          result: RESULTS.notRun,
          isError: true,
          shown: false,
        });
        continue;
      }
      waiting = await runCall(run, stored, position, call, result.model);
    }
    if (waiting) {
      io.emit({ event: 'done', data: { status: 'awaiting_approval' } });
      return 'awaiting_approval';
    }
  }
  const note = `I stopped after ${MAX_MODEL_TURNS} steps without finishing. Tell me how to go on.`;
  await addAssistantTurn(db, session, note, []);
  say(note);
  io.emit({ event: 'done', data: { status: 'complete' } });
  return 'complete';
}

/** The model's arguments, parsed and checked against the tool's schema; or what is wrong with them. */
function argumentsOf(tool: AssistantTool, raw: string): { ok: true; args: unknown } | { ok: false; error: string } {
  let args: unknown;
  try {
    args = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    return { ok: false, error: 'Error: the arguments are not valid JSON.' };
  }
  if (Value.Check(tool.parameters, args)) return { ok: true, args };
  const problems = [...Value.Errors(tool.parameters, args)]
    .slice(0, 5)
    .map((e) => `${e.path === '' ? 'arguments' : `arguments${e.path.replace(/\//g, '.')}`}: ${e.message}`);
  return { ok: false, error: `Error: the arguments do not match the tool's schema (${problems.join('; ')}).` };
}

/** The env a tool runs in: the person's own request context in their workspace. */
export const envOf = (run: Pick<Run, 'deps' | 'ctx' | 'session'>, model: string): ToolEnv => ({
  deps: run.deps,
  ctx: run.ctx,
  sessionId: run.session.id,
  model,
});

/** The message a failed tool gives the model (a ToolError's or a 4xx ApiError's own; anything else is logged). */
export function failureOf(deps: Deps, tool: string, err: unknown): string {
  if (err instanceof ToolError) return `Error: ${err.message}`;
  // The service layer's own refusal (a record gone, a rule): what the API would have answered.
  if (err instanceof ApiError && err.status < 500) return `Error: ${err.detail}`;
  deps.log.error(
    { tool, error: err instanceof Error ? err.message.slice(0, 300) : String(err) },
    'assistant tool failed',
  );
  return RESULTS.failed;
}

/** One call of a model turn as a step. True when it waits for the person's approval. */
async function runCall(run: Run, turn: TurnRow, position: number, call: StoredCall, model: string): Promise<boolean> {
  const { deps, io } = run;
  const db = deps.database.db;
  const tool = run.tools.find((t) => t.name === call.name);
  const checked = tool
    ? argumentsOf(tool, call.arguments)
    : ({ ok: false, error: `Error: there is no tool named ${JSON.stringify(call.name)}.` } as const);
  let label = call.name;
  if (tool && checked.ok) {
    try {
      label = tool.label(checked.args as never);
    } catch {
      label = tool.name;
    }
  }
  let step: StepRow = await insertStep(db, {
    turn,
    callId: call.id,
    position,
    tool: call.name,
    label,
    status: 'running',
  });
  io.emit({ event: 'tool', data: presentStep(step) });
  const end = async (u: Parameters<typeof updateStep>[2]) => {
    step = await updateStep(db, step, u);
    io.emit({ event: 'tool', data: presentStep(step) });
  };
  if (!tool || !checked.ok) {
    const error = checked.ok ? RESULTS.failed : checked.error;
    await end({ status: 'error', summary: error.replace(/^Error: /, ''), result: error, isError: true });
    return false;
  }
  const env = envOf(run, model);
  if (tool.kind === 'read') {
    let out: ToolOutput;
    try {
      out = await tool.run(env, checked.args);
    } catch (err) {
      const error = failureOf(deps, tool.name, err);
      await end({ status: 'error', summary: error.replace(/^Error: /, ''), result: error, isError: true });
      return false;
    }
    await end({ status: 'done', summary: out.summary, refs: out.refs, result: resultText(out.content) });
    return false;
  }
  let prepared: Awaited<ReturnType<typeof tool.prepare>>;
  try {
    prepared = await tool.prepare(env, checked.args);
  } catch (err) {
    const error = failureOf(deps, tool.name, err);
    await end({ status: 'error', summary: error.replace(/^Error: /, ''), result: error, isError: true });
    return false;
  }
  const actionId = newId();
  const action = await insertAction(db, {
    workspaceId: run.session.workspace_id,
    id: actionId,
    sessionId: run.session.id,
    stepId: step.id,
    userId: run.userId,
    signInSessionId: run.signInSessionId,
    tool: tool.name,
    args: checked.args,
    plan: prepared.plan,
    preview: prepared.preview as unknown as Record<string, unknown>,
    expiresAt: new Date(Date.now() + APPROVAL_MINUTES * 60_000),
  });
  await end({ status: 'awaiting_approval', summary: prepared.preview.summary, refs: prepared.refs, actionId });
  const token = approvalToken(deps, {
    workspaceId: action.workspace_id,
    actionId: action.id,
    userId: run.userId,
    signInSessionId: run.signInSessionId,
  });
  io.emit({ event: 'approval', data: presentApproval(action, call.id, token) });
  return true;
}
