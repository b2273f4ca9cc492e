// The assistant (interface.md "Assistant", "Assistant approval"; gaps.md "Assistant"): the person's
// conversations (GET/POST /v1/assistant/sessions, GET/PATCH/DELETE /v1/assistant/sessions/{id}),
// a message sent with the person's current screen as `context` and the run streamed back
// (`Accept: text/event-stream`: `session`, `text`, `tool`, `approval`, `done`, `error`), a decision
// on an approval with its token (POST /v1/assistant/actions/{id}/decision, streamed the same way),
// and the tips (GET /v1/assistant/tips). The wire shapes are those of
// src/modules/assistant/schemas.ts, through the generated types.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { ApiError, api, errorText, ok } from '../lib/api';
import { AI_BALANCE_EMPTY, readEvents } from './ai';
import type { Body } from './change';
import { keys } from './keys';

// The wire shapes (src/modules/assistant/schemas.ts), from the generated types.

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer R } } };
}
  ? R
  : never;

/** One conversation's transcript and its pending approval. */
export type SessionDetail = Json<'/v1/assistant/sessions/{id}', 'get'>;
export type Session = SessionDetail['session'];
/** One turn: the person's text, or the assistant's text with its steps. */
export type TranscriptMessage = SessionDetail['messages'][number];
/** One tool step (the stream's `tool` event; the JSON answer's and the transcript's `steps`). */
export type Step = TranscriptMessage['steps'][number];
export type StepStatus = Step['status'];
/** A record a step or a preview names: tickets carry their number. */
export type Ref = Step['refs'][number];
/** A write the assistant asks to make: what it would do, and the token the decision sends back. */
export type Approval = NonNullable<SessionDetail['approval']>;
export type Preview = Approval['preview'];
export type Change = Preview['changes'][number];
/** A send's or a decision's answer without the event stream. */
export type RunResult = Json<'/v1/assistant/sessions/{id}/messages', 'post'>;
export type RunStatus = RunResult['status'];
/** The person's current screen, handed to the model as context. */
export type Context = NonNullable<Body<'/v1/assistant/sessions/{id}/messages', 'post'>['context']>;
export type Tip = Json<'/v1/assistant/tips', 'get'>['tips'][number];

const byId = (id: string) => ({ params: { path: { id } } });

export const listSessions = async (): Promise<Session[]> => (await ok(api.GET('/v1/assistant/sessions'))).data;

export const getSession = (id: string): Promise<SessionDetail> => ok(api.GET('/v1/assistant/sessions/{id}', byId(id)));

export const createSession = (): Promise<Session> => ok(api.POST('/v1/assistant/sessions', { body: {} }));

export const renameSession = (id: string, title: string): Promise<Session> =>
  ok(api.PATCH('/v1/assistant/sessions/{id}', { ...byId(id), body: { title } }));

export const deleteSession = async (id: string): Promise<void> => {
  await ok(api.DELETE('/v1/assistant/sessions/{id}', byId(id)));
};

export const listTips = async (): Promise<Tip[]> => (await ok(api.GET('/v1/assistant/tips'))).tips;

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
async function run(
  send: (init: { headers: Record<string, string>; parseAs: 'stream'; signal: AbortSignal }) => Promise<{
    data?: ReadableStream<Uint8Array> | null;
    error?: unknown;
    response: Response;
  }>,
  on: RunHandlers,
  signal: AbortSignal,
): Promise<RunStatus> {
  const { data, error, response } = await send({ headers: { accept: 'text/event-stream' }, parseAs: 'stream', signal });
  if (!response.ok) throw await ApiError.from(response, error);
  const stream = data ?? null;
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
  run(
    (init) => api.POST('/v1/assistant/sessions/{id}/messages', { ...byId(id), body: { text, context }, ...init }),
    on,
    signal,
  );

/** POST /v1/assistant/actions/{id}/decision, streamed: the run continues in the same answer. */
export const decide = (
  actionId: string,
  decision: 'approve' | 'deny',
  token: string,
  on: RunHandlers,
  signal: AbortSignal,
) =>
  run(
    (init) =>
      api.POST('/v1/assistant/actions/{id}/decision', { ...byId(actionId), body: { decision, token }, ...init }),
    on,
    signal,
  );

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
