// The webhook workers of a process (runtime.ts, when jobs run): the dispatcher and deliverer of
// delivery.ts, the recovery sweeps, and the pruning of old delivery records.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';
import { pruneInBatches } from '../../platform/db/prune.js';
import { rowToEnvelope } from '../../platform/events/publisher.js';
import { Deliverer, Dispatcher, sendDisabledMail } from './delivery.js';
import type { WebhookOptions } from './options.js';
import { DELIVER_JOB, type DeliverJob, DISABLED_MAIL_JOB, enqueueDeliveries, PRUNE_JOB } from './queue.js';

// ---------------------------------------------------------------------------------------------
// 3. Sweeps and pruning.

export class Sweeper {
  /** Events are looked at from here on; a process that starts looks back an hour. */
  #eventsFrom = new Date(Date.now() - 3_600_000);

  constructor(
    private readonly deps: Deps,
    private readonly dispatcher: Dispatcher,
    private readonly opts: WebhookOptions,
  ) {}

  /** Committed events that should have deliveries and have none (the bus or a process lost them). */
  async sweepEvents(): Promise<number> {
    const db = this.deps.database.db;
    const cutoff = new Date(Date.now() - this.opts.eventGraceMs);
    const from = new Date(this.#eventsFrom.getTime() - 1000);
    const batch = 500;
    const rows = await db
      .selectFrom('events as ev')
      .selectAll('ev')
      .where('ev.occurred_at', '>=', from)
      .where('ev.occurred_at', '<', cutoff)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('webhook_endpoints as w')
            .select(sql`1`.as('one'))
            .whereRef('w.workspace_id', '=', 'ev.workspace_id')
            .where('w.enabled', '=', true)
            .whereRef('w.receives_from', '<=', 'ev.occurred_at'),
        ),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as d')
              .select(sql`1`.as('one'))
              .whereRef('d.workspace_id', '=', 'ev.workspace_id')
              .whereRef('d.event_id', '=', 'ev.id')
              .where(sql<boolean>`not d.manual`),
          ),
        ),
      )
      .orderBy('ev.occurred_at')
      .limit(pageLimit(batch))
      .execute();
    this.#eventsFrom = rows.length === batch ? rows[rows.length - 1]!.occurred_at : cutoff;
    if (rows.length === 0) return 0;
    return this.dispatcher.dispatch(rows.map(rowToEnvelope));
  }

  /** Pending deliveries long past due that no worker holds: queued again. */
  async sweepOrphans(): Promise<number> {
    const overdue = new Date(Date.now() - this.opts.orphanAfterMs);
    const rows = await sql<{ workspace_id: string; id: string }>`
      UPDATE webhook_deliveries d SET next_attempt_at = now()
       WHERE (d.workspace_id, d.id) IN (
         SELECT o.workspace_id, o.id FROM webhook_deliveries o
           JOIN webhook_endpoints w ON w.workspace_id = o.workspace_id AND w.id = o.endpoint_id
          WHERE o.status = 'pending' AND o.next_attempt_at < ${overdue}
            AND (o.lease_until IS NULL OR o.lease_until < now()) AND (w.enabled OR o.manual)
          ORDER BY o.next_attempt_at
          LIMIT 1000
          FOR UPDATE OF o SKIP LOCKED)
      RETURNING d.workspace_id, d.id`.execute(this.deps.database.db);
    const groups = new Map<string, string[]>();
    for (const r of rows.rows) {
      const g = groups.get(r.workspace_id);
      if (g) g.push(r.id);
      else groups.set(r.workspace_id, [r.id]);
    }
    for (const [w, ids] of groups) await enqueueDeliveries(this.deps, w, ids);
    if (rows.rows.length > 0) this.deps.log.warn({ deliveries: rows.rows.length }, 'webhook deliveries queued again');
    return rows.rows.length;
  }
}

/** Finished deliveries older than the event retention are deleted (pending ones are kept). */
export async function pruneDeliveries(deps: Deps, retentionMs: number, batch = 5000): Promise<number> {
  const db = deps.database.db;
  const cutoff = new Date(Date.now() - retentionMs);
  const workspaces = await db.selectFrom('webhook_endpoints').select('workspace_id').distinct().execute();
  return pruneInBatches(
    workspaces.map((w) => w.workspace_id),
    batch,
    async (workspaceId, limit) =>
      (
        await db
          .deleteFrom('webhook_deliveries')
          .where('workspace_id', '=', workspaceId)
          .where(
            'id',
            'in',
            db
              .selectFrom('webhook_deliveries')
              .select('id')
              .where('workspace_id', '=', workspaceId)
              .where('created_at', '<', cutoff)
              .where('status', '!=', 'pending')
              .limit(pageLimit(limit)),
          )
          .executeTakeFirst()
      ).numDeletedRows,
  );
}

// ---------------------------------------------------------------------------------------------
// Wiring (runtime.ts, when jobs run).

export interface WebhookWorkers {
  dispatcher: Dispatcher;
  deliverer: Deliverer;
  sweeper: Sweeper;
  stop(): Promise<void>;
}

export async function registerWebhooks(deps: Deps): Promise<WebhookWorkers> {
  const opts = deps.webhookOptions;
  const dispatcher = new Dispatcher(deps, opts.batchWindowMs);
  const deliverer = new Deliverer(deps, opts);
  const sweeper = new Sweeper(deps, dispatcher, opts);

  await deps.jobs.work<DeliverJob>(DELIVER_JOB, (job) => deliverer.handle(job), {
    concurrency: opts.workers,
    pollingIntervalSeconds: opts.pollSeconds,
  });
  await deps.jobs.work<{ w: string; e: string }>(DISABLED_MAIL_JOB, async (job) => {
    await sendDisabledMail(deps, job);
  });
  await deps.jobs.work(PRUNE_JOB, async () => {
    const n = await pruneDeliveries(deps, deps.config.eventRetentionMs);
    if (n > 0) deps.log.info({ webhook_deliveries: n }, 'pruned');
  });
  await deps.jobs.schedule(PRUNE_JOB, '23 * * * *');
  const unsubscribe = deps.bus.subscribe(dispatcher.onEvent);

  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> = Promise.resolve();
  const loop = (ms: number) => {
    timer = setTimeout(() => {
      sweeping = (async () => {
        try {
          await sweeper.sweepEvents();
          await sweeper.sweepOrphans();
        } catch (err) {
          deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'webhook sweep failed');
        }
      })();
      void sweeping.then(() => {
        if (timer) loop(opts.sweepMs);
      });
    }, ms);
    timer.unref();
  };
  // The first sweep soon after start: what a stopped process left behind goes out now.
  loop(Math.min(1000, opts.sweepMs));

  return {
    dispatcher,
    deliverer,
    sweeper,
    async stop() {
      unsubscribe();
      if (timer) clearTimeout(timer);
      timer = null;
      await sweeping;
      await dispatcher.idle();
    },
  };
}
