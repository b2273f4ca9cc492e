// Who is on a ticket, in Phoenix Presence form: `presence_state` ({key: {metas: [...]}}) to a
// socket that joins, then `presence_diff` ({joins, leaves}) to every socket of the topic. The
// key is the user id; each socket of a person is one meta, told apart by phx_ref.
//
// Every process tracks its own sockets and keeps a copy of the other processes' entries, kept
// current through the peer link: diffs as they happen, whole states when a process starts
// (hello → state), heartbeats every few seconds; a process not heard from for three beats has
// its entries dropped (with leaves), so a crashed process's people do not linger.
import type { Meta, PresenceState } from './meta.js';
import type { PeerLink, PeerMessage } from './peers.js';

export type PresenceList = Record<string, { metas: Meta[] }>;

export const BEAT_MS = 5000;
const SILENT_AFTER_MS = 3 * BEAT_MS;

interface Remote {
  seen: number;
  topics: Map<string, Map<string, Meta>>;
}

/** Groups metas by key (the user id), as Phoenix Presence lists them. */
export function group(metas: Iterable<Meta>): PresenceList {
  const out: PresenceList = {};
  for (const m of metas) {
    const entry = out[m.user_id];
    if (entry) entry.metas.push(m);
    else out[m.user_id] = { metas: [m] };
  }
  return out;
}

export class Presence {
  /** topic → socket id → this process's entries. */
  readonly #local = new Map<string, Map<number, Meta>>();
  readonly #remote = new Map<string, Remote>();
  #refs = 0;
  peers: PeerLink | null = null;

  constructor(
    private readonly node: string,
    /** Sends presence_diff to this process's sockets of the topic. */
    private readonly broadcast: (topic: string, diff: { joins: PresenceList; leaves: PresenceList }) => void,
  ) {}

  #ref(): string {
    return `${this.node.slice(0, 8)}.${(++this.#refs).toString(36)}`;
  }

  list(topic: string): PresenceList {
    const metas: Meta[] = [...(this.#local.get(topic)?.values() ?? [])];
    for (const r of this.#remote.values()) {
      const t = r.topics.get(topic);
      if (t) metas.push(...t.values());
    }
    return group(metas);
  }

  track(topic: string, id: number, entry: Pick<Meta, 'user_id' | 'name' | 'avatar' | 'state'>): Meta {
    let t = this.#local.get(topic);
    if (!t) {
      t = new Map();
      this.#local.set(topic, t);
    }
    const old = t.get(id);
    const meta: Meta = {
      phx_ref: this.#ref(),
      ...(old ? { phx_ref_prev: old.phx_ref } : {}),
      user_id: entry.user_id,
      name: entry.name,
      avatar: entry.avatar,
      state: entry.state,
      online_at: old?.online_at ?? new Date().toISOString(),
    };
    t.set(id, meta);
    this.#changed(topic, [meta], old ? [old] : []);
    return meta;
  }

  /** A new state for a tracked socket; false when the socket is not tracked on the topic. */
  update(topic: string, socketId: number, state: PresenceState): boolean {
    const old = this.#local.get(topic)?.get(socketId);
    if (!old) return false;
    if (old.state === state) return true;
    this.track(topic, socketId, { user_id: old.user_id, name: old.name, avatar: old.avatar, state });
    return true;
  }

  untrack(topic: string, socketId: number): void {
    const t = this.#local.get(topic);
    const old = t?.get(socketId);
    if (!t || !old) return;
    t.delete(socketId);
    if (t.size === 0) this.#local.delete(topic);
    this.#changed(topic, [], [old]);
  }

  #changed(topic: string, joins: Meta[], leaves: Meta[]): void {
    this.broadcast(topic, { joins: group(joins), leaves: group(leaves) });
    this.peers?.send({ t: 'diff', node: this.node, topic, joins, leaves });
  }

  #localState(): Record<string, Meta[]> {
    const out: Record<string, Meta[]> = {};
    for (const [topic, t] of this.#local) out[topic] = [...t.values()];
    return out;
  }

  hello(): void {
    this.peers?.send({ t: 'hello', node: this.node });
  }

  /** Heartbeat to the peers, and drops the entries of peers that went silent. */
  beat(now = Date.now()): void {
    if (!this.peers) return;
    this.peers.send({ t: 'beat', node: this.node });
    for (const [node, r] of this.#remote) if (now - r.seen > SILENT_AFTER_MS) this.#replace(node, null);
  }

  bye(): void {
    this.peers?.send({ t: 'bye', node: this.node });
  }

  onPeer(msg: PeerMessage): void {
    const known = this.#remote.get(msg.node);
    if (known) known.seen = Date.now();
    switch (msg.t) {
      case 'hello':
        this.peers?.send({ t: 'state', node: this.node, to: msg.node, topics: this.#localState() });
        return;
      case 'state':
        if (msg.to !== null && msg.to !== this.node) return;
        this.#replace(msg.node, msg.topics);
        return;
      case 'bye':
        this.#replace(msg.node, null);
        return;
      case 'beat':
        if (!known) this.hello();
        return;
      case 'diff': {
        if (!known) {
          // A node we have not met: take its whole state (this diff included) from its answer.
          this.hello();
          return;
        }
        let t = known.topics.get(msg.topic);
        if (!t) {
          t = new Map();
          known.topics.set(msg.topic, t);
        }
        for (const m of msg.leaves) t.delete(m.phx_ref);
        for (const m of msg.joins) t.set(m.phx_ref, m);
        if (t.size === 0) known.topics.delete(msg.topic);
        this.broadcast(msg.topic, { joins: group(msg.joins), leaves: group(msg.leaves) });
        return;
      }
    }
  }

  /** Replaces a peer's entries (null: the peer is gone), telling local sockets what changed. */
  #replace(node: string, topics: Record<string, Meta[]> | null): void {
    const before = this.#remote.get(node)?.topics ?? new Map<string, Map<string, Meta>>();
    const after = new Map<string, Map<string, Meta>>();
    for (const [topic, metas] of Object.entries(topics ?? {})) {
      if (!Array.isArray(metas) || metas.length === 0) continue;
      after.set(topic, new Map(metas.map((m) => [m.phx_ref, m])));
    }
    if (topics === null) this.#remote.delete(node);
    else this.#remote.set(node, { seen: Date.now(), topics: after });
    for (const topic of new Set([...before.keys(), ...after.keys()])) {
      const b = before.get(topic) ?? new Map<string, Meta>();
      const a = after.get(topic) ?? new Map<string, Meta>();
      const joins = [...a.values()].filter((m) => !b.has(m.phx_ref));
      const leaves = [...b.values()].filter((m) => !a.has(m.phx_ref));
      if (joins.length + leaves.length > 0) this.broadcast(topic, { joins: group(joins), leaves: group(leaves) });
    }
  }
}
