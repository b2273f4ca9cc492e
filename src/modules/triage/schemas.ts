import { Type } from '@sinclair/typebox';
import { Body } from '../../platform/http/schemas.js';

export const TriageField = Type.Union([
  Type.Literal('priority'),
  Type.Literal('severity'),
  Type.Literal('labels'),
  Type.Literal('team'),
]);

export const TriageEngine = Type.Object({
  provider: Type.Union([Type.Literal('dedicated'), Type.Literal('llm'), Type.Literal('none')]),
  model: Type.String(),
  connected: Type.Boolean(),
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
