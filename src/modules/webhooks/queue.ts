// The webhook job queue's entry points, shared by the routes and the delivery worker.
import type { Deps } from '../../deps.js';

export const DELIVER_JOB = 'webhooks.deliver';
export const DISABLED_MAIL_JOB = 'webhooks.disabled-mail';
export const PRUNE_JOB = 'webhooks.prune';

/** A delivery job: deliveries of one workspace (to one or more of its endpoints). */
export interface DeliverJob {
  w: string;
  d: string[];
}

/**
 * Queues attempts for these deliveries (at `startAfter`, or now). Never throws: a delivery whose
 * job was not queued stays pending and the recovery sweep queues it later.
 */
export async function enqueueDeliveries(
  deps: Deps,
  workspaceId: string,
  ids: string[],
  startAfter?: Date,
): Promise<void> {
  const size = deps.webhookOptions.batchSize;
  for (let i = 0; i < ids.length; i += size) {
    const job: DeliverJob = { w: workspaceId, d: ids.slice(i, i + size) };
    try {
      await deps.jobs.send(DELIVER_JOB, job, { ...(startAfter ? { startAfter } : {}), retryLimit: 3 });
    } catch (err) {
      deps.log.warn(
        { workspace: workspaceId, deliveries: job.d.length, err: err instanceof Error ? err.message : String(err) },
        'webhook delivery job not queued; the recovery sweep will queue it',
      );
    }
  }
}
