// The unit of a write: one transaction, its rows, its events. Events are appended last,
// right before COMMIT (that is where the workspace's seq lock is taken), and published
// to the bus after COMMIT.
//
// A request carrying an Idempotency-Key runs its handler inside a fence (`within`): every
// transaction the request commits is bound to the key's claim in that same transaction, and a
// retry after a crash replays what those transactions returned instead of running them again
// (src/platform/http/idempotency.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';
import type { EventDraft, EventEnvelope } from '../events/envelope.js';
import { appendEvents } from '../events/outbox.js';
import type { EventPublisher } from '../events/publisher.js';
import type { DB } from './schema.js';
import { unscoped, withWorkspace } from './scope.js';

export interface Unit {
  readonly trx: Transaction<DB>;
  readonly workspaceId: string;
  emit(draft: EventDraft): void;
  /** Work to do only once the transaction has committed (jobs, notifications). */
  afterCommit(fn: () => void | Promise<void>): void;
}

/** A transaction whose events go to the workspaces it names (Writer.runAcross). */
export interface CrossUnit {
  readonly trx: Transaction<DB>;
  emitIn(workspaceId: string, draft: EventDraft): void;
  afterCommit(fn: () => void | Promise<void>): void;
}

/** What binds a request's transactions to its Idempotency-Key (platform/http/idempotency.ts). */
export interface WriteFence {
  /**
   * Inside each transaction, last before COMMIT, with what the transaction returns: records it
   * under the key's claim. Throws when the claim is no longer this request's (another process
   * took the key over), which rolls the transaction back.
   */
  bind(trx: Transaction<DB>, value: unknown): Promise<void>;
  /** After COMMIT of a transaction that `bind` recorded. */
  bound(value: unknown): void;
  /**
   * The next result of a transaction that already committed under this key before a crash, or
   * undefined when the request is past what committed: `run` returns it instead of running again.
   */
  replayed(): { value: unknown } | undefined;
  /** Once the answer is stored: later writes started by the request (after-commit work) are not the key's. */
  readonly closed: boolean;
}

export class Writer {
  private readonly fences = new AsyncLocalStorage<WriteFence>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly publisher: EventPublisher,
  ) {}

  /** Runs a request's handler with its Idempotency-Key's fence around every `run` it makes. */
  within<T>(fence: WriteFence, fn: () => T): T {
    return this.fences.run(fence, fn);
  }

  /** One transaction of one workspace, inside that workspace's scope (scope.ts: the wall). */
  async run<T>(workspaceId: string, fn: (unit: Unit) => Promise<T>): Promise<T> {
    return withWorkspace(workspaceId, () =>
      this.transact((trx, emitIn, afterCommit) =>
        fn({ trx, workspaceId, emit: (d) => emitIn(workspaceId, d), afterCommit }),
      ),
    );
  }

  /**
   * One transaction whose events belong to several workspaces: a change to something shown in
   * each of them (a person's own name is part of their member record in every workspace).
   */
  async runAcross<T>(fn: (unit: CrossUnit) => Promise<T>): Promise<T> {
    return unscoped(() => this.transact((trx, emitIn, afterCommit) => fn({ trx, emitIn, afterCommit })));
  }

  private async transact<T>(
    fn: (
      trx: Transaction<DB>,
      emitIn: (workspaceId: string, draft: EventDraft) => void,
      afterCommit: (f: () => void | Promise<void>) => void,
    ) => Promise<T>,
  ): Promise<T> {
    const open = this.fences.getStore();
    const fence = open && !open.closed ? open : undefined;
    const replay = fence?.replayed();
    if (replay) return replay.value as T;
    const drafts = new Map<string, EventDraft[]>();
    const after: Array<() => void | Promise<void>> = [];
    const envelopes: EventEnvelope[] = [];
    const result = await this.db.transaction().execute(async (trx) => {
      const value = await fn(
        trx,
        (workspaceId, d) => {
          const list = drafts.get(workspaceId);
          if (list) list.push(d);
          else drafts.set(workspaceId, [d]);
        },
        (f) => after.push(f),
      );
      if (fence) await fence.bind(trx, value);
      // Each workspace's seq lock in one order, so two such transactions cannot deadlock.
      // The last append takes the COMMIT along (outbox.ts): nothing may follow it here.
      const workspaces = [...drafts.keys()].sort();
      for (const [i, workspaceId] of workspaces.entries()) {
        const last = i === workspaces.length - 1;
        envelopes.push(...(await appendEvents(trx, workspaceId, drafts.get(workspaceId)!, last)));
      }
      return value;
    });
    fence?.bound(result);
    // What follows the commit is not part of the request's keyed writes.
    await this.fences.exit(async () => {
      await this.publisher.published(envelopes);
      for (const f of after) {
        try {
          await f();
        } catch {
          // after-commit work is best effort; durable work goes through the job queue
        }
      }
    });
    return result;
  }
}
