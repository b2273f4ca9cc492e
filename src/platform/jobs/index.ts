// The durable job queue: pg-boss on the service's own database (PostgreSQL, or the
// embedded PGlite through the same session), for retries and timers that must survive
// a crash or a restart (webhook deliveries, email, SLA timers, maintenance).
import PgBoss from 'pg-boss';
import type { Database } from '../db/index.js';

export interface JobLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface JobOptions {
  /** Run at (or after) this time. */
  startAfter?: Date;
  /** Retries after the first failure (exponential backoff). */
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** With the queue's policy `short`: at most one queued (not yet started) job per key. */
  singletonKey?: string;
  /** The queue's policy, when this send creates it (every send and work of a queue must say the same). */
  policy?: QueuePolicy;
}

/**
 * pg-boss's queue policies used here: `standard`, or `short`, which keeps at most one job per
 * singletonKey waiting to start (a send while one waits is dropped; a job that started no longer
 * counts), for debounced work such as auto_summarize. Set when the queue is created.
 */
export type QueuePolicy = 'standard' | 'short';

/** PostgreSQL's SQLSTATE for a transaction rolled back to break a deadlock. */
const DEADLOCK = '40P01';
const QUEUE_CREATE_ATTEMPTS = 5;

export type JobHandler<T> = (data: T, job: { id: string; retryCount: number }) => Promise<void>;

export class Jobs {
  readonly #boss: PgBoss;
  readonly #queues = new Set<string>();
  readonly #workers = new Map<string, string[]>();
  #started = false;
  /** pg-boss's statements still running, and whether the queue has stopped (see stop()). */
  readonly #inflight = new Set<Promise<unknown>>();
  #closed = false;
  readonly #stopTimeoutMs: number;
  readonly schema: string;

  constructor(
    database: Database,
    private readonly log: JobLogger,
    opts: {
      /** How long stop() waits for handlers in flight. */
      stopTimeoutMs?: number;
      /** The database schema of the queue (tests on a shared PostgreSQL give each service its own). */
      schema?: string;
      /**
       * pg-boss's maintenance (expiry, archiving) and cron timekeeping in this process (default
       * true). False in a process that only sends jobs (ROLE=api): the workers' processes do them.
       */
      background?: boolean;
    } = {},
  ) {
    this.schema = opts.schema ?? 'pgboss';
    this.#stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
    this.#boss = new PgBoss({
      // pg-boss types rows as any; ours are unknown until read.
      db: { executeSql: (text, values) => this.#execute(database, text, values) as Promise<{ rows: never[] }> },
      schema: this.schema,
      // Maintenance every few minutes is plenty; polling stays at the default 2 s.
      maintenanceIntervalSeconds: 300,
      archiveCompletedAfterSeconds: 3600,
      ...(opts.background === false ? { supervise: false, schedule: false } : {}),
    });
    this.#boss.on('error', (err) => this.log.error({ err: String(err) }, 'job queue error'));
  }

  #execute(database: Database, text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
    // pg-boss reports a handler's outcome (complete / fail) without awaiting it, so a handler that
    // ends as the process stops would otherwise write on a closed pool, an unhandled rejection.
    // Once stopped, its statements are dropped: a job still marked active then expires and is
    // retried by the next process, which is what a crash would have done.
    // (pg-boss reads a missing result as nothing affected.)
    if (this.#closed) return Promise.resolve(null as unknown as { rows: unknown[] });
    const p = database.executeSql(text, values as unknown[]);
    this.#inflight.add(p);
    void p.then(
      () => this.#inflight.delete(p),
      () => this.#inflight.delete(p),
    );
    return p;
  }

  async start(): Promise<void> {
    await this.#boss.start();
    this.#started = true;
  }

  async ensureQueue(name: string, policy: QueuePolicy = 'standard'): Promise<void> {
    if (this.#queues.has(name)) return;
    // pg-boss's create_queue deadlocks when two processes create the same queue at once (its
    // INSERT into the queue table and its ALTER TABLE … REFERENCES that table take their locks
    // in opposite orders): several processes starting together on a fresh database. PostgreSQL
    // rolls one of them back whole; by then the other has the queue, and the retry finds it.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#boss.createQueue(name, { name, policy });
        break;
      } catch (err) {
        if ((err as { code?: unknown }).code !== DEADLOCK || attempt >= QUEUE_CREATE_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 50));
      }
    }
    this.#queues.add(name);
  }

  async send<T extends object>(name: string, data: T, opts: JobOptions = {}): Promise<string | null> {
    await this.ensureQueue(name, opts.policy);
    const id = await this.#boss.send(name, data, {
      ...(opts.startAfter ? { startAfter: opts.startAfter } : {}),
      retryLimit: opts.retryLimit ?? 5,
      retryDelay: opts.retryDelaySeconds ?? 10,
      retryBackoff: true,
      ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
    });
    if (!opts.startAfter) for (const w of this.#workers.get(name) ?? []) this.#boss.notifyWorker(w);
    return id;
  }

  /**
   * Runs `handler` for each job of the queue. `concurrency` workers poll independently (each
   * takes one job at a time). A worker that just handled a job fetches again at once, and a
   * job sent from this process wakes the queue's workers, so work never waits for the
   * polling interval while there is some; the interval only paces an idle queue.
   */
  async work<T extends object>(
    name: string,
    handler: JobHandler<T>,
    opts: { pollingIntervalSeconds?: number; concurrency?: number; policy?: QueuePolicy } = {},
  ): Promise<void> {
    await this.ensureQueue(name, opts.policy);
    for (let i = 0; i < (opts.concurrency ?? 1); i++) {
      let workerId = '';
      workerId = await this.#boss.work<T>(
        name,
        { pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 2, batchSize: 1 },
        async (jobs) => {
          try {
            for (const job of jobs) {
              try {
                await handler(job.data, { id: job.id, retryCount: (job as { retryCount?: number }).retryCount ?? 0 });
              } catch (err) {
                this.log.warn(
                  { job: name, id: job.id, err: err instanceof Error ? err.message : String(err) },
                  'job failed',
                );
                throw err;
              }
            }
          } finally {
            if (jobs.length > 0) this.#boss.notifyWorker(workerId);
          }
        },
      );
      const ids = this.#workers.get(name) ?? [];
      ids.push(workerId);
      this.#workers.set(name, ids);
    }
  }

  /** A recurring job (cron syntax, UTC); one run per tick across all processes. */
  async schedule(name: string, cron: string): Promise<void> {
    await this.ensureQueue(name);
    await this.#boss.schedule(name, cron);
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    await this.#boss.stop({ graceful: true, wait: true, timeout: this.#stopTimeoutMs, close: false });
    this.#closed = true;
    // What pg-boss started before it stopped ends before the database closes after us.
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }
}
