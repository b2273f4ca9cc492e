// One workspace's side of the gateway: the sockets subscribed to each of its topics, and its
// events put back in seq order exactly once before they fan out.
//
// Events reach a gateway through the bus at least once and, with several API processes, not
// always in seq order (two processes commit seq 5 and 6 and publish them in the other order).
// The hub delivers seq `next` and then the ones buffered behind it; an event after a gap waits
// `gapWaitMs` for the missing ones and then reads them from the events table (a later seq is
// only ever committed after the earlier ones: the workspace counter row serialises them).
// Anything below `next` is a repeat (the outbox sweeper republishes) and is dropped.

import { widgetEventData } from '../modules/widget/present.js';
import type { Database } from '../platform/db/index.js';
import { pageLimit } from '../platform/db/keyset.js';
import { type EventEnvelope, publicEnvelope, standIn } from '../platform/events/envelope.js';
import { EVENT_SEQ } from '../platform/events/outbox.js';
import { rowToEnvelope } from '../platform/events/publisher.js';
import { canSee } from '../platform/events/visibility.js';
import type { Conn } from './conn.js';
import { broadcastFrame, type WireFrame } from './protocol.js';

/** Buffered events past a gap beyond which the gap is filled at once. */
const MAX_BUFFERED_EVENTS = 5000;

export interface HubLogger {
  warn(obj: object, msg: string): void;
}

export class Hub {
  /** topic → sockets that joined it (topics of this workspace, and user:<uid> of its sockets). */
  readonly subs = new Map<string, Set<Conn>>();
  /** Joins in progress that keep the hub alive while they wait for it. */
  pending = 0;
  /** The next seq to deliver; 0 while the hub reads where the workspace stands. */
  #next = 0;
  readonly #buffer = new Map<number, EventEnvelope>();
  #gapTimer: NodeJS.Timeout | null = null;
  #filling = false;
  #closed = false;
  readonly ready: Promise<void>;

  constructor(
    readonly wid: string,
    private readonly database: Database,
    private readonly log: HubLogger,
    private readonly gapWaitMs: () => number,
    /** Counts deliveries (tests and the bench read it). */
    private readonly delivered: (n: number) => void = () => {},
  ) {
    this.ready = this.#start();
  }

  get idle(): boolean {
    return this.subs.size === 0 && this.pending === 0;
  }

  /** The last seq delivered (or, before any, the workspace's seq when the hub started). */
  get lastSeq(): number {
    return this.#next - 1;
  }

  async #start(): Promise<void> {
    const row = await this.database.db
      .selectFrom('workspace_counters')
      .select('value')
      .where('workspace_id', '=', this.wid)
      .where('name', '=', EVENT_SEQ)
      .executeTakeFirst();
    if (this.#closed) return;
    this.#next = Number(row?.value ?? 0) + 1;
    for (const seq of this.#buffer.keys()) if (seq < this.#next) this.#buffer.delete(seq);
    this.#drain();
  }

  subscribe(topic: string, conn: Conn): void {
    let set = this.subs.get(topic);
    if (!set) {
      set = new Set();
      this.subs.set(topic, set);
    }
    set.add(conn);
  }

  unsubscribe(topic: string, conn: Conn): void {
    const set = this.subs.get(topic);
    if (!set) return;
    set.delete(conn);
    if (set.size === 0) this.subs.delete(topic);
  }

  close(): void {
    this.#closed = true;
    if (this.#gapTimer) clearTimeout(this.#gapTimer);
    this.#gapTimer = null;
    this.#buffer.clear();
  }

  /** An event from the bus (any order, possibly again). */
  offer(e: EventEnvelope): void {
    if (this.#closed) return;
    if (this.#next === 0) {
      this.#buffer.set(e.seq, e);
      return;
    }
    if (e.seq < this.#next) return;
    if (e.seq === this.#next) {
      this.#deliver(e);
      this.#next++;
      this.#drain();
      return;
    }
    this.#buffer.set(e.seq, e);
    if (this.#buffer.size > MAX_BUFFERED_EVENTS) void this.#fillGap();
    else this.#gapTimer ??= setTimeout(() => void this.#fillGap(), this.gapWaitMs());
  }

  #drain(): void {
    for (let e = this.#buffer.get(this.#next); e; e = this.#buffer.get(this.#next)) {
      this.#buffer.delete(this.#next);
      this.#deliver(e);
      this.#next++;
    }
    if (this.#buffer.size === 0 && this.#gapTimer) {
      clearTimeout(this.#gapTimer);
      this.#gapTimer = null;
    } else if (this.#buffer.size > 0 && !this.#gapTimer && !this.#filling) {
      this.#gapTimer = setTimeout(() => void this.#fillGap(), this.gapWaitMs());
    }
  }

  /** Reads the events missing before the first buffered one from the outbox. */
  async #fillGap(): Promise<void> {
    if (this.#gapTimer) clearTimeout(this.#gapTimer);
    this.#gapTimer = null;
    if (this.#filling || this.#closed || this.#next === 0 || this.#buffer.size === 0) return;
    this.#filling = true;
    try {
      const upTo = Math.min(...this.#buffer.keys());
      if (upTo > this.#next) {
        const rows = await this.database.db
          .selectFrom('events')
          .selectAll()
          .where('workspace_id', '=', this.wid)
          .where('seq', '>=', this.#next)
          .where('seq', '<', upTo)
          .orderBy('seq')
          .limit(pageLimit(1000))
          .execute();
        if (this.#closed) return;
        for (const r of rows) this.offer(rowToEnvelope(r));
        const first = this.#buffer.size > 0 ? Math.min(...this.#buffer.keys()) : null;
        if (first !== null && first > this.#next && rows.length < 1000) {
          // Not in the outbox (pruned, or never committed): skip ahead; clients see the gap and replay.
          this.log.warn({ workspace_id: this.wid, from: this.#next, to: first - 1 }, 'gateway skipped missing events');
          this.#next = first;
        }
      }
    } catch (err) {
      this.log.warn({ workspace_id: this.wid, err: String(err) }, 'gateway could not read missing events');
    } finally {
      this.#filling = false;
    }
    this.#drain();
  }

  /**
   * One event to every topic it concerns. The envelope is stringified at most once per variant
   * (full, stand-in, widget) and each topic's frame once; sockets share the Buffer.
   */
  #deliver(e: EventEnvelope): void {
    let sent = 0;
    let fullJson: string | undefined;
    const full = () => {
      fullJson ??= JSON.stringify(publicEnvelope(e));
      return fullJson;
    };

    // workspace:<wid>: every event; stand-ins for private-team events and for what the socket may not see.
    const wsTopic = `workspace:${this.wid}`;
    const all = this.subs.get(wsTopic);
    if (all) {
      let fullFrame: WireFrame | undefined;
      let hiddenFrame: WireFrame | undefined;
      for (const c of all) {
        if (c.who.kind !== 'agent') continue;
        if (!e.team_id && canSee(c.who.ctx, e)) {
          fullFrame ??= broadcastFrame(wsTopic, 'event', full());
          c.sendWire(fullFrame);
        } else {
          hiddenFrame ??= broadcastFrame(wsTopic, 'event', JSON.stringify(standIn(e)));
          c.sendWire(hiddenFrame);
        }
        sent++;
      }
    }

    // team:<wid>:<tid>: the private team's events in full.
    if (e.team_id) sent += this.#toAllowed(`team:${this.wid}:${e.team_id}`, e, full);

    for (const topic of e.topics) {
      if (topic.startsWith('user:')) sent += this.#toAllowed(topic, e, full);
      else if (topic.startsWith('contact:') && e.visibility === 'public') {
        const subs = this.subs.get(topic);
        if (!subs) continue;
        const shown = forWidget(e, topic);
        if (!shown) continue;
        const frame = broadcastFrame(topic, 'event', JSON.stringify(shown));
        for (const c of subs) {
          c.sendEvent(topic, frame);
          sent++;
        }
      }
    }
    if (sent > 0) this.delivered(sent);
  }

  #toAllowed(topic: string, e: EventEnvelope, full: () => string): number {
    const subs = this.subs.get(topic);
    if (!subs) return 0;
    let frame: WireFrame | undefined;
    let sent = 0;
    for (const c of subs) {
      if (c.who.kind !== 'agent' || !canSee(c.who.ctx, e)) continue;
      frame ??= broadcastFrame(topic, 'event', full());
      c.sendWire(frame);
      sent++;
    }
    return sent;
  }
}

/**
 * A public event as the widget gets it: its own topic only, and the message in the widget's shape
 * (src/modules/widget/present.ts: no agent's email, no agents-only field); null when there is
 * nothing the widget may see in it (a note).
 */
export function forWidget(e: EventEnvelope, topic: string): Omit<EventEnvelope, 'team_id'> | null {
  const data = widgetEventData(e.data);
  if (data === null) return null;
  return {
    id: e.id,
    seq: e.seq,
    workspace_id: e.workspace_id,
    type: e.type,
    visibility: 'public',
    topics: [topic],
    data,
    occurred_at: e.occurred_at,
  };
}
