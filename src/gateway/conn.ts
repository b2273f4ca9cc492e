// One client socket: who it is (from the token, checked once at connect), what it joined,
// and its send path with the bounded buffer.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { RequestContext } from '../platform/http/context.js';
import type { Ref, WireFrame } from './protocol.js';

/** What a socket is, from its token's claims. */
export type Identity =
  | {
      kind: 'agent';
      wid: string;
      /** A request context built from the ws token, for canSee (the one visibility rule). */
      ctx: RequestContext;
      /** The token's issue time (seconds): tokens issued before a revocation are refused. */
      iat: number;
      /** The token's signature: a token whose socket was closed for a change is refused again. */
      signature: string;
    }
  | {
      kind: 'widget';
      wid: string;
      /** The visitor's contact, or the id it will have (a visitor who has not written yet). */
      contactId: string;
      /** The visitor token's row (widget_visitors.id): sign-out closes this visitor's sockets only. */
      visitorId: string;
      iat: number;
      signature: string;
    };

/** A ticket a socket joined (agents) or pushed typing for (widgets), as the database had it. */
export interface TicketInfo {
  contactId: string | null;
  channel: string;
}

export interface GatewayLimits {
  /** A socket whose unsent data passes this many bytes is dropped (a client that stopped reading). */
  maxBufferedBytes: number;
  /** A socket that sent nothing (heartbeats included) for this long is closed. */
  heartbeatTimeoutMs: number;
  /** Presence updates per socket per window (10 per 10 s). */
  presencePerWindow: number;
  /** Typing pushes per socket per window. */
  typingPerWindow: number;
  windowMs: number;
  /** How long an event after a seq gap waits for the missing ones before they are read from the database. */
  gapWaitMs: number;
}

interface Owner {
  readonly limits: GatewayLimits;
  slow(conn: Conn): void;
}

const TEXT = { binary: false } as const;

export class Conn {
  static #next = 1;
  readonly id = Conn.#next++;
  /** Joined topics and their join_ref. */
  readonly joined = new Map<string, Ref>();
  lastSeen = Date.now();
  closed = false;
  /** The person's name and avatar for presence and typing (read at the first ticket join). */
  profile: { name: string; avatar: string | null } | null = null;
  /** Tickets of joined ticket topics (agents) or checked typing targets (widgets). */
  tickets: Map<string, TicketInfo> | null = null;
  /** Topics whose live event frames wait while the events missed before the join are replayed. */
  held: Map<string, WireFrame[]> | null = null;
  #hits: { presence: number[]; typing: number[] } | null = null;

  constructor(
    readonly ws: WebSocket,
    /** The upgraded TCP (or TLS) socket under `ws`: broadcasts are written to it whole. */
    private readonly socket: Duplex,
    readonly who: Identity,
    private readonly owner: Owner,
  ) {}

  get wid(): string {
    return this.who.wid;
  }

  /** The person behind an agent socket (null for API keys and widgets). */
  get userId(): string | null {
    return this.who.kind === 'agent' && this.who.ctx.actor.kind === 'member' ? this.who.ctx.actor.userId : null;
  }

  /** One message for this socket (replies, presence_state): framed by `ws`. */
  send(data: Buffer | string): void {
    if (this.closed) return;
    const ws = this.ws;
    if (ws.readyState !== 1) return;
    ws.send(data, TEXT);
    this.#checkBuffer();
  }

  /**
   * A broadcast frame, built once for every socket, written as it is. This is the same write
   * `ws` makes (it never queues without compression, which the gateway turns off), minus the
   * framing per socket, so frames of both paths stay in order.
   */
  sendWire(frame: WireFrame): void {
    if (this.closed || this.ws.readyState !== 1) return;
    this.socket.write(frame.wire);
    this.#checkBuffer();
  }

  /** An event frame of a topic: held while that topic's missed events are replayed, else sent. */
  sendEvent(topic: string, frame: WireFrame): void {
    const held = this.held?.get(topic);
    if (held) held.push(frame);
    else this.sendWire(frame);
  }

  /** Bytes written but not yet taken by the kernel (ws.bufferedAmount, as ws never queues here). */
  get buffered(): number {
    return this.socket.writableLength;
  }

  #checkBuffer(): void {
    if (this.buffered > this.owner.limits.maxBufferedBytes) this.owner.slow(this);
  }

  /** A sliding-window rate limit per socket; false when this push is over the limit. */
  allow(kind: 'presence' | 'typing', now = Date.now()): boolean {
    const l = this.owner.limits;
    const max = kind === 'presence' ? l.presencePerWindow : l.typingPerWindow;
    this.#hits ??= { presence: [], typing: [] };
    const hits = this.#hits[kind];
    while (hits.length > 0 && hits[0]! <= now - l.windowMs) hits.shift();
    if (hits.length >= max) return false;
    hits.push(now);
    return true;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    // A client that never answers the close handshake is cut after a while.
    setTimeout(() => this.ws.terminate(), 5000).unref();
  }
}
