// Webhook delivery settings, a field of Deps (deps.webhookOptions). The production values are
// those of docs/webhooks.md "Retries and delivery records"; tests shorten the schedule and the
// timeout through createRuntime's `webhooks` option (never through the environment).
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
