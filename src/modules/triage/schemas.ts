import { Type } from '@sinclair/typebox';
import { Body, Nullable } from '../../platform/http/schemas.js';

export const TriageField = Type.Union([
  Type.Literal('priority'),
  Type.Literal('severity'),
  Type.Literal('labels'),
  Type.Literal('team'),
]);

/** The dedicated engine's state for the workspace (GET /v1/triage only; docs/ai.md "The dedicated engine"). */
export const TriageTraining = Type.Object(
  {
    /** learning: fewer than `needed` solved tickets; ready: a model decides. */
    status: Type.Union([Type.Literal('learning'), Type.Literal('ready')]),
    solved: Type.Integer({ description: 'Solved (and closed) tickets it can learn from.' }),
    needed: Type.Integer({ description: 'Solved tickets needed before it decides (40).' }),
    trained_at: Nullable(Type.String({ format: 'date-time' })),
    trained_on: Type.Integer({ description: 'Tickets the current model learned from.' }),
    /** Accuracy per field on the workspace's own held-out tickets (0 to 1), null before the first model. */
    accuracy: Nullable(Type.Record(Type.String(), Type.Number())),
  },
  { title: 'TriageTraining' },
);

export const TriageEngine = Type.Object({
  provider: Type.Union([Type.Literal('dedicated'), Type.Literal('llm'), Type.Literal('none')]),
  model: Type.String(),
  connected: Type.Boolean(),
  training: Type.Optional(TriageTraining),
});

export const TriageSettings = Type.Object(
  {
    auto_triage: Type.Boolean(),
    fields: Type.Array(TriageField),
    assign_after_triage: Type.Boolean(),
    threshold: Type.Number(),
    engine: TriageEngine,
    available: Type.Boolean(),
  },
  { title: 'TriageSettings' },
);

export const PatchTriageBody = Body({
  auto_triage: Type.Optional(Type.Boolean({ description: 'Triage new tickets automatically.' })),
  fields: Type.Optional(
    Type.Array(TriageField, {
      uniqueItems: true,
      maxItems: 4,
      description: 'What triage may set on its own: a subset of priority, severity, labels, team.',
    }),
  ),
  assign_after_triage: Type.Optional(Type.Boolean({ description: 'Run auto-assignment after triage set the team.' })),
  threshold: Type.Optional(
    Type.Number({
      minimum: 0.5,
      maximum: 0.99,
      description: 'Confidence at or above which a decision applies (0.5 to 0.99).',
    }),
  ),
});

// --- POST /v1/tickets/{id}/ai/triage, DELETE /v1/tickets/{id}/ai/suggestions/{field} -------------

const Prob = Nullable(Type.Number({ minimum: 0, maximum: 1 }));
const Value = Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.String())]);

export const Decision = Type.Object(
  { value: Value, probability: Prob, confidence: Prob, applied: Type.Boolean() },
  { title: 'Decision' },
);

export const AIDecisions = Type.Object(
  {
    engine: Type.Union([Type.Literal('dedicated'), Type.Literal('llm')]),
    model: Type.String(),
    model_version: Type.Optional(Type.String()),
    threshold: Type.Number(),
    decided_at: Type.String({ format: 'date-time' }),
    fields: Type.Record(Type.String(), Decision),
  },
  { title: 'AIDecisions' },
);

export const Suggestion = Type.Object(
  { value: Value, confidence: Prob, probability: Prob, model: Type.String(), decided_at: Type.String() },
  { title: 'Suggestion' },
);

export const TriageBody = Body({
  apply: Type.Optional(
    Type.Boolean({
      description: 'Apply every decision whatever the triage fields and the confidence (spam stays a suggestion).',
    }),
  ),
});

export const TriageResult = Type.Object(
  {
    tags: Type.Array(Type.String()),
    suggested_tags: Type.Array(Type.String()),
    priority: Type.String(),
    severity: Nullable(Type.String()),
    team_id: Nullable(Type.String()),
    sentiment: Nullable(Type.String()),
    language: Nullable(Type.String()),
    category: Nullable(Type.String()),
    summary: Type.String(),
    applied: Type.Array(Type.String()),
    decisions: AIDecisions,
    suggestions: Type.Record(Type.String(), Suggestion),
  },
  { title: 'TriageResult' },
);

export const SuggestionParams = Type.Object(
  { id: Type.String({ maxLength: 64 }), field: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
