// The queue of outbound email: settings, job names and the one function that queues a send.
// Kept apart from outbound.ts so that the tickets module can queue a reply without importing
// the sender (and the sender can import the tickets module).
import type { Deps } from '../../deps.js';

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

const byDeps = new WeakMap<Deps, OutboundOptions>();

/** Tests shorten the schedule (createRuntime's `email` option or directly); never the environment. */
export function setOutboundOptions(deps: Deps, opts: Partial<OutboundOptions> = {}): OutboundOptions {
  const merged = { ...DEFAULT_OUTBOUND_OPTIONS, ...opts };
  byDeps.set(deps, merged);
  return merged;
}

export const outboundOptionsOf = (deps: Deps): OutboundOptions => byDeps.get(deps) ?? DEFAULT_OUTBOUND_OPTIONS;

export const SEND_JOB = 'email.send';
export const AUTO_REPLY_JOB = 'email.auto-reply';

/** A send job: one pending message. */
export interface SendJob {
  w: string;
  m: string;
}

/**
 * Queues an attempt for a pending message (at `startAfter`, or now). Never throws: a message
 * whose job was not queued stays pending and the recovery sweep queues it later.
 */
export async function queueOutbound(deps: Deps, workspaceId: string, messageId: string, startAfter?: Date) {
  try {
    await deps.jobs.send<SendJob>(
      SEND_JOB,
      { w: workspaceId, m: messageId },
      { ...(startAfter ? { startAfter } : {}), retryLimit: 2, retryDelaySeconds: 30 },
    );
  } catch (err) {
    deps.log.warn(
      { workspace: workspaceId, message: messageId, err: err instanceof Error ? err.message : String(err) },
      'email send job not queued; the recovery sweep will queue it',
    );
  }
}
