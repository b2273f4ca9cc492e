// Delivery settings and the job queue entry points shared by the routes and the delivery worker.
// The production values are those of docs/webhooks.md "Retries and delivery records"; tests shorten the schedule and the timeout through
// createRuntime's `webhooks` option (never through the environment).
import type { Deps } from '../../deps.js';
import type { Resolve } from '../../platform/net/http.js';

export interface WebhookOptions {
  /** Waits before attempts 2, 3, …; one more attempt than entries (8 attempts). */
  retryDelaysMs: number[];
  /** Each wait is stretched or shrunk by up to this fraction at random. */
  jitter: number;
  /** One attempt, from connecting to the response head. */
  timeoutMs: number;
  /** An endpoint whose deliveries all failed for this long is disabled. */
  disableAfterMs: number;
  /** Delivery jobs run at once per process. */
  workers: number;
  /** How often an idle worker looks for due jobs (retries; new deliveries wake workers at once). */
  pollSeconds: number;
  /** Requests in flight at once to one endpoint within one job. */
  perEndpointConcurrency: number;
  /** Deliveries per job. */
  batchSize: number;
  /** The dispatcher gathers the events of this long into one write and one job. */
  batchWindowMs: number;
  /** The recovery sweeps: events without deliveries, pending deliveries without a job. */
  sweepMs: number;
  /** An event older than this without deliveries is dispatched by the sweep (the bus lost it). */
  eventGraceMs: number;
  /** A pending delivery this far past due (and not held by a worker) gets a new job. */
  orphanAfterMs: number;
  /** Name resolution for the address checks (tests inject one; DNS otherwise). */
  resolve?: Resolve;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  retryDelaysMs: [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
  jitter: 0.1,
  timeoutMs: 10_000,
  disableAfterMs: 3 * 24 * HOUR,
  workers: 8,
  pollSeconds: 2,
  perEndpointConcurrency: 10,
  batchSize: 200,
  batchWindowMs: 20,
  sweepMs: 10_000,
  eventGraceMs: 15_000,
  orphanAfterMs: 5 * MINUTE,
};

const byDeps = new WeakMap<Deps, WebhookOptions>();

export function setWebhookOptions(deps: Deps, opts: Partial<WebhookOptions> = {}): WebhookOptions {
  const merged = { ...DEFAULT_WEBHOOK_OPTIONS, ...opts };
  byDeps.set(deps, merged);
  return merged;
}

export const webhookOptionsOf = (deps: Deps): WebhookOptions => byDeps.get(deps) ?? DEFAULT_WEBHOOK_OPTIONS;

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
  const size = webhookOptionsOf(deps).batchSize;
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
