// The realtime gateway (docs/realtime.md): Phoenix Channels v2 over WebSocket.
// Push only: committed events from the bus fan out to the sockets allowed to see them, plus
// presence and typing between people looking at the same ticket. Tokens are checked once, at
// connect; control notices from the API (logout, removal, team changes) close sockets.
//
// It runs on the API's HTTP server by default (runtime.ts attaches it to the `upgrade` event)
// and alone with `npm run gateway` (src/gateway-main.ts). docs/realtime.md is the client guide.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { sql } from 'kysely';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { Deps } from '../deps.js';
import type { ControlMessage } from '../platform/bus/index.js';
import { pageLimit } from '../platform/db/keyset.js';
import type { EventEnvelope } from '../platform/events/envelope.js';
import { rowToEnvelope } from '../platform/events/publisher.js';
import type { Role } from '../platform/http/context.js';
import { Conn, type GatewayLimits, type Identity, type TicketInfo } from './conn.js';
import { applyControl } from './control.js';
import { forWidget, Hub } from './hub.js';
import { identityOf } from './identity.js';
import { type Meta, PRESENCE_STATES, type PresenceState } from './meta.js';
import { openPeers, type PeerLink, type PeerMessage } from './peers.js';
import { BEAT_MS, Presence, type PresenceList } from './presence.js';
import {
  broadcastFrame,
  CLOSE,
  decodeFrame,
  encodeFrame,
  type Frame,
  MAX_PAYLOAD,
  reply,
  type WireFrame,
} from './protocol.js';
import { Revocations } from './revocations.js';
import { isUuid, parseTopic, type Topic } from './topics.js';
import { originOf, refuse, tokenFromProtocols } from './upgrade.js';
import { visitorMayConnect } from './visitors.js';

export type GatewayDeps = Pick<Deps, 'config' | 'database' | 'bus' | 'tokens' | 'log'>;

export const AGENT_PATH = '/socket/websocket';
export const WIDGET_PATH = '/socket/widget/websocket';
/** Topics one socket may have joined at once. */
export const MAX_TOPICS_PER_SOCKET = 100;

export const DEFAULT_LIMITS: GatewayLimits = {
  maxBufferedBytes: 1024 * 1024,
  heartbeatTimeoutMs: 60_000,
  presencePerWindow: 10,
  typingPerWindow: 20,
  windowMs: 10_000,
  gapWaitMs: 150,
};

type JoinOutcome =
  | { ok: true; ticket?: { id: string; info: TicketInfo } }
  | { ok: false; reason: 'forbidden' | 'unavailable' };

export class Gateway {
  readonly limits: GatewayLimits = { ...DEFAULT_LIMITS };
  /** This process among the gateway processes (presence entries and peer messages carry it). */
  readonly node = randomUUID();
  readonly #wss: WebSocketServer;
  readonly #conns = new Set<Conn>();
  readonly #byUser = new Map<string, Set<Conn>>();
  readonly #byWorkspace = new Map<string, Set<Conn>>();
  readonly #hubs = new Map<string, Hub>();
  readonly #revoked = new Revocations();
  readonly #presence: Presence;
  readonly #unsubscribe: Array<() => void> = [];
  #peers: PeerLink | null = null;
  #sweep: NodeJS.Timeout | null = null;
  #beat: NodeJS.Timeout | null = null;
  #closing = false;
  #deliveries = 0;
  /** CHECK_ORIGINS as browsers send Origin (scheme://host[:port], lowercase, no path). */
  readonly #origins: Set<string>;

  constructor(private readonly deps: GatewayDeps) {
    this.#origins = new Set(deps.config.checkOrigins.map(originOf).filter((o): o is string => o !== null));
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_PAYLOAD,
      perMessageDeflate: false,
      clientTracking: false,
      // The Phoenix client's `authToken` option offers ["phoenix", "base64url.bearer.phx.<token>"].
      handleProtocols: (protocols) => (protocols.has('phoenix') ? 'phoenix' : false),
    });
    this.#presence = new Presence(this.node, (topic, diff) =>
      topic.startsWith(AGENTS_PREFIX)
        ? this.#agentsChanged(topic.slice(AGENTS_PREFIX.length), diff)
        : this.#broadcastLocal(topic, 'presence_diff', diff, null),
    );
  }

  /** Subscribes to the bus (events and control notices) and, with NATS, to the other gateways. */
  async start(): Promise<void> {
    this.#unsubscribe.push(this.deps.bus.subscribe((e) => this.#onEvent(e)));
    this.#unsubscribe.push(this.deps.bus.subscribeControl((m) => this.#onControl(m)));
    if (this.deps.config.natsUrl) {
      this.#peers = await openPeers(
        this.deps.config.natsUrl,
        this.node,
        (m) => this.#onPeer(m),
        (err) => this.deps.log.warn({ err: String(err) }, 'gateway peer link error'),
      );
      this.#presence.peers = this.#peers;
      this.#presence.hello();
      this.#beat = setInterval(() => this.#presence.beat(), BEAT_MS);
      this.#beat.unref();
    }
    this.#scheduleSweep();
  }

  #scheduleSweep(): void {
    const every = Math.max(50, Math.min(5000, Math.floor(this.limits.heartbeatTimeoutMs / 4)));
    this.#sweep = setTimeout(() => {
      this.#sweepIdle();
      if (!this.#closing) this.#scheduleSweep();
    }, every);
    this.#sweep.unref();
  }

  #sweepIdle(): void {
    const now = Date.now();
    for (const c of this.#conns) {
      if (now - c.lastSeen > this.limits.heartbeatTimeoutMs) c.close(CLOSE.heartbeatTimeout, 'heartbeat_timeout');
    }
    this.#revoked.prune();
  }

  /** Takes WebSocket upgrades of an HTTP server (the API's, or the gateway's own). */
  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
  }

  stats(): { sockets: number; workspaces: number; deliveries: number } {
    return { sockets: this.#conns.size, workspaces: this.#hubs.size, deliveries: this.#deliveries };
  }

  /** Closes every socket (1001 going away), leaves the peers, stops listening to the bus. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#sweep) clearTimeout(this.#sweep);
    if (this.#beat) clearInterval(this.#beat);
    for (const off of this.#unsubscribe) off();
    for (const c of this.#conns) c.close(CLOSE.goingAway, 'server_shutdown');
    const deadline = Date.now() + 1000;
    while (this.#conns.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const c of this.#conns) c.ws.terminate();
    for (const h of this.#hubs.values()) h.close();
    this.#hubs.clear();
    this.#presence.bye();
    await this.#peers?.close();
    this.#wss.close();
  }

  // ------------------------------------------------------------------------------------------
  // Connect

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on('error', () => socket.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://gateway');
    } catch {
      return refuse(socket, 400, 'bad_request', 'The request could not be read.');
    }
    const endpoint = url.pathname === AGENT_PATH ? 'agent' : url.pathname === WIDGET_PATH ? 'widget' : null;
    if (!endpoint) return refuse(socket, 404, 'not_found', 'No socket endpoint here.');
    if (this.#closing) return refuse(socket, 503, 'unavailable', 'The gateway is shutting down.');
    const vsn = url.searchParams.get('vsn');
    if (vsn !== null && !/^2\.\d+\.\d+$/.test(vsn)) {
      return refuse(socket, 400, 'bad_request', 'Only the JSON serializer version 2 (vsn=2.0.0) is spoken here.');
    }
    if (endpoint === 'agent') {
      const origin = req.headers.origin;
      if (origin !== undefined && !this.#origins.has(originOf(origin) ?? '')) {
        this.deps.log.info({ origin: origin.slice(0, 200) }, 'gateway refused an origin');
        return refuse(socket, 403, 'forbidden', 'This origin may not open an agent socket.');
      }
    }
    const token = url.searchParams.get('token') ?? tokenFromProtocols(req.headers['sec-websocket-protocol']);
    if (!token || token.length > 4096) return refuse(socket, 401, 'unauthorized', 'A realtime token is required.');
    this.#authenticate(endpoint, token, req.socket.remoteAddress ?? '').then(
      (who) => {
        if (socket.destroyed) return;
        // Checked again: a revocation may have come while the database was read.
        if (!who || this.#revoked.refuses(who)) {
          return refuse(socket, 401, 'unauthorized', 'The realtime token is invalid, expired or revoked.');
        }
        if (this.#closing) return refuse(socket, 503, 'unavailable', 'The gateway is shutting down.');
        this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, socket, who));
      },
      (err) => {
        this.deps.log.error({ err: String(err) }, 'gateway could not check a token');
        refuse(socket, 500, 'internal_error', 'Something went wrong on our side.');
      },
    );
  }

  async #authenticate(endpoint: 'agent' | 'widget', token: string, ip: string): Promise<Identity | null> {
    const who = await identityOf(this.deps.tokens, endpoint, token, ip);
    if (!who || this.#revoked.refuses(who)) return null;
    // A visitor's token also needs its visitor live (not signed out, its contact not deleted)
    // and the widget on: read at each connect, so every gateway process, a restarted one too, knows.
    if (who.kind === 'widget' && !(await visitorMayConnect(this.deps.database.db, who))) return null;
    return who;
  }

  #accept(ws: WebSocket, socket: Duplex, who: Identity): void {
    const conn = new Conn(ws, socket, who, this);
    this.#conns.add(conn);
    addTo(this.#byWorkspace, who.wid, conn);
    if (conn.userId) addTo(this.#byUser, conn.userId, conn);
    ws.on('message', (data, isBinary) => this.#onMessage(conn, data, isBinary));
    ws.on('close', () => this.#onClose(conn));
    ws.on('error', () => conn.ws.terminate());
  }

  /** Called by a socket whose unsent data passed the bound: it stopped reading, so it goes. */
  slow(conn: Conn): void {
    if (conn.closed) return;
    conn.closed = true;
    this.deps.log.warn(
      { socket: conn.id, workspace_id: conn.wid, buffered: conn.buffered },
      'gateway dropped a socket that stopped reading',
    );
    conn.ws.terminate();
  }

  #onClose(conn: Conn): void {
    conn.closed = true;
    if (!this.#conns.delete(conn)) return;
    removeFrom(this.#byWorkspace, conn.wid, conn);
    if (conn.userId) removeFrom(this.#byUser, conn.userId, conn);
    for (const topic of conn.joined.keys()) this.#part(conn, topic);
    conn.joined.clear();
  }

  // ------------------------------------------------------------------------------------------
  // Frames from the client

  #onMessage(conn: Conn, data: RawData, isBinary: boolean) {
    conn.lastSeen = Date.now();
    if (conn.closed) return;
    if (isBinary) return conn.close(CLOSE.binary, 'binary_not_supported');
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    const f = decodeFrame(text);
    if (!f) return conn.close(CLOSE.badFrame, 'bad_frame');
    try {
      this.#dispatch(conn, f);
    } catch (err) {
      this.deps.log.error({ err: String(err), event: f.event }, 'gateway failed on a frame');
      this.#reply(conn, f, 'error', { reason: 'internal_error' });
    }
  }

  #dispatch(conn: Conn, f: Frame) {
    if (f.topic === 'phoenix') {
      if (f.event === 'heartbeat') return this.#reply(conn, f, 'ok');
      return this.#reply(conn, f, 'error', { reason: 'unknown_event' });
    }
    if (f.event === 'phx_join') {
      void this.#join(conn, f).catch((err) => {
        this.deps.log.error({ err: String(err) }, 'gateway join failed');
        this.#reply(conn, f, 'error', { reason: 'unavailable' });
      });
      return;
    }
    if (f.event === 'phx_leave') {
      if (conn.joined.has(f.topic)) {
        this.#part(conn, f.topic);
        conn.joined.delete(f.topic);
      }
      return this.#reply(conn, f, 'ok');
    }
    if (!conn.joined.has(f.topic)) return this.#reply(conn, f, 'error', { reason: 'unmatched_topic' });
    const t = parseTopic(f.topic);
    if (t?.kind === 'ticket' && f.event === 'presence') return this.#onPresence(conn, f);
    if (t?.kind === 'ticket' && f.event === 'typing') return this.#onAgentTyping(conn, t, f);
    if (t?.kind === 'contact' && f.event === 'typing') {
      void this.#onWidgetTyping(conn, f).catch(() => this.#reply(conn, f, 'error', { reason: 'unavailable' }));
      return;
    }
    return this.#reply(conn, f, 'error', { reason: 'unknown_event' });
  }

  #reply(conn: Conn, f: Frame, status: 'ok' | 'error', response: Record<string, unknown> = {}): void {
    conn.send(encodeFrame(f.joinRef, f.ref, f.topic, 'phx_reply', reply(status, response)));
  }

  async #join(conn: Conn, f: Frame) {
    const topic = f.topic;
    if (!conn.joined.has(topic) && conn.joined.size >= MAX_TOPICS_PER_SOCKET) {
      return this.#reply(conn, f, 'error', { reason: 'too_many_topics' });
    }
    const t = parseTopic(topic);
    const outcome: JoinOutcome = t ? await this.#authorize(conn, t, f.payload) : { ok: false, reason: 'forbidden' };
    if (conn.closed) return;
    if (!outcome.ok) return this.#reply(conn, f, 'error', { reason: outcome.reason });
    const wid = t!.kind === 'user' ? conn.wid : (t as Exclude<Topic, { kind: 'user' }>).wid;
    const hub = this.#hubFor(wid);
    hub.pending++;
    try {
      await hub.ready;
    } catch (err) {
      hub.pending--;
      this.deps.log.warn({ err: String(err), workspace_id: wid }, 'gateway could not start a workspace');
      return this.#reply(conn, f, 'error', { reason: 'unavailable' });
    }
    hub.pending--;
    if (conn.closed || this.#hubs.get(wid) !== hub) {
      this.#releaseIfIdle(hub);
      if (!conn.closed) this.#reply(conn, f, 'error', { reason: 'unavailable' });
      return;
    }
    // A second join of the same topic replaces the first (the Phoenix client rejoins this way).
    const previous = conn.joined.get(topic);
    if (conn.joined.has(topic)) {
      this.#part(conn, topic);
      conn.send(encodeFrame(previous ?? null, null, topic, 'phx_close', {}));
    }
    conn.joined.set(topic, f.joinRef);
    // A widget that joins with {since: seq} gets the public events of its topic it missed, then
    // the live ones; live events wait (conn.held) until the missed ones are sent.
    const upTo = hub.lastSeq;
    const since = t!.kind === 'contact' ? sinceOf(f.payload.since) : null;
    const replay = since !== null && since < upTo;
    if (replay) {
      conn.held ??= new Map();
      conn.held.set(topic, []);
    }
    hub.subscribe(topic, conn);
    const response: Record<string, unknown> = { server_time: new Date().toISOString() };
    if (t!.kind === 'workspace' || t!.kind === 'contact') response.latest_seq = upTo;
    if (replay) {
      let missed: Awaited<ReturnType<Gateway['missedEvents']>>;
      try {
        missed = await this.missedEvents(wid, topic, since, upTo);
      } catch (err) {
        conn.held?.delete(topic);
        throw err;
      }
      if (conn.closed || conn.joined.get(topic) !== f.joinRef || !conn.held?.has(topic)) return;
      if (missed.resync) response.resync = true;
      this.#reply(conn, f, 'ok', response);
      for (const e of missed.events) conn.sendWire(broadcastFrame(topic, 'event', JSON.stringify(e)));
      const held = conn.held.get(topic) ?? [];
      conn.held.delete(topic);
      for (const frame of held) conn.sendWire(frame);
    } else {
      this.#reply(conn, f, 'ok', response);
    }
    if (t!.kind === 'contact') {
      // Who of the workspace's people is online, for the widget: names and pictures only.
      conn.send(
        encodeFrame(f.joinRef, null, topic, 'presence_state', forVisitors(this.#presence.list(AGENTS_PREFIX + wid))),
      );
    }
    if (t!.kind === 'workspace' && conn.who.kind === 'agent' && conn.userId) {
      const profile = conn.profile ?? { name: '', avatar: null };
      this.#presence.track(AGENTS_PREFIX + wid, conn.id, {
        user_id: conn.userId,
        name: profile.name,
        avatar: profile.avatar,
        state: 'viewing',
      });
    }
    if (outcome.ticket && conn.who.kind === 'agent' && conn.userId) {
      conn.tickets ??= new Map();
      conn.tickets.set(outcome.ticket.id, outcome.ticket.info);
      conn.send(encodeFrame(f.joinRef, null, topic, 'presence_state', this.#presence.list(topic)));
      const state = PRESENCE_STATES.includes(f.payload.state as PresenceState)
        ? (f.payload.state as PresenceState)
        : 'viewing';
      const profile = conn.profile ?? { name: '', avatar: null };
      this.#presence.track(topic, conn.id, { user_id: conn.userId, name: profile.name, avatar: profile.avatar, state });
    }
  }

  /** Who may join which topic (docs/realtime.md "Topics"). */
  async #authorize(conn: Conn, t: Topic, payload: Record<string, unknown>): Promise<JoinOutcome> {
    const no: JoinOutcome = { ok: false, reason: 'forbidden' };
    const who = conn.who;
    if (who.kind === 'widget') {
      return t.kind === 'contact' && t.wid === who.wid && t.contactId === who.contactId ? { ok: true } : no;
    }
    const ctx = who.ctx;
    switch (t.kind) {
      case 'workspace':
        if (t.wid !== who.wid) return no;
        // A person on the workspace topic is online for the widget (name and picture).
        if (ctx.actor.kind === 'member') await this.#loadProfile(conn, ctx.actor.userId);
        return { ok: true };
      case 'team':
        // Admins and owners see every private team (as in canSee); others their own.
        return t.wid === who.wid && (isAdmin(ctx.role) || ctx.teams.includes(t.teamId)) ? { ok: true } : no;
      case 'user':
        return ctx.actor.kind === 'member' && ctx.actor.userId === t.userId ? { ok: true } : no;
      case 'contact':
        return no;
      case 'ticket': {
        if (t.wid !== who.wid || ctx.actor.kind !== 'member') return no;
        const row = await this.deps.database.db
          .selectFrom('tickets as t')
          .leftJoin('teams as tm', (j) =>
            j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'),
          )
          .select(['t.contact_id', 't.channel', 't.team_id', 'tm.private'])
          .where('t.workspace_id', '=', t.wid)
          .where('t.id', '=', t.ticketId)
          .executeTakeFirst();
        if (!row) return no;
        const privateTeam = row.private ? row.team_id : null;
        if (privateTeam !== null) {
          // A private team's ticket: joined with its team_id, by someone who may see the team.
          if (payload.team_id !== privateTeam) return no;
          if (!isAdmin(ctx.role) && !ctx.teams.includes(privateTeam)) return no;
        }
        await this.#loadProfile(conn, ctx.actor.userId);
        return { ok: true, ticket: { id: t.ticketId, info: { contactId: row.contact_id, channel: row.channel } } };
      }
    }
  }

  /** The person's name and picture, for presence and typing (read once per socket). */
  async #loadProfile(conn: Conn, userId: string): Promise<void> {
    if (conn.profile) return;
    const user = await this.deps.database.db
      .selectFrom('users')
      .select(['name', 'avatar_url'])
      .where('id', '=', userId)
      .executeTakeFirst();
    conn.profile = { name: user?.name ?? '', avatar: user?.avatar_url ?? null };
  }

  /**
   * The public events of a contact topic after `since` up to `upTo`, in the widget's form;
   * resync when some are no longer kept (retention) or there are more than a replay sends.
   */
  async missedEvents(
    wid: string,
    topic: string,
    since: number,
    upTo: number,
  ): Promise<{ events: Array<NonNullable<ReturnType<typeof forWidget>>>; resync: boolean }> {
    const db = this.deps.database.db;
    const oldest = await db
      .selectFrom('events')
      .select((eb) => eb.fn.min('seq').as('seq'))
      .where('workspace_id', '=', wid)
      .executeTakeFirst();
    const first = oldest?.seq == null ? null : Number(oldest.seq);
    const rows = await db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', wid)
      .where('seq', '>', since)
      .where('seq', '<=', upTo)
      .where('visibility', '=', 'public')
      .where(sql<boolean>`topics @> ARRAY[${topic}]::text[]`)
      .orderBy('seq')
      .limit(pageLimit(MAX_REPLAYED + 1))
      .execute();
    const events = rows
      .slice(0, MAX_REPLAYED)
      .map((r) => forWidget(rowToEnvelope(r), topic))
      .filter((e) => e !== null);
    return { events, resync: rows.length > MAX_REPLAYED || first === null || first > since + 1 };
  }

  /** Leaves a topic: unsubscribes, and ends the socket's presence there. */
  #part(conn: Conn, topic: string): void {
    const t = parseTopic(topic);
    if (!t) return;
    const hub = this.#hubs.get(t.kind === 'user' ? conn.wid : t.wid);
    if (t.kind === 'ticket') {
      this.#presence.untrack(topic, conn.id);
      conn.tickets?.delete(t.ticketId);
    }
    if (t.kind === 'workspace') this.#presence.untrack(AGENTS_PREFIX + t.wid, conn.id);
    conn.held?.delete(topic);
    if (!hub) return;
    hub.unsubscribe(topic, conn);
    this.#releaseIfIdle(hub);
  }

  #hubFor(wid: string): Hub {
    let hub = this.#hubs.get(wid);
    if (!hub) {
      const created = new Hub(
        wid,
        this.deps.database,
        this.deps.log,
        () => this.limits.gapWaitMs,
        (n) => {
          this.#deliveries += n;
        },
      );
      created.ready.catch(() => {
        if (this.#hubs.get(wid) === created) this.#hubs.delete(wid);
        created.close();
      });
      this.#hubs.set(wid, created);
      hub = created;
    }
    return hub;
  }

  #releaseIfIdle(hub: Hub): void {
    if (!hub.idle || this.#hubs.get(hub.wid) !== hub) return;
    hub.close();
    this.#hubs.delete(hub.wid);
  }

  // ------------------------------------------------------------------------------------------
  // Presence and typing

  #onPresence(conn: Conn, f: Frame) {
    const state = f.payload.state as PresenceState;
    if (!PRESENCE_STATES.includes(state)) {
      return this.#reply(conn, f, 'error', { reason: 'invalid_payload', detail: 'state: viewing, replying or idle' });
    }
    if (!conn.allow('presence')) return this.#reply(conn, f, 'error', { reason: 'rate_limited' });
    this.#presence.update(f.topic, conn.id, state);
    this.#reply(conn, f, 'ok');
  }

  #onAgentTyping(conn: Conn, t: Extract<Topic, { kind: 'ticket' }>, f: Frame) {
    if (!conn.userId) return this.#reply(conn, f, 'error', { reason: 'forbidden' });
    if (f.payload.contact_id !== undefined && !isUuid(f.payload.contact_id)) {
      return this.#reply(conn, f, 'error', { reason: 'invalid_payload', detail: 'contact_id: a contact id' });
    }
    if (!conn.allow('typing')) return this.#reply(conn, f, 'error', { reason: 'rate_limited' });
    const name = conn.profile?.name ?? '';
    this.#publish(f.topic, 'typing', { ticket_id: t.ticketId, user_id: conn.userId, name }, conn.userId);
    // On a chat ticket the customer's widget sees it too (contact_id names the ticket's contact).
    const ticket = conn.tickets?.get(t.ticketId);
    if (ticket && ticket.channel === 'chat' && ticket.contactId && f.payload.contact_id === ticket.contactId) {
      this.#publish(
        `contact:${t.wid}:${ticket.contactId}`,
        'typing',
        {
          ticket_id: t.ticketId,
          user: { id: conn.userId, name, avatar_url: conn.profile?.avatar ?? null },
        },
        null,
      );
    }
    this.#reply(conn, f, 'ok');
  }

  async #onWidgetTyping(conn: Conn, f: Frame) {
    if (conn.who.kind !== 'widget') return this.#reply(conn, f, 'error', { reason: 'forbidden' });
    const ticketId = f.payload.ticket_id;
    if (!isUuid(ticketId)) {
      return this.#reply(conn, f, 'error', { reason: 'invalid_payload', detail: 'ticket_id: a ticket id' });
    }
    if (!conn.allow('typing')) return this.#reply(conn, f, 'error', { reason: 'rate_limited' });
    const { wid, contactId } = conn.who;
    if (!conn.tickets?.has(ticketId)) {
      const row = await this.deps.database.db
        .selectFrom('tickets')
        .select(['contact_id', 'channel'])
        .where('workspace_id', '=', wid)
        .where('id', '=', ticketId)
        .executeTakeFirst();
      if (!row || row.contact_id !== contactId) return this.#reply(conn, f, 'error', { reason: 'forbidden' });
      conn.tickets ??= new Map();
      if (conn.tickets.size < 100) conn.tickets.set(ticketId, { contactId, channel: row.channel });
    }
    if (conn.closed) return;
    this.#publish(`ticket:${wid}:${ticketId}`, 'customer_typing', { ticket_id: ticketId, contact_id: contactId }, null);
    this.#reply(conn, f, 'ok');
  }

  /** The workspace's people online changed: every widget of the workspace hears it (names and pictures). */
  #agentsChanged(wid: string, diff: { joins: PresenceList; leaves: PresenceList }): void {
    const hub = this.#hubs.get(wid);
    if (!hub) return;
    let payload: string | undefined;
    for (const [topic, subs] of hub.subs) {
      if (!topic.startsWith('contact:')) continue;
      payload ??= JSON.stringify({ joins: forVisitors(diff.joins), leaves: forVisitors(diff.leaves) });
      const frame = broadcastFrame(topic, 'presence_diff', payload);
      for (const c of subs) c.sendWire(frame);
    }
  }

  /** To this process's sockets of the topic and to the other gateways' (never stored). */
  #publish(topic: string, event: string, payload: unknown, exceptUser: string | null): void {
    this.#broadcastLocal(topic, event, payload, exceptUser);
    this.#peers?.send({ t: 'push', node: this.node, topic, event, payload, except_user: exceptUser });
  }

  #broadcastLocal(topic: string, event: string, payload: unknown, exceptUser: string | null): void {
    const t = parseTopic(topic);
    if (!t || t.kind === 'user') return;
    const subs = this.#hubs.get(t.wid)?.subs.get(topic);
    if (!subs) return;
    let frame: WireFrame | undefined;
    for (const c of subs) {
      if (exceptUser !== null && c.userId === exceptUser) continue;
      frame ??= broadcastFrame(topic, event, JSON.stringify(payload));
      c.sendWire(frame);
    }
  }

  #onPeer(m: PeerMessage): void {
    if (this.#closing) return;
    if (m.t === 'push') {
      if (typeof m.topic === 'string' && typeof m.event === 'string') {
        this.#broadcastLocal(m.topic, m.event, m.payload, m.except_user ?? null);
      }
      return;
    }
    this.#presence.onPeer(m);
  }

  // ------------------------------------------------------------------------------------------
  // The bus

  #onEvent(e: EventEnvelope): void {
    this.#hubs.get(e.workspace_id)?.offer(e);
  }

  #onControl(m: ControlMessage): void {
    applyControl(m, { revoked: this.#revoked, byUser: this.#byUser, byWorkspace: this.#byWorkspace });
  }
}

const isAdmin = (role: Role | null) => role === 'admin' || role === 'owner';

/** Presence of a workspace's people on the agent socket (internal topic, never joined by clients). */
const AGENTS_PREFIX = 'agents:';
/** Missed events a widget's join replays at most (more: resync, the widget reloads). */
export const MAX_REPLAYED = 500;

/** A join's `since`: a seq (a non-negative integer), or null. */
const sinceOf = (v: unknown): number | null => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null);

/** Presence as a widget sees it: each person's name and picture (keyed by user id), nothing else. */
function forVisitors(list: PresenceList): PresenceList {
  const out: PresenceList = {};
  for (const [key, { metas }] of Object.entries(list)) {
    out[key] = {
      metas: metas.map((m) => ({
        phx_ref: m.phx_ref,
        ...(m.phx_ref_prev ? { phx_ref_prev: m.phx_ref_prev } : {}),
        name: m.name,
        avatar: m.avatar,
        online_at: m.online_at,
      })) as Meta[],
    };
  }
  return out;
}

function addTo<K>(map: Map<K, Set<Conn>>, key: K, conn: Conn): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(conn);
}

function removeFrom<K>(map: Map<K, Set<Conn>>, key: K, conn: Conn): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(conn);
  if (set.size === 0) map.delete(key);
}
