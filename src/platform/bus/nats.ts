import { connect, type NatsConnection } from 'nats';
import type { EventEnvelope } from '../events/envelope.js';
import type { BusHandler, EventBus } from './index.js';
import { dispatch } from './memory.js';

const SUBJECT = 'svc.events';

/**
 * Core NATS pub/sub. Durability is the outbox's job (a sweeper republishes whatever was
 * committed but not published), so the bus itself can stay at-most-once and fast.
 */
export class NatsBus implements EventBus {
  readonly kind = 'nats' as const;
  readonly #handlers = new Set<BusHandler>();
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();

  private constructor(private readonly nc: NatsConnection) {
    const sub = nc.subscribe(`${SUBJECT}.>`);
    (async () => {
      for await (const m of sub) {
        let e: EventEnvelope;
        try {
          e = JSON.parse(this.#decoder.decode(m.data)) as EventEnvelope;
        } catch {
          continue;
        }
        for (const h of this.#handlers) dispatch(h, e);
      }
    })().catch(() => {});
  }

  static async connect(url: string): Promise<NatsBus> {
    const nc = await connect({ servers: url, name: 'helpdesk', maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    return new NatsBus(nc);
  }

  async publish(events: EventEnvelope[]): Promise<void> {
    for (const e of events) this.nc.publish(`${SUBJECT}.${e.workspace_id}`, this.#encoder.encode(JSON.stringify(e)));
  }

  subscribe(handler: BusHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  async ping(): Promise<void> {
    await this.nc.flush();
  }

  async close(): Promise<void> {
    this.#handlers.clear();
    await this.nc.drain().catch(() => {});
  }
}
