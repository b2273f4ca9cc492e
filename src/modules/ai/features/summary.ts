// POST /v1/tickets/{id}/ai/summary: the ticket summarised (summary, key points, the customer's
// sentiment) through the provider's structured output, stored on the ticket in
// custom.ai_summary through the tickets module (applyPatch: one ticket.updated with `custom` in
// its changes, the AI acting for the caller), and answered. The model's JSON is read against the
// schema: only its three fields are kept, each in range; anything else it adds is ignored.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { Unit } from '../../../platform/db/tx.js';
import type { RequestContext, ServiceContext } from '../../../platform/http/context.js';
import { ApiError } from '../../../platform/http/errors.js';
import { applyPatch } from '../../tickets/patch.js';
import type { TicketRow } from '../../tickets/queries.js';
import { lockVisibleTicket } from '../../tickets/service.js';
import { type AiCaller, runAi } from '../run.js';
import type { ReadyAi } from '../service.js';
import { aiActing, aiAndTicket, callerOf, type TicketContext, ticketBlocks } from './context.js';
import { jsonOf, lineOf, oneOf, plainOf } from './output.js';
import { summarySystem } from './prompts.js';
import { SENTIMENTS, type SummaryAnswer } from './schemas.js';
import type { CallIo } from './sse.js';

export type SummaryView = Static<typeof SummaryAnswer>;

const SUMMARY_TOKENS = 800;
/** Kept of the model's answer: the summary's characters, key points and each one's characters. */
const SUMMARY_CHARS = 1_500;
const KEY_POINTS = 8;
const KEY_POINT_CHARS = 300;

/** The JSON schema the answer must match (strict: every key required, no others). */
export const SUMMARY_SCHEMA = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    key_points: { type: 'array', items: { type: 'string' } },
    sentiment: { type: 'string', enum: [...SENTIMENTS] },
  },
  required: ['summary', 'key_points', 'sentiment'],
  additionalProperties: false,
};

/** The schema's fields of the model's answer, in range; 502 when it holds no summary. */
export function readSummary(o: Record<string, unknown>): Omit<SummaryView, 'updated_at'> {
  const summary = typeof o.summary === 'string' ? plainOf(o.summary).trim() : '';
  if (summary === '') throw new ApiError('ai_unavailable', 'The AI provider sent a summary that could not be read.');
  const points = Array.isArray(o.key_points) ? o.key_points : [];
  return {
    summary: summary.length > SUMMARY_CHARS ? `${summary.slice(0, SUMMARY_CHARS - 1)}…` : summary,
    key_points: points
      .filter((p): p is string => typeof p === 'string')
      .map((p) => lineOf(p, KEY_POINT_CHARS))
      .filter((p) => p !== '')
      .slice(0, KEY_POINTS),
    sentiment: oneOf(o.sentiment, SENTIMENTS),
  };
}

export async function summarizeTicket(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  io: CallIo,
): Promise<SummaryView> {
  const { ai, context } = await aiAndTicket(deps, ctx, param, { people: false });
  return summarizeAndStore(deps, {
    ai,
    context,
    caller: callerOf(ctx),
    acting: (model) => aiActing(ctx, model),
    lock: (u) => lockVisibleTicket(u, ctx, context.ticket.id),
    signal: io.signal,
  });
}

/** Who asks for a summary and how its ticket is locked: the route's caller, or auto_summarize's job. */
export interface SummaryRun {
  ai: ReadyAi;
  context: TicketContext;
  /** Metered to (auto_summarize: no one). */
  caller: AiCaller;
  /** Who the stored summary's ticket.updated names: the AI, acting for the caller or on its own. */
  acting: (model: string) => ServiceContext;
  /** The ticket locked in the unit's transaction; null when it is gone meanwhile (nothing stored). */
  lock: (u: Unit) => Promise<TicketRow | null>;
  signal?: AbortSignal;
}

/** The model's summary of the ticket, stored in custom.ai_summary (one ticket.updated), metered summarize. */
export async function summarizeAndStore(deps: Deps, run: SummaryRun): Promise<SummaryView> {
  const { ticket } = run.context;
  const result = await runAi(
    deps,
    run.caller,
    {
      feature: 'summarize',
      tier: 'fast',
      system: summarySystem(),
      messages: [
        {
          role: 'user',
          content: `${ticketBlocks(run.context)}\n\nSummarise this ticket as the JSON object described.`,
        },
      ],
      maxTokens: SUMMARY_TOKENS,
      json: { name: 'ticket_summary', schema: SUMMARY_SCHEMA },
      ticketId: ticket.id,
      ...(run.signal ? { signal: run.signal } : {}),
    },
    run.ai,
  );
  const summary: SummaryView = { ...readSummary(jsonOf(result.text)), updated_at: new Date().toISOString() };
  await deps.writer.run(run.caller.workspaceId, async (u) => {
    const before = await run.lock(u);
    if (!before) return;
    await applyPatch(deps, u, run.acting(result.model), before, { custom: { ai_summary: summary } });
  });
  return summary;
}
