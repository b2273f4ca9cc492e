// The event bus between processes: committed envelopes go out here, and the gateway,
// the webhook dispatcher and other reactors read them. In-process by default; NATS when
// NATS_URL is set, so every process of a scaled-out deployment sees every event.
import type { EventBus } from './types.js';

export type { BusHandler, ControlHandler, ControlMessage, EventBus } from './types.js';

export async function openBus(natsUrl: string | null): Promise<EventBus> {
  if (!natsUrl) {
    const { MemoryBus } = await import('./memory.js');
    return new MemoryBus();
  }
  const { NatsBus } = await import('./nats.js');
  return NatsBus.connect(natsUrl);
}
