// AI for agents (interface.md "AI"; docs/app.md "AI"): the workspace's AI configuration and
// settings, its own provider key, and the features the ticket page and the knowledge base offer:
// a drafted reply and an answer about the ticket (streamed: `Accept: text/event-stream`, `delta`
// events read with fetch and a reader, then one `done` with the JSON the plain request answers), a
// rewrite and a translation (replaced at once: one change in the editor), the stored summary, an
// article drafted from a ticket. Every call can be stopped (its AbortSignal):
// a screen that goes away, or Escape, aborts the request, which stops the provider's call.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { paths } from '../api.gen';
import { ApiError, api, errorText, type Message, ok, type Ticket } from '../lib/api';
import type { Body } from './change';
import { keys } from './keys';

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer R } } };
}
  ? R
  : never;

export type AiConfig = Json<'/v1/ai/config', 'get'>;
export type AiSettings = Json<'/v1/ai/settings', 'get'>;
export type AiOwnKey = NonNullable<AiConfig['own_key']>;
export type AiModels = Json<'/v1/ai/models', 'get'>;
export type AiModel = AiModels['data'][number];
export type AiSettingsPatch = Body<'/v1/ai/settings', 'patch'>;
export type AiKeyBody = Body<'/v1/ai/key', 'put'>;
export type Draft = Json<'/v1/tickets/{id}/ai/draft', 'post'>;
export type Answer = Json<'/v1/tickets/{id}/ai/ask', 'post'>;
export type Summary = Json<'/v1/tickets/{id}/ai/summary', 'post'>;
export type Translation = Json<'/v1/ai/translate', 'post'>;
export type ArticleDraft = Json<'/v1/kb/articles/ai/draft', 'post'>;
export type Source = Draft['sources'][number];
export type RewriteMode = Body<'/v1/ai/rewrite', 'post'>['mode'];

/** The six rewrite modes, in the order the menu offers them. */
export const REWRITE_MODES: Array<[RewriteMode, string]> = [
  ['friendlier', 'Friendlier'],
  ['more_formal', 'More formal'],
  ['shorter', 'Shorter'],
  ['longer', 'Longer'],
  ['fix_grammar', 'Fix spelling and grammar'],
  ['simplify', 'Simpler words'],
];

/** 402 ai_balance_empty in words; the screens that know the role say who buys more (AiErrorText). */
export const AI_BALANCE_EMPTY =
  'Your workspace is out of AI credit — an owner or admin can buy more in Settings → Billing.';

/**
 * An AI failure in words: the provider away (502 ai_unavailable), the balance used up (402
 * ai_balance_empty), AI turned off meanwhile (404 ai_disabled); else the API's own words.
 */
export function aiErrorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'ai_unavailable')
      return 'The AI provider did not answer. Nothing was charged; try again in a moment.';
    if (err.code === 'ai_balance_empty') return AI_BALANCE_EMPTY;
    if (err.code === 'ai_disabled') return 'AI is turned off in this workspace.';
  }
  return errorText(err);
}

/** A request the person stopped (Escape, Stop, leaving the page): nothing to report. */
export const isStopped = (err: unknown): boolean => err instanceof DOMException && err.name === 'AbortError';

// Configuration and settings

/** GET /v1/ai/config (any member). `enabled` false: no provider, or AI turned off in the workspace. */
export const useAiConfig = (ws: string, enabled = true) =>
  useQuery({
    queryKey: keys.aiConfig(ws),
    queryFn: () => ok(api.GET('/v1/ai/config')),
    enabled: enabled && ws !== '',
    staleTime: 60_000,
  });

/** Whether the agents' AI actions are offered: hidden (never disabled) while this is false. */
export function useAiOn(ws: string, enabled = true): boolean {
  return useAiConfig(ws, enabled).data?.enabled === true;
}

/** The models the workspace may choose from, with their typical cost (GET /v1/ai/models). */
export const useAiModels = (ws: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.aiModels(ws),
    queryFn: () => ok(api.GET('/v1/ai/models')),
    enabled,
    retry: false,
  });

/**
 * The stored choices (models as chosen, "" for the server's default; the widget's cap), which GET
 * /v1/ai/config does not show: GET /v1/ai/settings.
 */
export const useAiSettings = (ws: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.aiSettings(ws),
    queryFn: () => ok(api.GET('/v1/ai/settings')),
    enabled,
    retry: false,
  });

/** The workspace's AI configuration and models asked again after a change. */
function useAiRefresh(ws: string) {
  const qc = useQueryClient();
  return () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: keys.aiConfig(ws) }),
      qc.invalidateQueries({ queryKey: keys.aiModels(ws) }),
      qc.invalidateQueries({ queryKey: keys.aiSettings(ws) }),
    ]);
}

/** PATCH /v1/ai/settings (admins): any subset; a 422 names the field (`body.tone`). */
export function useSaveAiSettings(ws: string) {
  const refresh = useAiRefresh(ws);
  return useMutation({
    mutationFn: (body: AiSettingsPatch) => ok(api.PATCH('/v1/ai/settings', { body })),
    onSuccess: () => refresh(),
  });
}

/** PUT /v1/ai/key: the workspace's own provider key (set or replaced); only its last 4 come back. */
export function useSetAiKey(ws: string) {
  const refresh = useAiRefresh(ws);
  return useMutation({
    mutationFn: (body: AiKeyBody) => ok(api.PUT('/v1/ai/key', { body })),
    onSuccess: () => refresh(),
  });
}

/** DELETE /v1/ai/key: back to the server's provider (or none). */
export function useRemoveAiKey(ws: string) {
  const refresh = useAiRefresh(ws);
  return useMutation({
    mutationFn: () => ok(api.DELETE('/v1/ai/key')),
    onSuccess: () => refresh(),
  });
}

// Streaming (rule 7)

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: string;
}

/** The events of an event stream as they arrive (`event:` and `data:` lines, a blank line ends one). */
export async function readEvents(body: ReadableStream<Uint8Array>, on: (e: SseEvent) => void): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>).getReader();
  let buffer = '';
  const dispatch = (block: string) => {
    let event = 'message';
    const data: string[] = [];
    for (const raw of block.split('\n')) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) on({ event, data: data.join('\n') });
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let end = buffer.search(/\r?\n\r?\n/); end !== -1; end = buffer.search(/\r?\n\r?\n/)) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      dispatch(block);
    }
  }
  if (buffer.trim()) dispatch(buffer);
}

/**
 * A streamed AI request: each `delta` event's text goes to `onDelta` as it arrives; resolves with
 * the `done` event's JSON (the non-streaming answer). An `error` event, or an answer that is not a
 * stream (an error status), becomes an ApiError. `signal` stops it (AbortError).
 */
async function stream<T>(
  send: (init: { headers: Record<string, string>; parseAs: 'stream'; signal: AbortSignal }) => Promise<{
    data?: ReadableStream<Uint8Array> | null;
    error?: unknown;
    response: Response;
  }>,
  onDelta: (text: string) => void,
  signal: AbortSignal,
): Promise<T> {
  const { data, error, response } = await send({ headers: { accept: 'text/event-stream' }, parseAs: 'stream', signal });
  if (!response.ok) throw await ApiError.from(response, error);
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream') || !data) {
    // The server answered JSON after all (it streams only when it can): the whole answer at once.
    const whole = (await new Response(data).json()) as T;
    return whole;
  }
  let done: { value: T } | null = null;
  let failed: ApiError | null = null;
  await readEvents(data, (e) => {
    if (e.event === 'delta') onDelta(e.data);
    else if (e.event === 'done') done = { value: JSON.parse(e.data) as T };
    else if (e.event === 'error') {
      const b = JSON.parse(e.data) as { status?: number; code?: string; detail?: string };
      failed = new ApiError(b.status ?? 502, b.code ?? 'ai_unavailable', b.detail ?? 'The AI request failed.');
    }
  });
  if (failed) throw failed;
  if (!done) throw new ApiError(502, 'ai_unavailable', 'The answer stopped before it was complete. Try again.');
  return (done as { value: T }).value;
}

/**
 * What a screen needs of a request it may stop: `begin()` stops the one before and gives the new
 * one's signal; `stop()` aborts it (Stop). Escape stops it too, before the page's own Escape (which
 * would leave the ticket) sees the key; leaving the screen stops it.
 */
export function useStoppable() {
  const current = useRef<AbortController | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => () => current.current?.abort(), []);
  const stop = useCallback(() => {
    current.current?.abort();
    current.current = null;
    setBusy(false);
  }, []);
  useEffect(() => {
    if (!busy) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      stop();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [busy, stop]);
  return {
    busy,
    begin(): AbortSignal {
      current.current?.abort();
      const c = new AbortController();
      current.current = c;
      setBusy(true);
      return c.signal;
    },
    /** The request of `signal` ended: not busy any more (unless a newer one began). */
    end(signal: AbortSignal): void {
      if (current.current?.signal === signal) {
        current.current = null;
        setBusy(false);
      }
    },
    stop,
  };
}

// The features

const ticketPath = (id: string) => ({ params: { path: { id } } });

/** A reply drafted for the ticket, streamed (POST /v1/tickets/{id}/ai/draft). */
export const draftReply = (ticketId: string, onDelta: (t: string) => void, signal: AbortSignal) =>
  stream<Draft>(
    (init) => api.POST('/v1/tickets/{id}/ai/draft', { ...ticketPath(ticketId), body: {}, ...init }),
    onDelta,
    signal,
  );

/** An answer to a question about the ticket, streamed (POST /v1/tickets/{id}/ai/ask). */
export const askAboutTicket = (ticketId: string, question: string, onDelta: (t: string) => void, signal: AbortSignal) =>
  stream<Answer>(
    (init) => api.POST('/v1/tickets/{id}/ai/ask', { ...ticketPath(ticketId), body: { question }, ...init }),
    onDelta,
    signal,
  );

/** `html` rewritten in one of the six modes (POST /v1/ai/rewrite). */
export const rewrite = async (html: string, mode: RewriteMode, signal: AbortSignal): Promise<string> => {
  const answer = await ok(api.POST('/v1/ai/rewrite', { body: { html, mode }, signal }));
  return answer.html;
};

/** `html` in the language `target` (a BCP 47 tag), and the language it was in (POST /v1/ai/translate). */
export const translate = (html: string, target: string, signal: AbortSignal): Promise<Translation> =>
  ok(api.POST('/v1/ai/translate', { body: { html, target }, signal }));

/**
 * A customer's message in the agent's language, asked when the agent wants it (`enabled`) and kept
 * while the page is open, so that the original and the translation are one click apart.
 */
export const useMessageTranslation = (ws: string, messageId: string, html: string, target: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.aiTranslation(ws, messageId, target),
    queryFn: ({ signal }) => translate(html, target, signal),
    enabled,
    staleTime: Number.POSITIVE_INFINITY,
    retry: false,
    refetchOnWindowFocus: false,
  });

/** The stored summary of a ticket (custom.ai_summary), or null. */
export function storedSummary(t: Ticket): Summary | null {
  const s = (t.custom as Record<string, unknown> | null | undefined)?.ai_summary as Summary | undefined;
  return s && typeof s.summary === 'string' ? s : null;
}

/**
 * Summarize the ticket again (POST /v1/tickets/{id}/ai/summary): the answer goes into the ticket's
 * cached custom.ai_summary at once; the ticket.updated event brings the same to everyone.
 */
export function useSummarize(ws: string, ticket: Ticket) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (signal: AbortSignal) =>
      ok(api.POST('/v1/tickets/{id}/ai/summary', { ...ticketPath(ticket.id), signal })),
    onSuccess: (summary) =>
      qc.setQueryData<Ticket>(keys.ticket(ws, ticket.number), (old) =>
        old ? { ...old, custom: { ...(old.custom ?? {}), ai_summary: summary } } : old,
      ),
  });
}

/**
 * An article drafted from a solved or closed ticket (POST /v1/kb/articles/ai/draft): not saved.
 * Asked once per ticket while the editor is open (leaving the page stops it).
 */
export const useArticleDraft = (ws: string, ticketId: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.aiArticleDraft(ws, ticketId),
    queryFn: ({ signal }) => ok(api.POST('/v1/kb/articles/ai/draft', { body: { ticket_id: ticketId }, signal })),
    enabled,
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 10 * 60_000,
    retry: false,
    refetchOnWindowFocus: false,
  });

// Languages

/** The languages offered to translate into when the customer's is not known (BCP 47 tags). */
export const LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'sv', 'da', 'pl', 'tr', 'ja', 'zh', 'ar'];

const names = (() => {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' });
  } catch {
    return null;
  }
})();

/** A BCP 47 tag's name in English ("fr" → "French"), or the tag. */
export function languageName(tag: string): string {
  try {
    return names?.of(tag) ?? tag;
  } catch {
    return tag;
  }
}

/** The ticket's customer's language (custom.language, set by triage or an agent), or null. */
export function customerLanguage(t: Ticket): string | null {
  const l = (t.custom as Record<string, unknown> | null | undefined)?.language;
  return typeof l === 'string' && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(l) ? l : null;
}

/** The language the agent reads: the browser's. */
export const agentLanguage = (): string => globalThis.navigator?.language || 'en';

/** Whether two BCP 47 tags name the same language ("en-GB" and "en"). */
export const sameLanguage = (a: string, b: string): boolean =>
  a.split('-')[0]!.toLowerCase() === b.split('-')[0]!.toLowerCase();

// AI answers in the chat (issue 35 item 5)

/** A message the AI wrote (author type `ai`: an answer to a chat visitor from published articles). */
export const isAiAnswer = (m: Message): boolean => (m.author.type as string) === 'ai';

/**
 * The name an AI answer is shown with: its sender name as stored, else the workspace's assistant
 * (GET /v1/ai/config `assistant_name`).
 */
export function useAiAuthorName(ws: string, m: Message): string {
  const config = useAiConfig(ws, isAiAnswer(m));
  return m.from_name || config.data?.assistant_name || 'AI assistant';
}
