// The event bus's interface, apart from the factory (index.ts) so that its implementations
// (memory.ts, nats.ts) import only this file, not the factory that imports them.
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
  | { type: 'api_key.deleted'; workspace_id: string; api_key_id: string }
  // The chat widget (src/modules/widget): a visitor signed out, the widget was turned off (or on
  // again), a contact was deleted: their visitors' sockets close.
  | { type: 'widget.visitor_revoked'; workspace_id: string; visitor_id: string }
  | { type: 'widget.disabled'; workspace_id: string }
  | { type: 'widget.enabled'; workspace_id: string }
  | { type: 'contact.deleted'; workspace_id: string; contact_id: string };

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
