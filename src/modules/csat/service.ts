// Customer satisfaction. A solved ticket's customer rates it from a link (/csat/{token}): the token
// is signed, bound to the ticket and its workspace, and valid for 30 days. The rating is stored as
// the ticket's `csat` (score 1 to 5, an optional comment); rating again within 7 days of the first
// rating replaces it, later it is refused (409), so a rating reflects the request it was asked for.
// Each rating adds a csat_received activity and ticket.updated (changes: csat); the reports' CSAT
// figures read the stored score.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { type Actor, SYSTEM_ACTOR } from '../../platform/http/context.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';
import { addActivity } from '../tickets/activities.js';
import { emitUpdated } from '../tickets/patch.js';
import { reload, ticketQuery } from '../tickets/queries.js';
import type { CsatRating, RateBody } from './schemas.js';

export type CsatRatingView = Static<typeof CsatRating>;

const REPLACE_MS = 7 * 24 * 3600 * 1000;
/** The scale of a rating (interface.md: score 1 to 5). */
export const CSAT_SCALE = { min: 1, max: 5 } as const;
export const COMMENT_MAX = 2000;
const NOT_FOUND = 'This rating link is not valid (it may have expired).';

/** What tickets.csat holds (the API shows score and comment). */
interface StoredCsat {
  score: number;
  comment: string | null;
  rated_at: string;
  first_rated_at: string;
}

/** The rating link's token for a ticket (valid 30 days: TOKEN_TTL_SECONDS.csat). */
export async function csatToken(deps: Deps, workspaceId: string, ticketId: string): Promise<string> {
  const { token } = await deps.tokens.sign({ purpose: 'csat', sub: ticketId, wid: workspaceId });
  return token;
}

/** The rating page's address for a token. */
export const csatUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/csat/${token}`;

/** The ticket a token names: tampered, expired, of another purpose, or a deleted ticket: 404. */
async function ticketOfToken(deps: Deps, token: string): Promise<{ workspaceId: string; ticketId: string }> {
  const claims = await deps.tokens.verify(token, 'csat');
  if (!claims || typeof claims.wid !== 'string') throw notFound(NOT_FOUND);
  return { workspaceId: claims.wid, ticketId: claims.sub };
}

const stored = (csat: unknown): StoredCsat | null =>
  csat !== null && typeof csat === 'object' && typeof (csat as StoredCsat).score === 'number'
    ? (csat as StoredCsat)
    : null;

async function ratingRow(deps: Deps, workspaceId: string, ticketId: string) {
  return deps.database.db
    .selectFrom('tickets as t')
    .innerJoin('workspaces as w', 'w.id', 't.workspace_id')
    .select(['t.number', 't.subject', 't.csat', 't.deleted_at', 'w.name as workspace'])
    .where('t.workspace_id', '=', workspaceId)
    .where('t.id', '=', ticketId)
    .executeTakeFirst();
}

/** GET /v1/csat/{token}: the ticket's number and subject, and its rating so far. */
export async function getRating(deps: Deps, token: string): Promise<CsatRatingView> {
  return (await ratingOf(deps, token)).rating;
}

/** The rating so far and the workspace's name (the rating page shows it). */
export async function ratingOf(deps: Deps, token: string): Promise<{ rating: CsatRatingView; workspace: string }> {
  const { workspaceId, ticketId } = await ticketOfToken(deps, token);
  const row = await ratingRow(deps, workspaceId, ticketId);
  if (!row || row.deleted_at !== null) throw notFound(NOT_FOUND);
  const csat = stored(row.csat);
  const rating = {
    number: Number(row.number),
    subject: row.subject,
    score: csat?.score ?? null,
    comment: csat?.comment ?? null,
  };
  return { rating, workspace: row.workspace };
}

/** POST /v1/csat/{token}: stores the rating (or replaces it within 7 days of the first). */
export async function rate(deps: Deps, token: string, input: Static<typeof RateBody>): Promise<CsatRatingView> {
  const { workspaceId, ticketId } = await ticketOfToken(deps, token);
  // Checked here, not only by the callers' schemas and forms, so that no caller can store a score
  // off the scale (the rating page's form once let any digit through).
  if (!Number.isInteger(input.score) || input.score < CSAT_SCALE.min || input.score > CSAT_SCALE.max) {
    throw invalid('body.score', `must be a whole number from ${CSAT_SCALE.min} to ${CSAT_SCALE.max}`);
  }
  // Counted in characters (code points), as the API's schema counts them.
  if (typeof input.comment === 'string' && [...input.comment].length > COMMENT_MAX) {
    throw invalid('body.comment', `must be at most ${COMMENT_MAX} characters`);
  }
  return deps.writer.run(workspaceId, async (u) => {
    const ticket = await ticketQuery(u.trx, workspaceId)
      .select(['t.csat', 't.contact_id'])
      .where('t.id', '=', ticketId)
      .forUpdate('t')
      .executeTakeFirst();
    if (!ticket || ticket.deleted_at !== null) throw notFound(NOT_FOUND);
    const before = stored(ticket.csat);
    const now = new Date();
    if (before && now.getTime() - Date.parse(before.first_rated_at) > REPLACE_MS) {
      throw conflict('This ticket was rated more than 7 days ago; the rating can no longer be changed.');
    }
    const comment = input.comment?.trim() || null;
    const csat: StoredCsat = {
      score: input.score,
      comment,
      rated_at: now.toISOString(),
      first_rated_at: before?.first_rated_at ?? now.toISOString(),
    };
    await u.trx
      .updateTable('tickets')
      .set({ csat: JSON.stringify(csat), updated_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', ticketId)
      .execute();
    const row = await reload(u, ticketId);
    // The customer rates through a link: recorded as the system with the contact who rated
    // (docs/decisions.md, "Who a customer's message names as its actor").
    const rater: Actor = ticket.contact_id ? { kind: 'customer', contactId: ticket.contact_id } : SYSTEM_ACTOR;
    await addActivity(u, rater, { id: row.id, privateTeamId: row.private_team_id }, 'csat_received', {
      score: input.score,
      ...(comment !== null ? { comment } : {}),
    });
    emitUpdated(u, row, ['csat']);
    return { number: Number(row.number), subject: row.subject, score: csat.score, comment };
  });
}
