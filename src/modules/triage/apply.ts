// What a triage run does to the ticket (interface.md "AI" rules 4 to 6), from the engine's
// decisions: planTriage decides (pure), writeTriage writes it as one patch through the tickets
// module (one ticket.updated with `custom` and the fields applied; an activity per change with
// actor type `ai` and data via, model and confidence).
//
// - A decision applies when the workspace's triage `fields` allow it and its confidence is at or
//   above the threshold, or is null (the language model); `apply: true` applies every decision
//   whatever the fields and the confidence. Otherwise it becomes a suggestion.
// - priority is only raised; severity is set when empty, else only raised; team only when empty;
//   labels (type_label, label) only added. A decision that would change nothing is recorded and
//   neither applied nor suggested.
// - spam is never applied: suggested when its probability is at least 0.8.
// - category, sentiment and language are stored in custom (ai_category, ai_sentiment, language);
//   needs_human and sla_risk are recorded in ai_decisions only.
// - The suggestions replace the ticket's previous set (none left: the key is removed).
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import type { ServiceContext } from '../../platform/http/context.js';
import { applyPatch, type PatchInput } from '../tickets/patch.js';
import { presentTicket, type TicketRow } from '../tickets/queries.js';
import { DECISION_FIELDS, type DecisionField, type EngineAnswer } from './engine.js';
import { PRIORITIES, SEVERITIES } from './llm-engine.js';
import type { StoredTriage } from './service.js';

export const SPAM_PROBABILITY = 0.8;
export type SuggestionField = 'priority' | 'severity' | 'labels' | 'team' | 'spam';
export const SUGGESTION_FIELDS: SuggestionField[] = ['priority', 'severity', 'labels', 'team', 'spam'];

export interface StoredDecision {
  value: string | boolean;
  probability: number | null;
  confidence: number | null;
  applied: boolean;
}

export interface Suggestion {
  value: string | string[] | boolean;
  confidence: number | null;
  probability: number | null;
  model: string;
  decided_at: string;
}

export interface AiDecisions {
  engine: 'dedicated' | 'llm';
  model: string;
  model_version?: string;
  threshold: number;
  decided_at: string;
  fields: Partial<Record<DecisionField, StoredDecision>>;
}

export interface TriagePlan {
  patch: PatchInput;
  decisions: AiDecisions;
  suggestions: Partial<Record<SuggestionField, Suggestion>>;
  /** The decisions applied to the ticket, in DECISION_FIELDS order. */
  applied: DecisionField[];
  /** Labels suggested, not applied. */
  suggestedTags: string[];
  /** Confidence of each ticket change (activity data), keyed by ticket.updated's change name. */
  confidenceOf: Record<string, number | null>;
}

/** Which triage setting covers a decision (the others are not ticket fields an agent sets). */
const SETTING_OF: Partial<Record<DecisionField, StoredTriage['fields'][number]>> = {
  priority: 'priority',
  severity: 'severity',
  type_label: 'labels',
  label: 'labels',
  team: 'team',
};

const rank = (list: readonly string[], v: string | null) => (v === null ? -1 : list.indexOf(v));

export interface PlanInput {
  answer: EngineAnswer;
  ticket: TicketRow;
  settings: Pick<StoredTriage, 'fields' | 'threshold'>;
  applyAll: boolean;
  now: Date;
}

export function planTriage({ answer, ticket, settings, applyAll, now }: PlanInput): TriagePlan {
  const at = now.toISOString();
  const current = presentTicket(ticket).tags.map((t) => t.name.toLowerCase());
  const plan: TriagePlan = {
    patch: {},
    decisions: {
      engine: answer.engine,
      model: answer.model,
      ...(answer.model_version ? { model_version: answer.model_version } : {}),
      threshold: settings.threshold,
      decided_at: at,
      fields: {},
    },
    suggestions: {},
    applied: [],
    suggestedTags: [],
    confidenceOf: {},
  };
  const custom: Record<string, unknown> = {};
  const addTags: string[] = [];
  const suggest = (
    field: SuggestionField,
    value: Suggestion['value'],
    d: { confidence: number | null; probability: number | null },
  ) => {
    plan.suggestions[field] = {
      value,
      confidence: d.confidence,
      probability: d.probability,
      model: answer.model,
      decided_at: at,
    };
  };
  for (const field of DECISION_FIELDS) {
    const d = answer.decisions[field];
    if (!d) continue;
    const setting = SETTING_OF[field];
    const gate =
      applyAll ||
      (setting !== undefined &&
        settings.fields.includes(setting) &&
        (d.confidence === null || d.confidence >= settings.threshold));
    let applied = false;
    const v = d.value;
    switch (field) {
      case 'priority':
      case 'severity': {
        const order = field === 'priority' ? PRIORITIES : SEVERITIES;
        if (typeof v !== 'string' || rank(order, v) <= rank(order, ticket[field])) break;
        if (gate) {
          plan.patch[field] = v as never;
          plan.confidenceOf[field] = d.confidence;
          applied = true;
        } else suggest(field, v, d);
        break;
      }
      case 'team':
        if (typeof v !== 'string' || ticket.team_id !== null) break;
        if (gate) {
          plan.patch.team_id = v;
          plan.confidenceOf.team_id = d.confidence;
          applied = true;
        } else suggest('team', v, d);
        break;
      case 'type_label':
      case 'label':
        if (typeof v !== 'string' || current.includes(v.toLowerCase())) break;
        if (gate) {
          addTags.push(v);
          plan.confidenceOf.tags = d.confidence;
          applied = true;
        } else plan.suggestedTags.push(v);
        break;
      case 'spam':
        if (d.probability !== null && d.probability >= SPAM_PROBABILITY && !ticket.spam) suggest('spam', true, d);
        break;
      case 'category':
      case 'sentiment':
      case 'language':
        custom[field === 'language' ? 'language' : `ai_${field}`] = v;
        applied = true;
        break;
      default:
        break; // needs_human, sla_risk: recorded
    }
    plan.decisions.fields[field] = { value: v, probability: d.probability, confidence: d.confidence, applied };
    if (applied) plan.applied.push(field);
  }
  if (addTags.length > 0) plan.patch.add_tags = addTags;
  if (plan.suggestedTags.length > 0) {
    const first = answer.decisions.type_label ?? answer.decisions.label!;
    suggest('labels', plan.suggestedTags, first);
  }
  const suggestions = Object.keys(plan.suggestions).length > 0 ? plan.suggestions : null;
  plan.patch.custom = { ...custom, ai_decisions: plan.decisions, ai_suggestions: suggestions };
  return plan;
}

export type Via = 'triage' | 'automation';

/** The AI acting: for the member who asked, or on its own (automatic runs, automations). */
export const aiActor = (model: string, onBehalfOf: string | null): ServiceContext => ({
  actor: { kind: 'ai', model, onBehalfOf },
});

/** Writes the plan on the locked ticket: one ticket.updated, activities with via, model, confidence. */
export async function writeTriage(
  deps: Deps,
  u: Unit,
  ctx: ServiceContext,
  before: TicketRow,
  plan: TriagePlan,
  via: Via,
): Promise<TicketRow> {
  const { row } = await applyPatch(deps, u, ctx, before, plan.patch, {
    keepSuggestions: true,
    activityData: (change) => ({ via, model: plan.decisions.model, confidence: plan.confidenceOf[change] ?? null }),
  });
  return row;
}
