// What runs triage without an agent asking: auto_triage on a new ticket (a workflow hook that
// queues a job after the ticket's transaction commits; customer replies are not triaged again:
// the triage settings have no option for it, docs/decisions.md "Triage"), the automations'
// ai_triage action (queued the same way, via `automation`), and their ai_decide conditions
// (every question of one automation run in one engine call, metered `decide`). Also the engine
// GET /v1/triage and GET /v1/ai/config report. The onboarding step setup_triage is service.ts
// triageConfigured: auto_triage on, or the settings changed from the defaults (docs/decisions.md
// "setup_triage").
import { type Kysely, sql } from 'kysely';
import type { DecisionEngine, Deps, TriageHandler } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { type Unit, Writer } from '../../platform/db/tx.js';
import type { TicketHook } from '../tickets/hooks.js';
import { dedicatedEngine } from './dedicated/engine.js';
import { MODEL_NAME } from './dedicated/model.js';
import { registerTrainingJobs } from './dedicated/training.js';
import { type EngineRegistry, engineForQuestions, enginesOf, registerEngines } from './engine.js';
import { llmEngine } from './llm-engine.js';
import { queueTriage, runTriageJob, TRIAGE_JOB, type TriageJob } from './run.js';
import type { TriageEngineView } from './service.js';
import { configuredEngine } from './service.js';

/** auto_triage: a new ticket (not spam) is triaged in a job once its transaction commits. */
export const triageHook: TicketHook = {
  name: 'triage',
  order: 60,
  probe: (workspaceId) => ({
    ticket_created: sql<boolean>`coalesce((SELECT s.auto_triage FROM triage_settings s WHERE s.workspace_id = ${workspaceId}), false)`,
  }),
  async run(deps, u, change) {
    if (change.trigger !== 'ticket_created' || change.ticket.spam) return false;
    queueTriage(deps, u, change.ticket.id, 'triage');
    return false;
  },
};

/** The automations' ai_triage action: a run via `automation`, in a job. */
export const triageAction: TriageHandler = async (deps, u, request) => {
  queueTriage(deps, u, request.ticket.id, 'automation');
};

/**
 * The automations' ai_decide conditions: one engine call per automation run. It runs inside the
 * automation's transaction (the seam's contract: the conditions decide what the run does), with
 * the provider's timeout bounding it. The embedded database runs one transaction at a time, so
 * there the call reads and meters through that transaction (its usage row commits with it) and
 * any other write it would make fails instead of waiting for the session forever.
 */
export const decideConditions: DecisionEngine = async (deps, u, request) => {
  const d = deps.database.kind === 'pglite' ? insideUnit(deps, u) : deps;
  const engine = await engineForQuestions(d, u.workspaceId);
  if (!engine) return null;
  return engine.decide(d, {
    workspaceId: u.workspaceId,
    ticket: request.ticket,
    message: request.message?.body_text ?? null,
    questions: request.questions,
  });
};

/** Deps whose reads and writes go through the unit's transaction (the embedded database). */
function insideUnit(deps: Deps, u: Unit): Deps {
  const db = u.trx as unknown as Kysely<DB>;
  return { ...deps, database: { ...deps.database, db, search: db }, writer: new Writer(db, deps.publisher) };
}

/**
 * GET /v1/triage and /v1/ai/config `decisions`: the engine that decides for the workspace. The
 * dedicated engine once its model is ready (connected), else the language model when one is
 * configured, else none: nothing decides until the model is ready. `training` is the dedicated
 * engine's state, from the workspace's first solved ticket on (its progress towards the 40).
 */
export async function reportedEngine(deps: Deps, workspaceId: string): Promise<TriageEngineView> {
  const r = enginesOf(deps);
  const base = configuredEngine(deps);
  const llm = base.provider === 'llm' ? { ...base, connected: r?.llmConnected ?? false } : null;
  if (!r?.dedicated) return llm ?? base;
  const training = await r.dedicated.training(deps, workspaceId);
  if (training.status === 'ready') return { provider: 'dedicated', model: MODEL_NAME, connected: true, training };
  const other = llm ?? base;
  return training.solved > 0 ? { ...other, training } : other;
}

/** Plugs triage into the process: the engines, the seams, the hook's job worker (runtime.ts). */
export function plugTriage(deps: Deps): EngineRegistry {
  const registry: EngineRegistry = {
    dedicated: dedicatedEngine(),
    llm: llmEngine(() => {
      registry.llmConnected = true;
    }),
    llmConnected: false,
  };
  registerEngines(deps, registry);
  deps.ai.decide = decideConditions;
  deps.ai.triage = triageAction;
  deps.ai.triageEngine = reportedEngine;
  return registry;
}

/** The triage job's worker (started with the other workers). */
export async function registerTriageJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<TriageJob>(TRIAGE_JOB, (job) => runTriageJob(deps, job), { concurrency: 2 });
  await registerTrainingJobs(deps);
}
