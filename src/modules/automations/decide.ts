// The seams the AI issue plugs into: the decision engine that answers automations' ai_decide
// conditions, and what the ai_triage action does. Both are process-wide registrations made at
// start-up (runtime wiring); with none registered, ai_decide conditions do not hold and
// ai_triage does nothing.
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import type { TicketHookMessage } from '../tickets/hooks.js';
import type { TicketRow } from '../tickets/queries.js';

export interface DecisionRequest {
  automation: { id: string; name: string };
  /** The ticket as it is at that moment, in the change's transaction. */
  ticket: TicketRow;
  /** The message of the event (the reply, or the first message), if any. */
  message: TicketHookMessage | null;
  /** Every ai_decide question of one automation run, asked in one call (charged once). */
  questions: string[];
}

/**
 * Answers each question with the probability (0 to 1) that the answer is yes, in the order
 * asked; null (or a missing or non-number entry) when it cannot answer: then the condition
 * does not hold.
 */
export type DecisionEngine = (deps: Deps, u: Unit, request: DecisionRequest) => Promise<Array<number | null> | null>;

export interface TriageRequest {
  automation: { id: string; name: string };
  ticket: TicketRow;
  message: TicketHookMessage | null;
}

/** What the ai_triage action does (the AI issue's triage, applied as the automation). */
export type TriageHandler = (deps: Deps, u: Unit, request: TriageRequest) => Promise<void>;

let engine: DecisionEngine | null = null;
let triage: TriageHandler | null = null;

/** Registers (or with null, removes) the decision engine. */
export function setDecisionEngine(e: DecisionEngine | null): void {
  engine = e;
}

/** The registered decision engine, or null when none is configured. */
export function decisionEngine(): DecisionEngine | null {
  return engine;
}

/** Registers (or with null, removes) what ai_triage does. */
export function setTriageHandler(h: TriageHandler | null): void {
  triage = h;
}

export function triageHandler(): TriageHandler | null {
  return triage;
}
