// Shapes of /v1/ai/config, /v1/ai/models, /v1/ai/settings and /v1/ai/key (interface.md "AI
// configuration and models", "AI"; gaps.md "AI") and /v1/ai/search.
import { Type } from '@sinclair/typebox';
import { Body, Nullable } from '../../platform/http/schemas.js';
import { SearchResult } from '../search/schemas.js';
import { TriageEngine } from '../triage/schemas.js';

const Provider = Type.Union([Type.Literal('openai'), Type.Literal('anthropic')]);

export const AiFeatures = Type.Object(
  {
    enabled: Type.Boolean({ description: 'AI features on in this workspace (when a provider is available).' }),
    auto_triage: Type.Boolean(),
    auto_summarize: Type.Boolean(),
    widget_answers: Type.Boolean(),
    assistant: Type.Boolean(),
    tone: Type.String({ description: 'friendly, professional, concise, or free text up to 200 characters.' }),
    reply_language: Type.String({ description: "`auto` (the customer's language) or a BCP 47 tag." }),
    instructions: Type.String({ description: 'Extra instructions for drafts, up to 2,000 characters.' }),
  },
  { title: 'AiFeatures' },
);

const Price = Type.Object({ input: Type.Number(), output: Type.Number() });

export const AiModel = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    vendor: Type.String(),
    context_length: Nullable(Type.Integer()),
    usd_per_mtok: Nullable(Price),
    typical_reply_usd: Nullable(Type.Number({ description: '4,000 input and 500 output tokens.' })),
  },
  { title: 'AiModel' },
);

export const AiModels = Type.Object({
  data: Type.Array(AiModel),
  default: Nullable(Type.String()),
  fast: Nullable(Type.String()),
});

const COST_KEYS = [
  'summarize',
  'rewrite',
  'translate',
  'triage',
  'decide',
  'answer_check',
  'copilot',
  'draft_reply',
  'answer',
  'answer_email',
  'playground',
  'kb_draft',
  'assistant',
] as const;

export const AiOwnKey = Type.Object(
  {
    provider: Provider,
    base_url: Nullable(Type.String()),
    last4: Type.String({ description: 'The last 4 characters of the key; the key itself is never returned.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('failed')]),
    error: Nullable(Type.String({ description: 'Why the provider refused the key (status failed).' })),
  },
  { title: 'AiOwnKey' },
);

export const AiConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    provider: Nullable(Provider),
    models: Type.Object({ default: Nullable(Type.String()), fast: Nullable(Type.String()) }),
    embeddings: Type.Boolean(),
    features: AiFeatures,
    costs: Type.Object(
      Object.fromEntries(COST_KEYS.map((k) => [k, Type.Number()])) as Record<
        (typeof COST_KEYS)[number],
        ReturnType<typeof Type.Number>
      >,
    ),
    metered: Type.Boolean({ description: "True when the workspace's calls are charged (the instance's provider)." }),
    assistant_name: Type.String(),
    decisions: TriageEngine,
    own_key: Nullable(AiOwnKey),
  },
  { title: 'AiConfig' },
);

export const AiSettings = Type.Object(
  {
    features: AiFeatures,
    model: Type.String(),
    fast_model: Type.String(),
    widget_model: Type.String(),
    widget_monthly_cap_usd: Type.Number(),
  },
  { title: 'AiSettings' },
);

const ModelChoice = (what: string) =>
  Type.String({
    maxLength: 200,
    description: `${what}: "" for the instance's default, or an id from GET /v1/ai/models.`,
  });

export const PatchAiSettingsBody = Body({
  enabled: Type.Optional(Type.Boolean()),
  auto_triage: Type.Optional(Type.Boolean()),
  auto_summarize: Type.Optional(Type.Boolean()),
  widget_answers: Type.Optional(Type.Boolean()),
  assistant: Type.Optional(Type.Boolean()),
  tone: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'friendly, professional, concise, or free text.' }),
  ),
  instructions: Type.Optional(Type.String({ maxLength: 2000 })),
  reply_language: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: '`auto` or a BCP 47 tag.' })),
  model: Type.Optional(ModelChoice('Drafts and answers')),
  fast_model: Type.Optional(ModelChoice('Summaries, rewrites, translations, triage')),
  widget_model: Type.Optional(ModelChoice('The widget')),
  widget_monthly_cap_usd: Type.Optional(
    Type.Number({ minimum: 0, maximum: 10000, description: 'Rounded to cents; 0 = no cap (per UTC month).' }),
  ),
});

export const PutAiKeyBody = Body({
  provider: Provider,
  api_key: Type.String({ minLength: 8, maxLength: 500, description: 'Stored encrypted; never returned.' }),
  base_url: Type.Optional(
    Nullable(Type.String({ maxLength: 2000, description: 'http(s) URL of an OpenAI-compatible or Anthropic API.' })),
  ),
});

export const AiSearchQuery = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: '\\S',
      description: 'What to look for: words, a question, a ticket number, a passage (up to 1,000 characters).',
    }),
  },
  { additionalProperties: false },
);

export const AiSearchResult = Type.Object(
  {
    tickets: SearchResult.properties.tickets,
    contacts: SearchResult.properties.contacts,
    articles: SearchResult.properties.articles,
    semantic: Type.Object(
      {
        tickets: Type.Array(Type.String(), { description: 'Ids of the tickets above found by meaning alone.' }),
        articles: Type.Array(Type.String(), { description: 'Ids of the articles above found by meaning alone.' }),
      },
      {
        description:
          'Which results the words alone did not find (a client marks them as semantic matches); the others matched the words as in GET /v1/search.',
      },
    ),
  },
  { title: 'AiSearchResult' },
);
