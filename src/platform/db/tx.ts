// The unit of a write: one transaction, its rows, its events. Events are appended last,
// right before COMMIT (that is where the workspace's seq lock is taken), and published
// to the bus after COMMIT.
import type { Kysely, Transaction } from 'kysely';
import type { EventDraft, EventEnvelope } from '../events/envelope.js';
import { appendEvents } from '../events/outbox.js';
import type { EventPublisher } from '../events/publisher.js';
import type { DB } from './schema.js';

export interface Unit {
  readonly trx: Transaction<DB>;
  readonly workspaceId: string;
  emit(draft: EventDraft): void;
  /** Work to do only once the transaction has committed (jobs, notifications). */
  afterCommit(fn: () => void | Promise<void>): void;
}

export class Writer {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly publisher: EventPublisher,
  ) {}

  async run<T>(workspaceId: string, fn: (unit: Unit) => Promise<T>): Promise<T> {
    const drafts: EventDraft[] = [];
    const after: Array<() => void | Promise<void>> = [];
    let envelopes: EventEnvelope[] = [];
    const result = await this.db.transaction().execute(async (trx) => {
      const value = await fn({
        trx,
        workspaceId,
        emit: (d) => drafts.push(d),
        afterCommit: (f) => after.push(f),
      });
      envelopes = await appendEvents(trx, workspaceId, drafts);
      return value;
    });
    await this.publisher.published(envelopes);
    for (const f of after) {
      try {
        await f();
      } catch {
        // after-commit work is best effort; durable work goes through the job queue
      }
    }
    return result;
  }
}
