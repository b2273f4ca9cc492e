// The AI features' request bodies and answers (interface.md "AI"). Bodies are strict objects
// (an unknown field is a 422); answers are allow-lists, so nothing the model adds beyond them
// (an extra JSON key, a field it invented) can leave the server.
import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp } from '../../../platform/http/schemas.js';
import { LANGUAGES } from '../../kb/schemas.js';

/** interface.md rule 2: a tone is one of the three names, or free text up to 200 characters. */
export const TONE_MAX = 200;
export const INSTRUCTIONS_MAX = 2000;
export const QUESTION_MAX = 2000;
/** The longest HTML rewrite and translate take: a message's body (tickets' BodyHtml). */
export const HTML_MAX = 500_000;

export const REWRITE_MODES = ['friendlier', 'more_formal', 'shorter', 'longer', 'fix_grammar', 'simplify'] as const;
export type RewriteMode = (typeof REWRITE_MODES)[number];

export const SENTIMENTS = ['positive', 'neutral', 'negative', 'frustrated'] as const;
export type Sentiment = (typeof SENTIMENTS)[number];

const Tone = Type.String({
  minLength: 1,
  maxLength: TONE_MAX,
  description: 'friendly, professional, concise, or free text up to 200 characters; default: the workspace’s tone.',
});
const Instructions = Type.String({
  maxLength: INSTRUCTIONS_MAX,
  description: 'What this draft should do (up to 2,000 characters), on top of the workspace’s instructions.',
});
const Html = (description: string) => Type.String({ minLength: 1, maxLength: HTML_MAX, description });

export const DraftBody = Body({ instructions: Type.Optional(Instructions), tone: Type.Optional(Tone) });

export const AskBody = Body({
  question: Type.String({ minLength: 1, maxLength: QUESTION_MAX, description: '1 to 2,000 characters.' }),
});

export const RewriteBody = Body({
  html: Html('The text to rewrite, as HTML (a reply being written, or the selected part of it).'),
  mode: Type.Union(
    REWRITE_MODES.map((m) => Type.Literal(m)),
    { description: 'How to rewrite it.' },
  ),
});

export const TranslateBody = Body({
  html: Type.Optional(Html('HTML to translate; its markup is kept.')),
  text: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: HTML_MAX,
      description: 'Plain text to translate (with or instead of html).',
    }),
  ),
  target: Type.String({ minLength: 2, maxLength: 64, description: 'The language to translate to: a BCP 47 tag.' }),
});

export const KbDraftBody = Body({
  ticket_id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'The solved or closed ticket whose resolution the article explains (its id, number or #number).',
  }),
});

export const AiSource = Type.Object(
  {
    article_id: Type.String(),
    title: Type.String(),
    url: Type.String({ description: 'The article’s address in the workspace’s public help center.' }),
  },
  { title: 'AiSource' },
);

const Sources = Type.Array(AiSource, {
  description: 'The published articles the answer cites, in the order it first cites them; empty when it cites none.',
});

export const DraftAnswer = Type.Object(
  {
    body_html: Type.String({
      description: 'Sanitized HTML: the reply to review and send (nothing was sent or saved).',
    }),
    body_text: Type.String(),
    sources: Sources,
  },
  { title: 'AiDraft' },
);

export const SummaryAnswer = Type.Object(
  {
    summary: Type.String(),
    key_points: Type.Array(Type.String()),
    sentiment: Nullable(
      Type.Union(
        SENTIMENTS.map((s) => Type.Literal(s)),
        { description: 'The customer’s sentiment; null when the model gave none of the four.' },
      ),
    ),
    updated_at: Timestamp,
  },
  { title: 'AiSummary' },
);

export const AskAnswer = Type.Object({ answer_html: Type.String(), sources: Sources }, { title: 'AiAnswer' });

export const RewriteAnswer = Type.Object(
  { html: Type.String({ description: 'Sanitized HTML.' }) },
  { title: 'AiRewrite' },
);

export const TranslateAnswer = Type.Object(
  {
    html: Type.Optional(Type.String({ description: 'Sanitized HTML (when html was sent).' })),
    text: Type.Optional(Type.String({ description: 'Plain text (when text was sent).' })),
    source_language: Nullable(
      Type.String({ description: 'The language the model detected (BCP 47); null when it named no valid tag.' }),
    ),
  },
  { title: 'AiTranslation' },
);

export const KbDraftAnswer = Type.Object(
  {
    title: Type.String(),
    excerpt: Nullable(Type.String()),
    body_html: Type.String({ description: 'Sanitized HTML.' }),
    language: Type.Union(LANGUAGES.map((l) => Type.Literal(l))),
  },
  {
    title: 'AiArticleDraft',
    description: 'An article to review: not saved. Its fields are those of the article create body.',
  },
);
