import type { EventEnvelope } from '../events/envelope.js';
import type { BusHandler, ControlHandler, ControlMessage, EventBus } from './types.js';

/** One process: handlers run on the next tick, after the publisher's own work. */
export class MemoryBus implements EventBus {
  readonly kind = 'memory' as const;
  readonly #handlers = new Set<BusHandler>();
  readonly #control = new Set<ControlHandler>();

  async publishControl(msg: ControlMessage): Promise<void> {
    queueMicrotask(() => {
      for (const h of this.#control) runControl(h, msg);
    });
  }

  subscribeControl(handler: ControlHandler): () => void {
    this.#control.add(handler);
    return () => this.#control.delete(handler);
  }

  async publish(events: EventEnvelope[]): Promise<void> {
    if (events.length === 0 || this.#handlers.size === 0) return;
    queueMicrotask(() => {
      for (const e of events) for (const h of this.#handlers) dispatch(h, e);
    });
  }

  subscribe(handler: BusHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  async ping(): Promise<void> {}
  async close(): Promise<void> {
    this.#handlers.clear();
    this.#control.clear();
  }
}

export function runControl(h: ControlHandler, msg: ControlMessage): void {
  try {
    h(msg);
  } catch {
    // as with events: one failing listener does not stop the others
  }
}

export function dispatch(h: BusHandler, e: EventEnvelope): void {
  try {
    h(e);
  } catch {
    // A failing reactor must not stop the others; each reactor logs its own failures.
  }
}
