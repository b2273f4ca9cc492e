// After commit, envelopes go to the bus and are marked published in the background.
// If the process dies between COMMIT and publish, the sweeper (every process runs one)
// republishes what is still unmarked: events are at-least-once, keyed by id.
import { sql } from 'kysely';
import type { EventBus } from '../bus/index.js';
import type { Database } from '../db/index.js';
import { pageLimit } from '../db/keyset.js';
import { unscoped } from '../db/scope.js';
import type { EventEnvelope } from './envelope.js';

export interface PublisherLogger {
  warn(obj: object, msg: string): void;
}

export class EventPublisher {
  #pending = new Map<string, number[]>();
  #flushTimer: NodeJS.Timeout | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  /** The sweeper looks at events from here on (set back to the start-up window at start). */
  #sweptUpTo: Date;

  constructor(
    private readonly database: Database,
    private readonly bus: EventBus,
    private readonly log: PublisherLogger,
    private readonly opts = { flushMs: 200, sweepMs: 5000, graceMs: 10_000, startupWindowMs: 3_600_000 },
  ) {
    // A process that starts looks back an hour: events its predecessor committed and
    // never published (it died in between) are republished.
    this.#sweptUpTo = new Date(Date.now() - opts.startupWindowMs);
  }

  /** Called right after a transaction committed. Never throws: the sweeper covers failures. */
  async published(events: EventEnvelope[]): Promise<void> {
    if (events.length === 0) return;
    try {
      await this.bus.publish(events);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'event publish failed; the sweeper will retry');
      return;
    }
    for (const e of events) {
      const list = this.#pending.get(e.workspace_id);
      if (list) list.push(e.seq);
      else this.#pending.set(e.workspace_id, [e.seq]);
    }
    // Out of the request's workspace scope: the flush marks every workspace's events.
    this.#flushTimer ??= unscoped(() =>
      setTimeout(() => {
        this.#flushTimer = null;
        this.#flushing = this.flush();
      }, this.opts.flushMs),
    );
  }

  /** Marks published events, one statement per workspace. */
  async flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = new Map();
    for (const [workspaceId, seqs] of batch) {
      try {
        await this.database.db
          .updateTable('events')
          .set({ published: true })
          .where('workspace_id', '=', workspaceId)
          .where('seq', 'in', seqs)
          .execute();
      } catch (err) {
        this.log.warn({ err: String(err) }, 'marking events published failed; they may be republished');
      }
    }
  }

  /**
   * Republishes events committed more than graceMs ago and never marked published. Each sweep
   * reads only the events that came of age since the last one (with a second of overlap).
   */
  async sweep(): Promise<number> {
    const cutoff = new Date(Date.now() - this.opts.graceMs);
    const from = new Date(this.#sweptUpTo.getTime() - 1000);
    const batch = 500;
    const rows = await this.database.db
      .selectFrom('events')
      .selectAll()
      .where('occurred_at', '>=', from)
      .where('occurred_at', '<', cutoff)
      .where(sql<boolean>`not published`)
      .orderBy('occurred_at')
      .orderBy('workspace_id')
      .orderBy('seq')
      .limit(pageLimit(batch))
      .execute();
    // A full batch may have more behind it: continue from its last event next time.
    this.#sweptUpTo = rows.length === batch ? rows[rows.length - 1]!.occurred_at : cutoff;
    if (rows.length === 0) return 0;
    const events = rows.map(rowToEnvelope);
    await this.bus.publish(events);
    const byWs = new Map<string, number[]>();
    for (const e of events) byWs.set(e.workspace_id, [...(byWs.get(e.workspace_id) ?? []), e.seq]);
    for (const [ws, seqs] of byWs) {
      await this.database.db
        .updateTable('events')
        .set({ published: true })
        .where('workspace_id', '=', ws)
        .where('seq', 'in', seqs)
        .execute();
    }
    return events.length;
  }

  start(): void {
    const loop = () => {
      this.#sweepTimer = setTimeout(async () => {
        try {
          await this.sweep();
        } catch (err) {
          this.log.warn({ err: String(err) }, 'event sweep failed');
        }
        if (this.#sweepTimer) loop();
      }, this.opts.sweepMs);
      this.#sweepTimer.unref();
    };
    loop();
  }

  async stop(): Promise<void> {
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    this.#sweepTimer = null;
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    await this.#flushing;
    await this.flush();
  }
}

export function rowToEnvelope(r: {
  id: string;
  seq: number;
  workspace_id: string;
  type: string;
  visibility: 'agents' | 'public';
  topics: string[];
  team_id: string | null;
  data: Record<string, unknown>;
  occurred_at: Date;
}): EventEnvelope {
  return {
    id: r.id,
    seq: r.seq,
    workspace_id: r.workspace_id,
    type: r.type,
    visibility: r.visibility,
    topics: r.topics,
    data: r.data,
    occurred_at: r.occurred_at.toISOString(),
    team_id: r.team_id,
  };
}
