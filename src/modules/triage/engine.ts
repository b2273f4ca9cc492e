// The decision engine interface triage runs on (docs/ai.md "Triage"). Two engines fit it: the
// language model (llm-engine.ts: one structured call through runAi) and the dedicated offline
// engine (dedicated/: a classifier per workspace trained on its solved tickets). Both answer the
// same thing: a Decision per field, each with its value, the probability the engine gives it
// and its confidence (null for the language model, whose decisions apply without the threshold
// gate). apply.ts turns the answer into what the ticket gets; the engine never writes.
//
// Which engine decides: the dedicated engine when one is registered and ready for the workspace,
// else the language model when the workspace has a provider, else none (404 ai_disabled). The
// registry is per process (per Deps), kept here so that Deps' shape does not change.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { TicketRow } from '../tickets/queries.js';
import type { TriageTraining } from './schemas.js';

export const DECISION_FIELDS = [
  'priority',
  'severity',
  'category',
  'type_label',
  'label',
  'sentiment',
  'language',
  'spam',
  'needs_human',
  'team',
  'sla_risk',
] as const;
export type DecisionField = (typeof DECISION_FIELDS)[number];

export interface EngineDecision {
  /** priority, severity, category, labels, sentiment, language, team id: strings; spam, needs_human, sla_risk: booleans. */
  value: string | boolean;
  /** The engine's probability of the value (0 to 1), or null when it gives none. */
  probability: number | null;
  /** Calibrated confidence for the threshold gate; null: the language model (applies ungated). */
  confidence: number | null;
}

/** What the ticket offers the engine to choose from (only these values are ever kept). */
export interface TriageOptions {
  /** Teams of the workspace (id, name). */
  teams: Array<{ id: string; name: string }>;
  /** The labels of the exclusive group named Type (type_label picks one). */
  typeLabels: string[];
  /** Other labels a ticket may carry (label picks one). */
  labels: string[];
}

/** A message of the ticket as the engine reads it. */
export interface TriageMessage {
  from: 'customer' | 'agent' | 'system';
  kind: 'reply' | 'note';
  text: string;
}

export interface TriageInput {
  workspaceId: string;
  /** The member the run is charged to (null: automatic runs, automations). */
  userId: string | null;
  ticket: TicketRow;
  messages: TriageMessage[];
  options: TriageOptions;
}

export interface EngineAnswer {
  engine: 'dedicated' | 'llm';
  /** The model that decided (the provider's model id, or the dedicated engine's name). */
  model: string;
  model_version?: string;
  decisions: Partial<Record<DecisionField, EngineDecision>>;
  /** One or two sentences; empty when the dedicated engine decides (interface.md AI rule 4). */
  summary: string;
}

/** What the ai_decide conditions of one automation run ask. */
export interface QuestionsInput {
  workspaceId: string;
  ticket: TicketRow;
  /** The event's message text, if any. */
  message: string | null;
  questions: string[];
}

export interface TriageEngine {
  readonly kind: 'dedicated' | 'llm';
  /** Whether it can decide for this workspace now (the dedicated one: trained on 40 solved tickets). */
  ready(deps: Deps, workspaceId: string): Promise<boolean>;
  /** The decisions on a ticket; out-of-range values are already dropped. */
  triage(deps: Deps, input: TriageInput): Promise<EngineAnswer>;
  /** The probability that each question's answer is yes (null: cannot say), in the order asked. */
  decide(deps: Deps, input: QuestionsInput): Promise<Array<number | null>>;
}

/** The dedicated engine (dedicated/engine.ts): also reports its training per workspace. */
export interface DedicatedEngine extends TriageEngine {
  readonly kind: 'dedicated';
  /** The workspace's training state (GET /v1/triage `engine.training`). */
  training(deps: Deps, workspaceId: string): Promise<Static<typeof TriageTraining>>;
}

export interface EngineRegistry {
  /** The dedicated engine (dedicated/engine.ts). */
  dedicated: DedicatedEngine | null;
  llm: TriageEngine;
  /** Set once a language model triage or decide call succeeded in this process. */
  llmConnected: boolean;
}

const registries = new WeakMap<object, EngineRegistry>();

/** Registers the process's engines (runtime.ts). */
export function registerEngines(deps: Deps, registry: EngineRegistry): void {
  registries.set(deps.ai, registry);
}

/** The process's engines (none registered: none). */
export const enginesOf = (deps: Deps): EngineRegistry | null => registries.get(deps.ai) ?? null;

/** The engine that decides for the workspace: dedicated when ready, else the language model, else null. */
export async function engineFor(deps: Deps, workspaceId: string): Promise<TriageEngine | null> {
  const r = enginesOf(deps);
  if (!r) return null;
  if (r.dedicated && (await r.dedicated.ready(deps, workspaceId))) return r.dedicated;
  if (await r.llm.ready(deps, workspaceId)) return r.llm;
  return null;
}

/**
 * The engine for the automations' ai_decide questions: the language model when the workspace
 * has one (the dedicated engine cannot read a question), else the dedicated one (it answers
 * null: the condition does not hold), else null.
 */
export async function engineForQuestions(deps: Deps, workspaceId: string): Promise<TriageEngine | null> {
  const r = enginesOf(deps);
  if (!r) return null;
  if (await r.llm.ready(deps, workspaceId)) return r.llm;
  if (r.dedicated && (await r.dedicated.ready(deps, workspaceId))) return r.dedicated;
  return null;
}
