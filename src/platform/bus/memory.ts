import type { EventEnvelope } from '../events/envelope.js';
import type { BusHandler, EventBus } from './index.js';

/** One process: handlers run on the next tick, after the publisher's own work. */
export class MemoryBus implements EventBus {
  readonly kind = 'memory' as const;
  readonly #handlers = new Set<BusHandler>();

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
  }
}

export function dispatch(h: BusHandler, e: EventEnvelope): void {
  try {
    h(e);
  } catch {
    // A failing reactor must not stop the others; each reactor logs its own failures.
  }
}
