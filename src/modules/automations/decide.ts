// The seams the AI issue plugs into for automations: the decision engine that answers ai_decide
// conditions, and what the ai_triage action does. They are fields of Deps (deps.ai.decide,
// deps.ai.triage), plugged in at start-up; with none, ai_decide conditions do not hold and
// ai_triage does nothing. The types are declared beside Deps (src/deps.ts).
export type { DecisionEngine, DecisionRequest, TriageHandler, TriageRequest } from '../../deps.js';
