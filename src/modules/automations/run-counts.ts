// run_count: how many times each automation held and acted. A run counts once the ticket's
// change has committed (a run in a transaction that rolls back did not happen). Counts wait in
// memory and reach automation_run_counts in one statement per workspace at most every second
// (and when the process stops), never inside a ticket's transaction: every ticket change of a
// workspace would otherwise queue on the same automations' rows.
//
// Reads add what this process counted and has not written yet, so a caller sees its own
// tickets' runs at once; other processes' runs show within a second. A process that dies loses
// at most its last second of counts (they are statistics, not records).
import { sql } from 'kysely';
import type { Database } from '../../platform/db/index.js';
import { unscoped } from '../../platform/db/scope.js';

interface Logger {
  warn(obj: object, msg: string): void;
}

export class RunCounts {
  /** workspace → automation → runs not yet written. */
  #pending = new Map<string, Map<string, number>>();
  /** What a flush is writing right now (still added to reads until it is written). */
  #writing = new Map<string, Map<string, number>>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly database: Database,
    private readonly log: Logger,
    private readonly flushMs = 1000,
  ) {}

  /** Counts one run of each id (after the change committed). */
  add(workspaceId: string, ids: string[]): void {
    if (ids.length === 0) return;
    let counts = this.#pending.get(workspaceId);
    if (!counts) {
      counts = new Map();
      this.#pending.set(workspaceId, counts);
    }
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    if (!this.#timer) {
      // Out of the caller's workspace scope: the flush writes every workspace's counts.
      this.#timer = unscoped(() =>
        setTimeout(() => {
          this.#timer = null;
          void this.flush();
        }, this.flushMs),
      );
      this.#timer.unref();
    }
  }

  /** Runs of an automation this process counted and has not written yet. */
  unwritten(workspaceId: string, id: string): number {
    return (this.#pending.get(workspaceId)?.get(id) ?? 0) + (this.#writing.get(workspaceId)?.get(id) ?? 0);
  }

  /** Writes the counts (flushes run one after another). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  /** One statement per workspace, rows in id order (concurrent writers lock them alike). Never throws. */
  async #write(): Promise<void> {
    this.#writing = this.#pending;
    this.#pending = new Map();
    for (const [workspaceId, counts] of this.#writing) {
      const entries = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
      const values = sql.join(entries.map(([id, n]) => sql`(${id}::uuid, ${n}::int8)`));
      try {
        await sql`
          UPDATE automation_run_counts c SET run_count = c.run_count + v.n
            FROM (VALUES ${values}) AS v (id, n)
           WHERE c.workspace_id = ${workspaceId} AND c.automation_id = v.id`.execute(this.database.db);
      } catch (err) {
        this.log.warn({ err: (err as Error).message, workspace_id: workspaceId }, 'automation run counts not saved');
      }
    }
    this.#writing = new Map();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.flush();
  }
}
