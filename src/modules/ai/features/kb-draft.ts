// POST /v1/kb/articles/ai/draft: a help center article drafted from a solved or closed ticket's
// thread (the problem and its resolution, without the customer's personal details), answered
// in the shape of the article create body (title, excerpt, body_html, language) and not saved:
// the agent reviews it and creates it with POST /v1/kb/articles. `ticket_id` is required: an
// article drafted from nothing would be the model's invention, not the team's knowledge.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { ApiError, invalid } from '../../../platform/http/errors.js';
import { LANGUAGES, type Language } from '../../kb/schemas.js';
import { isDone } from '../../tickets/status.js';
import { runAi } from '../run.js';
import { aiAndTicket, callerOf, ticketBlocks } from './context.js';
import { htmlOf, jsonOf, lineOf, stringField } from './output.js';
import { kbDraftSystem } from './prompts.js';
import type { KbDraftAnswer, KbDraftBody } from './schemas.js';
import type { CallIo } from './sse.js';

const ARTICLE_TOKENS = 2_500;
const CODES = LANGUAGES.filter((l) => l !== 'other');

export const KB_DRAFT_SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    excerpt: { type: 'string' },
    body_html: { type: 'string' },
    language: { type: 'string', enum: [...CODES] },
  },
  required: ['title', 'excerpt', 'body_html', 'language'],
  additionalProperties: false,
};

/** The article's language: the code given, or its primary subtag (pt-BR → pt), else `other`. */
function languageOf(value: unknown): Language {
  if (typeof value !== 'string') return 'other';
  const primary = value.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return (CODES as readonly string[]).includes(primary) ? (primary as Language) : 'other';
}

/** The schema's fields of the model's answer, in range; 502 without a title or a body. */
export function readArticle(o: Record<string, unknown>): Static<typeof KbDraftAnswer> {
  const title = lineOf(stringField(o, 'title') ?? '', 200);
  const body = htmlOf(stringField(o, 'body_html') ?? '');
  if (title === '' || body === '') {
    throw new ApiError('ai_unavailable', 'The AI provider sent an article that could not be read.');
  }
  const excerpt = lineOf(stringField(o, 'excerpt') ?? '', 500);
  return { title, excerpt: excerpt === '' ? null : excerpt, body_html: body, language: languageOf(o.language) };
}

export async function draftArticle(
  deps: Deps,
  ctx: RequestContext,
  body: Static<typeof KbDraftBody>,
  io: CallIo,
): Promise<Static<typeof KbDraftAnswer>> {
  const { ai, context: c } = await aiAndTicket(deps, ctx, body.ticket_id, { people: false });
  const { ticket } = c;
  if (!isDone(ticket.status)) throw invalid('body.ticket_id', 'the ticket must be solved or closed');
  const result = await runAi(
    deps,
    callerOf(ctx),
    {
      feature: 'kb_draft',
      tier: 'default',
      system: kbDraftSystem(CODES),
      messages: [
        { role: 'user', content: `${ticketBlocks(c)}\n\nWrite the help center article as the JSON object described.` },
      ],
      maxTokens: ARTICLE_TOKENS,
      json: { name: 'help_center_article', schema: KB_DRAFT_SCHEMA },
      ticketId: ticket.id,
      signal: io.signal,
    },
    ai,
  );
  return readArticle(jsonOf(result.text));
}
