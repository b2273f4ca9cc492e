// POST /v1/tickets/{id}/ai/draft: a reply to the customer's latest message, from the ticket's
// thread, the customer and their company, the workspace's tone, reply language and instructions
// (the body's tone and instructions on top), and the workspace's published articles the search
// finds. Nothing is sent or saved: the agent reviews the draft in the composer.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { runAi } from '../run.js';
import { storedFeatures } from '../settings.js';
import { aiAndTicket, callerOf, ticketBlocks } from './context.js';
import { replyOf } from './output.js';
import { draftSystem } from './prompts.js';
import type { DraftAnswer, DraftBody } from './schemas.js';
import { citedSources, findSources, sourceBlocks } from './sources.js';
import type { CallIo } from './sse.js';

/** Upper bound of a draft's tokens. */
const DRAFT_TOKENS = 1_500;

export async function draftReply(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  body: Static<typeof DraftBody>,
  io: CallIo,
): Promise<Static<typeof DraftAnswer>> {
  const { ai, context: c } = await aiAndTicket(deps, ctx, param, { people: true });
  const { ticket } = c;
  const settings = storedFeatures(ai.row);
  const { articles, helpCenterOn } = await findSources(deps, ctx, [ticket.subject, c.lastCustomerText]);
  const tone = body.tone?.trim() ? body.tone : settings.tone;
  const system = draftSystem({
    tone,
    replyLanguage: settings.reply_language,
    instructions: settings.instructions,
    extra: body.instructions ?? '',
  });
  const user = [
    ticketBlocks(c),
    sourceBlocks(articles, helpCenterOn),
    "Write the agent's reply to the customer's latest message.",
  ].join('\n\n');
  const result = await runAi(
    deps,
    callerOf(ctx),
    {
      feature: 'draft_reply',
      tier: 'default',
      system,
      messages: [{ role: 'user', content: user }],
      maxTokens: DRAFT_TOKENS,
      ticketId: ticket.id,
      ...io,
    },
    ai,
  );
  const cited = citedSources(result.text, articles);
  const reply = replyOf(cited.text);
  return { body_html: reply.html, body_text: reply.text, sources: cited.sources };
}
