import { connect, type NatsConnection } from 'nats';
import type { EventEnvelope } from '../events/envelope.js';
import { dispatch, runControl } from './memory.js';
import type { BusHandler, ControlHandler, ControlMessage, EventBus } from './types.js';

const SUBJECT = 'svc.events';
const CONTROL = 'svc.control';

/**
 * Core NATS pub/sub. Durability is the outbox's job (a sweeper republishes whatever was
 * committed but not published), so the bus itself can stay at-most-once and fast.
 */
export class NatsBus implements EventBus {
  readonly kind = 'nats' as const;
  readonly #handlers = new Set<BusHandler>();
  readonly #control = new Set<ControlHandler>();
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();

  /**
   * False from a disconnect to the reconnect. While it is false publish() throws rather than
   * let the client buffer: buffered messages go out on reconnect, possibly before the other
   * processes have subscribed again, and are lost to them while the outbox counts them as
   * published. Left unpublished, the outbox's sweeper republishes them after its grace time.
   */
  #connected = true;

  private constructor(private readonly nc: NatsConnection) {
    (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.#connected = false;
        else if (s.type === 'reconnect') this.#connected = true;
      }
    })().catch(() => {});
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
    const control = nc.subscribe(CONTROL);
    (async () => {
      for await (const m of control) {
        let msg: ControlMessage;
        try {
          msg = JSON.parse(this.#decoder.decode(m.data)) as ControlMessage;
        } catch {
          continue;
        }
        for (const h of this.#control) runControl(h, msg);
      }
    })().catch(() => {});
  }

  static async connect(url: string): Promise<NatsBus> {
    const nc = await connect({ servers: url, name: 'helpdesk', maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    return new NatsBus(nc);
  }

  async publish(events: EventEnvelope[]): Promise<void> {
    if (!this.#connected || this.nc.isClosed()) throw new Error('NATS is not connected');
    for (const e of events) this.nc.publish(`${SUBJECT}.${e.workspace_id}`, this.#encoder.encode(JSON.stringify(e)));
  }

  async publishControl(msg: ControlMessage): Promise<void> {
    this.nc.publish(CONTROL, this.#encoder.encode(JSON.stringify(msg)));
  }

  subscribeControl(handler: ControlHandler): () => void {
    this.#control.add(handler);
    return () => this.#control.delete(handler);
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
    this.#control.clear();
    await this.nc.drain().catch(() => {});
  }
}
