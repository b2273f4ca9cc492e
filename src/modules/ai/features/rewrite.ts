// POST /v1/ai/rewrite: a text an agent is writing, rewritten in one of the six modes, its HTML
// markup kept. The text goes to the model as a data block (it may quote a customer); the answer
// is sanitized like a message.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import { htmlToText, sanitizeHtml } from '../../../platform/html/index.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { invalid } from '../../../platform/http/errors.js';
import { runAi } from '../run.js';
import { requireAi } from '../service.js';
import { callerOf } from './context.js';
import { htmlOf } from './output.js';
import { dataBlock, rewriteSystem } from './prompts.js';
import type { RewriteAnswer, RewriteBody } from './schemas.js';
import type { CallIo } from './sse.js';

/** The most tokens an answer may take (interface.md Limits: estimates count up to 4,000). */
export const MAX_ANSWER_TOKENS = 4_000;

/** HTML sent to be rewritten or translated, sanitized; 422 at `location` when nothing is left. */
export function cleanInput(html: string, location: string): string {
  const clean = sanitizeHtml(html);
  if (htmlToText(clean).trim() === '') throw invalid(location, 'is empty once unsafe content is removed');
  return clean;
}

/** Room for an answer as long as the input (about 3 characters a token of HTML), times `factor`. */
export const answerTokens = (input: string, factor = 1): number =>
  Math.min(MAX_ANSWER_TOKENS, Math.ceil((input.length / 3) * factor) + 256);

export async function rewriteText(
  deps: Deps,
  ctx: RequestContext,
  body: Static<typeof RewriteBody>,
  io: CallIo,
): Promise<Static<typeof RewriteAnswer>> {
  const html = cleanInput(body.html, 'body.html');
  const ai = await requireAi(deps, ctx.workspaceId);
  const result = await runAi(
    deps,
    callerOf(ctx),
    {
      feature: 'rewrite',
      tier: 'fast',
      system: rewriteSystem(body.mode),
      messages: [
        {
          role: 'user',
          content: `${dataBlock('customer_data', { kind: 'text' }, html)}\n\nRewrite the text above (mode: ${body.mode}).`,
        },
      ],
      maxTokens: answerTokens(html, body.mode === 'longer' ? 2 : 1.2),
      ...io,
    },
    ai,
  );
  return { html: htmlOf(result.text) };
}
