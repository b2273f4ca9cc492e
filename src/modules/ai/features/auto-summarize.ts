// auto_summarize (GET /v1/ai/config `features.auto_summarize`): after a new public message on a
// ticket (the customer's first message, a customer's reply, an agent's reply; not an internal
// note: docs/decisions.md "auto_summarize"), a job refreshes the stored summary exactly as POST
// /v1/tickets/{id}/ai/summary does (summary.ts summarizeAndStore: custom.ai_summary, one
// ticket.updated by the AI acting on its own, metered `summarize` to no one).
//
// Debounced, one job per ticket: the hook queues the job `delaySeconds` after the message commits
// on a queue of policy `short` keyed by the ticket (platform/jobs: at most one job per key waiting
// to start), so the messages meanwhile ride on the job already waiting, and the job reads the
// thread as it is when it runs. A message after the job started queues the next one.
// Nothing happens while AI or the switch is off: the hook asks the stored switches in its probe
// (no statement of its own), and the job asks again when it runs (AI turned off, the provider
// gone or the balance empty meanwhile: skipped, logged; a provider failure is retried).

import { sql } from 'kysely';
import type { Deps } from '../../../deps.js';
import { ApiError } from '../../../platform/http/errors.js';
import type { TicketHook } from '../../tickets/hooks.js';
import { ticketQuery } from '../../tickets/queries.js';
import { type ReadyAi, resolveAi } from '../service.js';
import { storedFeatures } from '../settings.js';
import { ticketContext } from './context.js';
import { summarizeAndStore } from './summary.js';

export const SUMMARIZE_JOB = 'ai-summarize';

export interface AutoSummarizeOptions {
  /** Seconds from a message to the summary's refresh (tests shorten it through createRuntime). */
  delaySeconds: number;
}

export const DEFAULT_AUTO_SUMMARIZE_OPTIONS: AutoSummarizeOptions = { delaySeconds: 30 };

export interface SummarizeJob {
  w: string;
  t: string;
}

/** The stored switches: AI on in the workspace (features.enabled, default on) and auto_summarize on. */
const switchedOn = (workspaceId: string) =>
  sql<boolean>`coalesce((SELECT s.features ->> 'auto_summarize' = 'true'
    AND coalesce(s.features ->> 'enabled', 'true') <> 'false'
    FROM ai_settings s WHERE s.workspace_id = ${workspaceId}), false)`;

/** Queues the ticket's refresh once the unit commits, unless one is waiting already. */
export function autoSummarizeHook(options: AutoSummarizeOptions): TicketHook {
  return {
    name: 'auto-summarize',
    order: 62,
    probe: (workspaceId) => ({
      ticket_created: switchedOn(workspaceId),
      customer_replied: switchedOn(workspaceId),
      agent_replied: switchedOn(workspaceId),
    }),
    async run(deps, u, change) {
      const fresh =
        change.trigger === 'ticket_created' ||
        change.trigger === 'customer_replied' ||
        change.trigger === 'agent_replied';
      if (!fresh || change.message?.kind !== 'reply' || change.ticket.spam) return false;
      const job: SummarizeJob = { w: u.workspaceId, t: change.ticket.id };
      u.afterCommit(async () => {
        try {
          await deps.jobs.send(SUMMARIZE_JOB, job, {
            policy: 'short',
            singletonKey: job.t,
            startAfter: new Date(Date.now() + options.delaySeconds * 1000),
            retryLimit: 2,
            retryDelaySeconds: 30,
          });
        } catch (err) {
          deps.log.warn({ err: (err as Error).message, ticket_id: job.t }, 'could not queue the summary job');
        }
      });
      return false;
    },
  };
}

/** The service reads the ticket as admins do (every team's tickets). */
const serviceReader = (workspaceId: string) => ({ workspaceId, role: 'admin' as const, teams: [] });

/** The job: the summary refreshed, unless AI or the switch is off now, or the ticket is gone. */
export async function runSummarizeJob(deps: Deps, job: SummarizeJob): Promise<void> {
  const ws = await resolveAi(deps, job.w);
  if (!ws.target || !ws.switchedOn || !storedFeatures(ws.row).auto_summarize) return;
  const skipped = (code: string) =>
    deps.log.info({ workspace_id: job.w, ticket_id: job.t, code }, 'automatic summary skipped');
  try {
    const context = await ticketContext(deps, serviceReader(job.w), job.t, { people: false });
    await summarizeAndStore(deps, {
      ai: ws as ReadyAi,
      context,
      caller: { workspaceId: job.w, userId: null },
      acting: (model) => ({ actor: { kind: 'ai', model, onBehalfOf: null } }),
      lock: async (u) => {
        const row = await ticketQuery(u.trx, job.w).where('t.id', '=', job.t).forUpdate('t').executeTakeFirst();
        return row && row.deleted_at === null ? row : null;
      },
    });
  } catch (err) {
    // Only a provider failure (502) is worth a retry; the ticket gone or no balance is not.
    if (!(err instanceof ApiError) || err.status === 502) throw err;
    skipped(err.code);
  }
}

export async function registerAutoSummarizeJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<SummarizeJob>(SUMMARIZE_JOB, (job) => runSummarizeJob(deps, job), {
    concurrency: 1,
    policy: 'short',
  });
}
