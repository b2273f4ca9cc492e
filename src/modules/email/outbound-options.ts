// Outbound email settings, a field of Deps (deps.outboundOptions): tests shorten the schedule
// through createRuntime's `email` option, never through the environment.

export interface OutboundOptions {
  /** Waits before attempts 2, 3, …: one more attempt than entries. */
  retryDelaysMs: number[];
  /** Each wait is stretched or shrunk by up to this fraction at random. */
  jitter: number;
  /** Send jobs run at once per process; 0: this process sends no mail, auto-replies included. */
  workers: number;
  /** How often an idle worker looks for due jobs (retries; new sends wake workers at once). */
  pollSeconds: number;
  /** The recovery sweep: pending messages without a job. */
  sweepMs: number;
  /** A pending message this far past due (and not held by a worker) gets a new job. */
  orphanAfterMs: number;
  /** SMTP connection, greeting and socket timeouts of one attempt. */
  timeoutMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** 7 attempts over about 10 hours: a mail server down for a night's maintenance still gets the reply. */
export const DEFAULT_OUTBOUND_OPTIONS: OutboundOptions = {
  retryDelaysMs: [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR],
  jitter: 0.1,
  workers: 4,
  pollSeconds: 2,
  sweepMs: 30_000,
  orphanAfterMs: 5 * MINUTE,
  timeoutMs: 30_000,
};
