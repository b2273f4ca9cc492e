// The assistant (interface.md "Assistant", "Assistant approval"; gaps.md "Assistant"): the person's
// conversations (GET/POST /v1/assistant/sessions, GET/PATCH/DELETE /v1/assistant/sessions/{id}),
// a message sent with the person's current screen as `context` and the run streamed back
// (`Accept: text/event-stream`: `session`, `text`, `tool`, `approval`, `done`, `error`), a decision
// on an approval with its token (POST /v1/assistant/actions/{id}/decision, streamed the same way),
// and the tips (GET /v1/assistant/tips). The wire shapes are those of
// src/modules/assistant/schemas.ts, written out here by hand.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, errorText, ok } from '../lib/api';
import { AI_BALANCE_EMPTY, readEvents } from './ai';
import { keys } from './keys';

// The wire shapes (src/modules/assistant/schemas.ts)

export type RefKind = 'ticket' | 'contact' | 'article' | 'view' | 'automation';

/** A record a step or a preview names: tickets carry their number. */
export interface Ref {
  kind: RefKind;
  id: string;
  label: string;
  number?: number;
}

export type StepStatus = 'running' | 'done' | 'error' | 'awaiting_approval' | 'approved' | 'denied' | 'expired';

/** One tool step (the stream's `tool` event; the JSON answer's and the transcript's `steps`). */
export interface Step {
  id: string;
  tool: string;
  label: string;
  status: StepStatus;
  summary?: string;
  refs: Ref[];
  action_id: string | null;
}

export interface Change {
  field: string;
  from: unknown;
  to: unknown;
}

export interface Preview {
  title: string;
  summary: string;
  changes: Change[];
  targets: Ref[];
  external: boolean;
  body?: string;
  total?: number;
}

/** A write the assistant asks to make: what it would do, and the token the decision sends back. */
export interface Approval {
  action_id: string;
  call_id: string;
  tool: string;
  preview: Preview;
  token: string;
  expires_at: string;
}

export interface Session {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  running: boolean;
}

export interface TranscriptMessage {
  id: string;
  role: 'user' | 'assistant';
  text: string;
  steps: Step[];
  created_at: string;
}

export interface SessionDetail {
  session: Session;
  messages: TranscriptMessage[];
  approval: Approval | null;
}

/** The person's current screen, handed to the model as context. */
export interface Context {
  path?: string;
  page?: string;
  folder?: string;
  view_id?: string;
  ticket_id?: string;
  filters?: Record<string, unknown>;
}

export type RunStatus = 'complete' | 'awaiting_approval';

export interface RunResult {
  session: Session;
  text: string;
  steps: Step[];
  approval: Approval | null;
  status: RunStatus;
}

export type TipKey = 'sla_breached' | 'sla_due_soon' | 'sla_at_risk' | 'unassigned_old' | 'mine_waiting';

export interface Tip {
  key: TipKey;
  text: string;
  prompt: string;
  severity: 'info' | 'warning' | 'critical';
  count: number;
}

// The calls. The routes are not in the generated types yet (web/src/api.gen.d.ts follows the API
// document): the same client, with the paths written out.

type Call = (
  path: string,
  init?: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
const raw = api as unknown as { GET: Call; POST: Call; PATCH: Call; DELETE: Call };

const sessionPath = (id: string) => `/v1/assistant/sessions/${encodeURIComponent(id)}`;

export const listSessions = async (): Promise<Session[]> =>
  ((await ok(raw.GET('/v1/assistant/sessions'))) as { data: Session[] }).data;

export const getSession = async (id: string): Promise<SessionDetail> =>
  (await ok(raw.GET(sessionPath(id)))) as SessionDetail;

export const createSession = async (): Promise<Session> =>
  (await ok(raw.POST('/v1/assistant/sessions', { body: {} }))) as Session;

export const renameSession = async (id: string, title: string): Promise<Session> =>
  (await ok(raw.PATCH(sessionPath(id), { body: { title } }))) as Session;

export const deleteSession = async (id: string): Promise<void> => {
  await ok(raw.DELETE(sessionPath(id)));
};

export const listTips = async (): Promise<Tip[]> => ((await ok(raw.GET('/v1/assistant/tips'))) as { tips: Tip[] }).tips;

/** What a run tells the panel as it goes. */
export interface RunHandlers {
  session(s: Session): void;
  text(piece: string): void;
  step(s: Step): void;
  approval(a: Approval): void;
}

const parse = (data: string): unknown => {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
};

/**
 * A run (a message sent, or a decision): its events go to `on` as they arrive; resolves with the
 * `done` event's status. An `error` event, or an answer that is not a stream, becomes an ApiError
 * (a JSON answer is played through `on` as if streamed). `signal` stops reading.
 */
async function run(path: string, body: object, on: RunHandlers, signal: AbortSignal): Promise<RunStatus> {
  const { data, error, response } = await raw.POST(path, {
    body,
    headers: { accept: 'text/event-stream' },
    parseAs: 'stream',
    signal,
  });
  if (!response.ok) throw await ApiError.from(response, error);
  const stream = data as ReadableStream<Uint8Array> | null;
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream') || !stream) {
    const whole = (await new Response(stream).json()) as RunResult;
    on.session(whole.session);
    if (whole.text) on.text(whole.text);
    for (const s of whole.steps) on.step(s);
    if (whole.approval) on.approval(whole.approval);
    return whole.status;
  }
  let status: RunStatus | null = null;
  let failed: ApiError | null = null;
  await readEvents(stream, (e) => {
    const d = parse(e.data);
    if (e.event === 'session') on.session(d as Session);
    else if (e.event === 'text') on.text(typeof d === 'string' ? d : ((d as { text?: string }).text ?? ''));
    else if (e.event === 'tool') on.step(d as Step);
    else if (e.event === 'approval') on.approval(d as Approval);
    else if (e.event === 'done') status = (d as { status?: RunStatus }).status ?? 'complete';
    else if (e.event === 'error') {
      const b = (typeof d === 'object' && d ? d : {}) as { status?: number; code?: string; detail?: string };
      failed = new ApiError(b.status ?? 502, b.code ?? 'ai_unavailable', b.detail ?? 'The assistant failed.');
    }
  });
  if (failed) throw failed;
  if (!status) throw new ApiError(502, 'ai_unavailable', 'The answer stopped before it was complete. Try again.');
  return status;
}

/** POST /v1/assistant/sessions/{id}/messages, streamed. */
export const sendMessage = (id: string, text: string, context: Context, on: RunHandlers, signal: AbortSignal) =>
  run(`${sessionPath(id)}/messages`, { text, context }, on, signal);

/** POST /v1/assistant/actions/{id}/decision, streamed: the run continues in the same answer. */
export const decide = (
  actionId: string,
  decision: 'approve' | 'deny',
  token: string,
  on: RunHandlers,
  signal: AbortSignal,
) => run(`/v1/assistant/actions/${encodeURIComponent(actionId)}/decision`, { decision, token }, on, signal);

// Queries

/** The person's conversations, newest first. */
export const useAssistantSessions = (ws: string, enabled: boolean) =>
  useQuery({ queryKey: keys.assistantSessions(ws), queryFn: listSessions, enabled, retry: false });

/** One conversation's transcript and its pending approval. */
export const useAssistantSession = (ws: string, id: string | null) =>
  useQuery({
    queryKey: keys.assistantSession(ws, id ?? ''),
    queryFn: () => getSession(id!),
    enabled: id !== null,
    retry: false,
  });

/** The tips, asked again each time the panel opens (counts change). */
export const useAssistantTips = (ws: string, enabled: boolean) =>
  useQuery({ queryKey: keys.assistantTips(ws), queryFn: listTips, enabled, retry: false, staleTime: 0 });

export function useRenameSession(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, title }: { id: string; title: string }) => renameSession(id, title),
    onSuccess: (s) => {
      qc.setQueryData<Session[]>(keys.assistantSessions(ws), (l) => l?.map((x) => (x.id === s.id ? s : x)));
      qc.setQueryData<SessionDetail>(keys.assistantSession(ws, s.id), (d) => (d ? { ...d, session: s } : d));
    },
  });
}

export function useDeleteSession(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteSession(id),
    onSuccess: (_, id) => {
      qc.setQueryData<Session[]>(keys.assistantSessions(ws), (l) => l?.filter((x) => x.id !== id));
      qc.removeQueries({ queryKey: keys.assistantSession(ws, id) });
    },
  });
}

// Failures in words

/** The assistant is off (403 assistant_off, or AI off meanwhile: 404 ai_disabled). */
export const isAssistantOff = (err: unknown): boolean =>
  err instanceof ApiError && (err.code === 'assistant_off' || err.code === 'ai_disabled');

/** A failure of the assistant in words a person can act on (the off state has a notice of its own). */
export function assistantErrorText(err: unknown, name: string): string {
  if (err instanceof ApiError) {
    switch (err.code) {
      case 'ai_balance_empty':
        return AI_BALANCE_EMPTY;
      case 'assistant_busy':
        return `${name} is still working on this conversation. Wait for it to finish, then send again.`;
      case 'ai_unsupported':
        return `The AI model this workspace uses cannot work with tools, so ${name} cannot run on it. An owner or admin can choose another model or provider in Settings → AI.`;
      case 'approval_not_pending':
        return 'This change was already decided, or it expired. Nothing more was done.';
      case 'approval_invalid':
        return 'This approval is not valid any more (it belongs to another sign-in, or was replaced). Ask again.';
      case 'ai_unavailable':
        return 'The AI provider did not answer. Try again in a moment.';
      case 'assistant_off':
      case 'ai_disabled':
        return `${name} is turned off in this workspace.`;
    }
  }
  return errorText(err);
}
