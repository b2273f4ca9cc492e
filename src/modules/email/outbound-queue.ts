// The queue of outbound email: job names and the one function that queues a send.
// Kept apart from outbound.ts so that the tickets module can queue a reply without importing
// the sender (and the sender can import the tickets module).
import type { Deps } from '../../deps.js';

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
