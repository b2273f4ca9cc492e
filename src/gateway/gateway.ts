// The realtime gateway (docs/realtime.md): Phoenix Channels v2 over WebSocket.
// Push only: committed events from the bus fan out to the sockets allowed to see them, plus
// presence and typing between people looking at the same ticket. Tokens are checked once, at
// connect; control notices from the API (logout, removal, team changes) close sockets.
//
// It runs on the API's HTTP server by default (runtime.ts attaches it to the `upgrade` event)
// and alone with `npm run gateway` (src/gateway-main.ts). docs/realtime.md is the client guide.
//
// This file holds the gateway's state and its life (start, close), routes the frames sockets
// send, and takes what comes from the bus and the other gateways. The jobs are in their own
// files (core.ts lists them).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { ControlMessage } from '../platform/bus/index.js';
import type { EventEnvelope } from '../platform/events/envelope.js';
import type { Conn, GatewayLimits } from './conn.js';
import { dropSlow, handleUpgrade, sweepIdle } from './connections.js';
import { applyControl } from './control.js';
import { AGENTS_PREFIX, answer, DEFAULT_LIMITS, type GatewayCore, type GatewayDeps } from './core.js';
import type { Hub } from './hub.js';
import { join, part } from './joins.js';
import { agentsChanged, broadcastLocal, onAgentTyping, onPresence, onWidgetTyping } from './live.js';
import { openPeers, type PeerLink, type PeerMessage } from './peers.js';
import { BEAT_MS, Presence } from './presence.js';
import { CLOSE, type Frame, MAX_PAYLOAD } from './protocol.js';
import { Revocations } from './revocations.js';
import { parseTopic } from './topics.js';
import { originOf } from './upgrade.js';

export {
  AGENT_PATH,
  DEFAULT_LIMITS,
  type GatewayDeps,
  MAX_TOPICS_PER_SOCKET,
  WIDGET_PATH,
} from './core.js';
export { MAX_REPLAYED } from './replay.js';

export class Gateway implements GatewayCore {
  readonly limits: GatewayLimits = { ...DEFAULT_LIMITS };
  /** This process among the gateway processes (presence entries and peer messages carry it). */
  readonly node = randomUUID();
  readonly wss: WebSocketServer;
  readonly conns = new Set<Conn>();
  readonly byUser = new Map<string, Set<Conn>>();
  readonly byWorkspace = new Map<string, Set<Conn>>();
  readonly hubs = new Map<string, Hub>();
  readonly revoked = new Revocations();
  readonly presence: Presence;
  readonly origins: Set<string>;
  peers: PeerLink | null = null;
  closing = false;
  readonly #unsubscribe: Array<() => void> = [];
  #sweep: NodeJS.Timeout | null = null;
  #beat: NodeJS.Timeout | null = null;
  #deliveries = 0;

  constructor(readonly deps: GatewayDeps) {
    this.origins = new Set(deps.config.checkOrigins.map(originOf).filter((o): o is string => o !== null));
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_PAYLOAD,
      perMessageDeflate: false,
      clientTracking: false,
      // The Phoenix client's `authToken` option offers ["phoenix", "base64url.bearer.phx.<token>"].
      handleProtocols: (protocols) => (protocols.has('phoenix') ? 'phoenix' : false),
    });
    this.presence = new Presence(this.node, (topic, diff) =>
      topic.startsWith(AGENTS_PREFIX)
        ? agentsChanged(this, topic.slice(AGENTS_PREFIX.length), diff)
        : broadcastLocal(this, topic, 'presence_diff', diff, null),
    );
  }

  /** Subscribes to the bus (events and control notices) and, with NATS, to the other gateways. */
  async start(): Promise<void> {
    this.#unsubscribe.push(this.deps.bus.subscribe((e) => this.#onEvent(e)));
    this.#unsubscribe.push(this.deps.bus.subscribeControl((m) => this.#onControl(m)));
    if (this.deps.config.natsUrl) {
      this.peers = await openPeers(
        this.deps.config.natsUrl,
        this.node,
        (m) => this.#onPeer(m),
        (err) => this.deps.log.warn({ err: String(err) }, 'gateway peer link error'),
      );
      this.presence.peers = this.peers;
      this.presence.hello();
      this.#beat = setInterval(() => this.presence.beat(), BEAT_MS);
      this.#beat.unref();
    }
    this.#scheduleSweep();
  }

  #scheduleSweep(): void {
    const every = Math.max(50, Math.min(5000, Math.floor(this.limits.heartbeatTimeoutMs / 4)));
    this.#sweep = setTimeout(() => {
      sweepIdle(this);
      if (!this.closing) this.#scheduleSweep();
    }, every);
    this.#sweep.unref();
  }

  /** Takes WebSocket upgrades of an HTTP server (the API's, or the gateway's own). */
  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    handleUpgrade(this, req, socket, head);
  }

  stats(): { sockets: number; workspaces: number; deliveries: number } {
    return { sockets: this.conns.size, workspaces: this.hubs.size, deliveries: this.#deliveries };
  }

  delivered(n: number): void {
    this.#deliveries += n;
  }

  /** Called by a socket whose unsent data passed the bound: it stopped reading, so it goes. */
  slow(conn: Conn): void {
    dropSlow(this, conn);
  }

  /** Closes every socket (1001 going away), leaves the peers, stops listening to the bus. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.#sweep) clearTimeout(this.#sweep);
    if (this.#beat) clearInterval(this.#beat);
    for (const off of this.#unsubscribe) off();
    for (const c of this.conns) c.close(CLOSE.goingAway, 'server_shutdown');
    const deadline = Date.now() + 1000;
    while (this.conns.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const c of this.conns) c.ws.terminate();
    for (const h of this.hubs.values()) h.close();
    this.hubs.clear();
    this.presence.bye();
    await this.peers?.close();
    this.wss.close();
  }

  // ------------------------------------------------------------------------------------------
  // Frames from the client

  onFrame(conn: Conn, f: Frame): void {
    try {
      this.#dispatch(conn, f);
    } catch (err) {
      this.deps.log.error({ err: String(err), event: f.event }, 'gateway failed on a frame');
      answer(conn, f, 'error', { reason: 'internal_error' });
    }
  }

  #dispatch(conn: Conn, f: Frame) {
    if (f.topic === 'phoenix') {
      if (f.event === 'heartbeat') return answer(conn, f, 'ok');
      return answer(conn, f, 'error', { reason: 'unknown_event' });
    }
    if (f.event === 'phx_join') {
      void join(this, conn, f).catch((err) => {
        this.deps.log.error({ err: String(err) }, 'gateway join failed');
        answer(conn, f, 'error', { reason: 'unavailable' });
      });
      return;
    }
    if (f.event === 'phx_leave') {
      if (conn.joined.has(f.topic)) {
        part(this, conn, f.topic);
        conn.joined.delete(f.topic);
      }
      return answer(conn, f, 'ok');
    }
    if (!conn.joined.has(f.topic)) return answer(conn, f, 'error', { reason: 'unmatched_topic' });
    const t = parseTopic(f.topic);
    if (t?.kind === 'ticket' && f.event === 'presence') return onPresence(this, conn, f);
    if (t?.kind === 'ticket' && f.event === 'typing') return onAgentTyping(this, conn, t, f);
    if (t?.kind === 'contact' && f.event === 'typing') {
      void onWidgetTyping(this, conn, f).catch(() => answer(conn, f, 'error', { reason: 'unavailable' }));
      return;
    }
    return answer(conn, f, 'error', { reason: 'unknown_event' });
  }

  // ------------------------------------------------------------------------------------------
  // The bus and the other gateways

  #onPeer(m: PeerMessage): void {
    if (this.closing) return;
    if (m.t === 'push') {
      if (typeof m.topic === 'string' && typeof m.event === 'string') {
        broadcastLocal(this, m.topic, m.event, m.payload, m.except_user ?? null);
      }
      return;
    }
    this.presence.onPeer(m);
  }

  #onEvent(e: EventEnvelope): void {
    this.hubs.get(e.workspace_id)?.offer(e);
  }

  #onControl(m: ControlMessage): void {
    applyControl(m, { revoked: this.revoked, byUser: this.byUser, byWorkspace: this.byWorkspace });
  }
}
