// The event bus between processes: committed envelopes go out here, and the gateway,
// the webhook dispatcher and other reactors read them. In-process by default; NATS when
// NATS_URL is set, so every process of a scaled-out deployment sees every event.
import type { EventEnvelope } from '../events/envelope.js';

export type BusHandler = (event: EventEnvelope) => void;

/**
 * Notices between processes that are not events (not stored, no seq): e.g. "close the
 * sockets of these sessions" after a logout, a password change or a removal.
 */
export type ControlMessage =
  | { type: 'sessions.revoked'; user_id: string; session_ids: string[] | 'all' }
  | { type: 'member.removed'; workspace_id: string; user_id: string }
  | { type: 'workspace.deleted'; workspace_id: string }
  | { type: 'teams.changed'; workspace_id: string; user_ids: string[] }
  | { type: 'api_key.deleted'; workspace_id: string; api_key_id: string };

export type ControlHandler = (msg: ControlMessage) => void;

export interface EventBus {
  readonly kind: 'memory' | 'nats';
  publish(events: EventEnvelope[]): Promise<void>;
  subscribe(handler: BusHandler): () => void;
  publishControl(msg: ControlMessage): Promise<void>;
  subscribeControl(handler: ControlHandler): () => void;
  /** Resolves when the bus is reachable (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openBus(natsUrl: string | null): Promise<EventBus> {
  if (!natsUrl) {
    const { MemoryBus } = await import('./memory.js');
    return new MemoryBus();
  }
  const { NatsBus } = await import('./nats.js');
  return NatsBus.connect(natsUrl);
}
