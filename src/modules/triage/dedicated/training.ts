// Training the dedicated engine: a ticket solved or closed (or marked spam) queues one training
// job per workspace, DEBOUNCE_SECONDS after the change commits (store.ts markQueued: the
// solves meanwhile ride on the same job), so a model follows the workspace's solves within a
// minute. The job reads the workspace's examples, trains when it has NEEDED solved tickets, and
// stores the model; every process picks it up by its trained_at (store.ts ModelCache).
import type { Deps } from '../../../deps.js';
import type { TicketHook } from '../../tickets/hooks.js';
import { isDone } from '../../tickets/status.js';
import { trainModel } from './model.js';
import { clearQueued, countSolved, loadExamples, markQueued, NEEDED, saveModel } from './store.js';

export const TRAIN_JOB = 'triage-train';
export const DEBOUNCE_SECONDS = 10;

export interface TrainJob {
  w: string;
}

/** Queues a training run of the workspace unless one is queued (after the unit commits). */
export function queueTraining(deps: Deps, workspaceId: string): void {
  void (async () => {
    try {
      const at = await markQueued(deps.database.db, workspaceId, DEBOUNCE_SECONDS);
      if (at) await deps.jobs.send<TrainJob>(TRAIN_JOB, { w: workspaceId }, { startAfter: at, retryLimit: 2 });
    } catch (err) {
      deps.log.warn({ err: (err as Error).message, workspace_id: workspaceId }, 'could not queue triage training');
    }
  })();
}

/** A solve (or close, or spam) teaches the model: training follows it. */
export const trainingHook: TicketHook = {
  name: 'triage-training',
  order: 61,
  nested: true,
  async run(deps, u, change) {
    const t = change.ticket;
    const was = change.before;
    const solved = isDone(t.status) && (was === null || !isDone(was.status));
    const spam = t.spam && (was === null || !was.spam);
    if (change.trigger === 'ticket_updated' || change.trigger === 'ticket_created') {
      if (solved || spam) u.afterCommit(() => queueTraining(deps, u.workspaceId));
    }
    return false;
  },
};

/** The training job: the workspace's model from its tickets (none below NEEDED solved). */
export async function runTraining(deps: Deps, job: TrainJob): Promise<void> {
  const db = deps.database.db;
  await clearQueued(db, job.w);
  const solved = await countSolved(db, job.w);
  if (solved < NEEDED) {
    await saveModel(db, job.w, solved, null);
    return;
  }
  const started = performance.now();
  const examples = await loadExamples(db, job.w);
  const model = await trainModel(examples);
  await saveModel(db, job.w, solved, model);
  deps.log.info(
    {
      workspace_id: job.w,
      examples: examples.length,
      ms: Math.round(performance.now() - started),
      fields: model?.fields.length ?? 0,
    },
    'triage model trained',
  );
}

export async function registerTrainingJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<TrainJob>(TRAIN_JOB, (job) => runTraining(deps, job), { concurrency: 1 });
}
