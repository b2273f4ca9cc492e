// POST /v1/tickets/{id}/ai/ask: an answer to an agent's question about a ticket, from its thread,
// the customer and their company, and the workspace's published articles found by the question
// and the subject. For the agent: nothing is sent or saved.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { runAi } from '../run.js';
import { aiAndTicket, callerOf, ticketBlocks } from './context.js';
import { replyOf } from './output.js';
import { askSystem, neutralize } from './prompts.js';
import type { AskAnswer, AskBody } from './schemas.js';
import { citedSources, findSources, sourceBlocks } from './sources.js';
import type { CallIo } from './sse.js';

const ANSWER_TOKENS = 1_000;

export async function askAboutTicket(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  body: Static<typeof AskBody>,
  io: CallIo,
): Promise<Static<typeof AskAnswer>> {
  const { ai, context: c } = await aiAndTicket(deps, ctx, param, { people: true });
  const { ticket } = c;
  const { articles, helpCenterOn } = await findSources(deps, ctx, [body.question, ticket.subject]);
  // The question is the agent's (staff) text, after every data block, its delimiters neutralised.
  const user = [
    ticketBlocks(c),
    sourceBlocks(articles, helpCenterOn),
    `The agent's question:\n${neutralize(body.question)}`,
  ].join('\n\n');
  const result = await runAi(
    deps,
    callerOf(ctx),
    {
      feature: 'copilot',
      tier: 'default',
      system: askSystem(),
      messages: [{ role: 'user', content: user }],
      maxTokens: ANSWER_TOKENS,
      ticketId: ticket.id,
      ...io,
    },
    ai,
  );
  const cited = citedSources(result.text, articles);
  return { answer_html: replyOf(cited.text).html, sources: cited.sources };
}
