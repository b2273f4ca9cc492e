// What the gateway's parts share: its dependencies, its limits, the sockets and hubs it holds,
// and the few operations every part calls. gateway.ts holds the state (class Gateway); the jobs
// are in their own files: connections.ts (upgrades, tokens, heartbeats, closing), joins.ts
// (who may join which topic, and leaving), live.ts (presence, typing, broadcasts), replay.ts
// (the event log read on a widget's join), queries.ts (the SQL).
import type { WebSocketServer } from 'ws';
import type { Deps } from '../deps.js';
import type { Conn, GatewayLimits } from './conn.js';
import type { Hub } from './hub.js';
import type { PeerLink } from './peers.js';
import type { Presence } from './presence.js';
import { encodeFrame, type Frame, reply } from './protocol.js';
import type { Revocations } from './revocations.js';

export type GatewayDeps = Pick<Deps, 'config' | 'database' | 'bus' | 'tokens' | 'log'>;

export const AGENT_PATH = '/socket/websocket';
export const WIDGET_PATH = '/socket/widget/websocket';
/** Topics one socket may have joined at once. */
export const MAX_TOPICS_PER_SOCKET = 100;
/** Presence of a workspace's people on the agent socket (internal topic, never joined by clients). */
export const AGENTS_PREFIX = 'agents:';

export const DEFAULT_LIMITS: GatewayLimits = {
  maxBufferedBytes: 1024 * 1024,
  heartbeatTimeoutMs: 60_000,
  presencePerWindow: 10,
  typingPerWindow: 20,
  windowMs: 10_000,
  gapWaitMs: 150,
};

/** The gateway's state as its parts see it (the class Gateway in gateway.ts). */
export interface GatewayCore {
  readonly deps: GatewayDeps;
  readonly limits: GatewayLimits;
  readonly node: string;
  readonly wss: WebSocketServer;
  readonly conns: Set<Conn>;
  readonly byUser: Map<string, Set<Conn>>;
  readonly byWorkspace: Map<string, Set<Conn>>;
  readonly hubs: Map<string, Hub>;
  readonly revoked: Revocations;
  readonly presence: Presence;
  /** CHECK_ORIGINS as browsers send Origin (scheme://host[:port], lowercase, no path). */
  readonly origins: Set<string>;
  readonly peers: PeerLink | null;
  readonly closing: boolean;
  /** Counts an event's deliveries to sockets (stats()). */
  delivered(n: number): void;
  /** Called by a socket whose unsent data passed the bound (conn.ts). */
  slow(conn: Conn): void;
  /** A frame from a socket (connections.ts hands every text frame here). */
  onFrame(conn: Conn, f: Frame): void;
}

/** The reply to a client's frame (phx_reply with its join_ref and ref). */
export function answer(conn: Conn, f: Frame, status: 'ok' | 'error', response: Record<string, unknown> = {}): void {
  conn.send(encodeFrame(f.joinRef, f.ref, f.topic, 'phx_reply', reply(status, response)));
}
