// planTriage (src/modules/triage/apply.ts) on answers with a confidence, as the dedicated engine
// will give them: the threshold gate (at or above applies, below suggests), fields the workspace
// does not allow, apply true, spam at 0.8 and only raised priority. Pure: no service needed.
import { describe, expect, it } from 'vitest';
import type { TicketRow } from '../../../src/modules/tickets/queries.js';
import { planTriage } from '../../../src/modules/triage/apply.js';
import type { EngineAnswer } from '../../../src/modules/triage/engine.js';

const ticket = (over: Partial<TicketRow> = {}, tags: string[] = []): TicketRow =>
  ({
    id: 't1',
    priority: 'normal',
    severity: null,
    team_id: null,
    spam: false,
    custom: {},
    json: JSON.stringify({ tags: tags.map((name) => ({ id: name, name, color: 'gray', group_id: null })) }),
    ...over,
  }) as TicketRow;

const dedicated = (decisions: EngineAnswer['decisions']): EngineAnswer => ({
  engine: 'dedicated',
  model: 'dedicated-v1',
  decisions,
  summary: '',
});
const d = (value: string | boolean, confidence: number | null, probability: number | null = confidence) => ({
  value,
  confidence,
  probability,
});
const now = new Date('2026-01-01T00:00:00Z');
const fields = ['priority', 'severity', 'labels'] as Array<'priority' | 'severity' | 'labels' | 'team'>;

describe('planTriage with confidences', () => {
  it('applies at or above the threshold, suggests below it and outside the fields', () => {
    const plan = planTriage({
      answer: dedicated({
        priority: d('high', 0.7),
        severity: d('sev2', 0.69),
        label: d('payments', 0.95),
        team: d('team-1', 0.99),
      }),
      ticket: ticket(),
      settings: { fields, threshold: 0.7 },
      applyAll: false,
      now,
    });
    expect(plan.patch).toMatchObject({ priority: 'high', add_tags: ['payments'] });
    expect(plan.patch.severity).toBeUndefined();
    expect(plan.patch.team_id).toBeUndefined();
    expect(Object.keys(plan.suggestions).sort()).toEqual(['severity', 'team']);
    expect(plan.suggestions.severity).toEqual({
      value: 'sev2',
      confidence: 0.69,
      probability: 0.69,
      model: 'dedicated-v1',
      decided_at: now.toISOString(),
    });
    expect(plan.decisions).toMatchObject({ engine: 'dedicated', threshold: 0.7 });
    expect(plan.decisions.fields.priority).toEqual({ value: 'high', confidence: 0.7, probability: 0.7, applied: true });
    expect(plan.confidenceOf).toEqual({ priority: 0.7, tags: 0.95 });
  });

  it('apply true applies every decision whatever its confidence, never spam', () => {
    const plan = planTriage({
      answer: dedicated({ priority: d('urgent', 0.2), team: d('team-1', 0.1), spam: d(true, 0.5, 0.85) }),
      ticket: ticket(),
      settings: { fields: [], threshold: 0.9 },
      applyAll: true,
      now,
    });
    expect(plan.patch).toMatchObject({ priority: 'urgent', team_id: 'team-1' });
    expect(plan.patch.spam).toBeUndefined();
    expect(Object.keys(plan.suggestions)).toEqual(['spam']);
  });

  it('spam below 0.8 is not suggested; a lower priority or a present label is neither applied nor suggested', () => {
    const plan = planTriage({
      answer: dedicated({ spam: d(true, 0.99, 0.79), priority: d('low', 0.99), label: d('Payments', 0.99) }),
      ticket: ticket({ priority: 'high' }, ['payments']),
      settings: { fields, threshold: 0.7 },
      applyAll: false,
      now,
    });
    expect(plan.suggestions).toEqual({});
    expect(plan.patch).toEqual({ custom: expect.objectContaining({ ai_suggestions: null }) });
    expect(plan.applied).toEqual([]);
  });
});
