// The realtime gateway (docs/realtime.md) through the official Phoenix client: a socket per
// selected workspace, joined to workspace:<id>. Events are applied in seq order, once: a live
// event more than one past the last applied, and every rejoin after a reconnect whose latest_seq
// is ahead, first replays the gap from GET /v1/events; `resync` (away longer than the retention)
// reloads everything.
//
// The connection recovers from every state (docs/app.md "Outages and rate limits"): this file, not
// the Phoenix client, decides when to connect again, and every attempt first fetches a fresh
// realtime token (a token fetch that fails is an attempt that failed). Attempts follow each other
// after 0.5, 1, 2, then every 5 seconds, and at once when the browser says it is online again, the
// page is shown again or gets the focus; a socket that looks open then is pinged, and dropped if
// it does not answer. A socket refused at this page's address (Origin not allowed) says so
// ('elsewhere') and tries again every 30 seconds.
import { type Channel, Presence, Socket } from 'phoenix';
import { socketAllowedHere } from './address';
import { ApiError, api, ok } from './api';
import { noteReachable } from './reachable';

export interface Envelope {
  id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  occurred_at: string;
}

/** `elsewhere`: the gateway refuses a socket from this page's address (address.ts says where to go). */
export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'elsewhere';

export interface LiveHandlers {
  onEvent(e: Envelope): void;
  /** Events were missed and cannot be replayed: reload what is shown. */
  onResync(): void;
  onStatus(s: LiveStatus): void;
}

/** Someone else on a ticket's page (docs/realtime.md "Presence and typing"). */
export interface Viewer {
  userId: string;
  name: string;
  /** viewing, replying or idle: the most active of the person's tabs. */
  state: string;
}

export interface TicketLive {
  /** Tells the others what I am doing: viewing or replying (sent only when it changes). */
  setState(state: 'viewing' | 'replying'): void;
  /**
   * Tells the others I am typing (at most every 2.5 s). On a chat ticket, `contactId` (the ticket's
   * contact) lets the visitor's widget see it too.
   */
  typing(contactId?: string): void;
  leave(): void;
}

export interface TicketHandlers {
  onViewers(viewers: Viewer[]): void;
  onTyping(who: { userId: string; name: string }): void;
  /** The customer is typing (chat tickets: the widget's `typing`, seen as `customer_typing`). */
  onCustomerTyping?(p: { contactId: string }): void;
}

/** The connection of the selected workspace, for the screens that join more topics. */
export interface Live {
  stop(): void;
  ticket(ticketId: string, teamId: string | null, h: TicketHandlers): TicketLive;
}

const RANK: Record<string, number> = { replying: 2, viewing: 1, idle: 0 };

/** What the realtime token says of me: my id and my private teams (read, not verified: the gateway does that). */
function tokenClaims(token: string): { sub?: string; teams?: string[] } {
  try {
    const part = token.split('.')[1] ?? '';
    const json = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    );
    const c = JSON.parse(json) as { sub?: unknown; teams?: unknown };
    return {
      ...(typeof c.sub === 'string' ? { sub: c.sub } : {}),
      ...(Array.isArray(c.teams) ? { teams: c.teams.filter((t): t is string => typeof t === 'string') } : {}),
    };
  } catch {
    return {};
  }
}

async function realtimeToken(workspaceId: string): Promise<{ token: string; url: string }> {
  return ok(
    api.POST('/v1/realtime/token', {
      headers: { 'svc-workspace': workspaceId },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    }),
  );
}

/** Waits before the attempt after `failures` failed ones (a little jitter, so tabs spread out). */
const RETRY_MS = [500, 1000, 2000];
const retryDelay = (failures: number) => (RETRY_MS[failures - 1] ?? 5000) * (0.8 + Math.random() * 0.4);
const ELSEWHERE_RETRY_MS = 30_000;
/** A token fetch or a replay page that takes longer has failed (the server is there but not answering). */
const REQUEST_TIMEOUT_MS = 15_000;
/** A socket that looks open must answer a ping within this when the page comes back. */
const PING_TIMEOUT_MS = 5000;

/** Connects; answers the connection (stop() disconnects). */
export function startLive(workspaceId: string, h: LiveHandlers): Live {
  let connected!: (s: Socket) => void;
  const socketReady = new Promise<Socket>((resolve) => {
    connected = resolve;
  });
  let stopped = false;
  let socket: Socket | null = null;
  let channel: Channel | null = null;
  let lastSeq: number | null = null;
  let replaying: Promise<void> | null = null;
  const waiting: Envelope[] = [];
  let status: LiveStatus | null = null;
  const setStatus = (s: LiveStatus) => {
    if (s === status || stopped) return;
    status = s;
    h.onStatus(s);
  };

  // Events already handed on, by id: a private team's event comes on its team topic and again in
  // a replay; an event addressed to me on my topic and on the workspace topic.
  const handed = new Set<string>();
  const handOn = (e: Envelope) => {
    if (e.type === 'event.hidden' || handed.has(e.id)) return;
    handed.add(e.id);
    if (handed.size > 2000) handed.delete(handed.values().next().value!);
    h.onEvent(e);
  };
  const apply = (e: Envelope) => {
    if (lastSeq !== null && e.seq <= lastSeq) return;
    lastSeq = e.seq;
    handOn(e);
  };

  /** Replays from lastSeq up to at least `until`, then what arrived meanwhile. */
  const replay = (until: number): Promise<void> => {
    if (replaying) return replaying.then(() => (lastSeq !== null && lastSeq < until ? replay(until) : undefined));
    replaying = (async () => {
      try {
        while (lastSeq !== null && lastSeq < until && !stopped) {
          const page = await ok(
            api.GET('/v1/events', {
              params: { query: { since: lastSeq, limit: 1000 } },
              headers: { 'svc-workspace': workspaceId },
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            }),
          );
          if (page.resync) {
            lastSeq = page.latest_seq;
            h.onResync();
            break;
          }
          for (const e of page.data as Envelope[]) apply(e);
          if (page.data.length === 0) {
            lastSeq = Math.max(lastSeq, page.latest_seq);
            break;
          }
        }
      } catch {
        // The next rejoin or gap tries again; what is shown is reloaded meanwhile.
        h.onResync();
      } finally {
        replaying = null;
      }
      const queued = waiting.splice(0).sort((a, b) => a.seq - b.seq);
      for (const e of queued) receive(e);
    })();
    return replaying;
  };

  const receive = (e: Envelope) => {
    if (replaying || lastSeq === null) {
      waiting.push(e);
      return;
    }
    if (e.seq > lastSeq + 1) {
      waiting.push(e);
      void replay(e.seq - 1);
      return;
    }
    apply(e);
  };

  const joined = (latest: number) => {
    failures = 0;
    setStatus('live');
    noteReachable(true);
    if (lastSeq === null || latest < lastSeq) {
      // First join: what was loaded over HTTP may predate it by a moment; load it again. (A
      // latest_seq behind ours: the server's events were reset; nothing to replay against.)
      lastSeq = latest;
      h.onResync();
      const queued = waiting.splice(0).sort((a, b) => a.seq - b.seq);
      for (const e of queued) receive(e);
    } else if (latest > lastSeq) void replay(latest);
  };

  // ---- The connection: attempts, each with a fresh token, until stopped.
  let token = '';
  /** Attempts in a row that ended before the workspace's topic was joined. */
  let failures = 0;
  /** The current attempt (a token fetch, then the socket's connection); a lost one ends it. */
  let attemptNo = 0;
  let opened = false;
  let ended = true;
  let fetchingToken = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      void attempt();
    }, ms);
  };

  /**
   * The attempt `n` is over, without a working socket or after one: say so and schedule the next
   * (`refused`: the API refused the token, e.g. no longer a member: not before 30 seconds).
   */
  const lost = (n: number, refused = false) => {
    if (stopped || n !== attemptNo || ended) return;
    ended = true;
    const everOpened = opened;
    opened = false;
    // Phoenix would reconnect by itself, with the token it has: this file does, with a fresh one.
    socket?.disconnect();
    // A socket that opened and closed again without joining (a proxy that drops it) counts too.
    if (status !== 'live') failures++;
    if (!everOpened && !socketAllowedHere()) {
      setStatus('elsewhere');
      schedule(ELSEWHERE_RETRY_MS);
      return;
    }
    setStatus('reconnecting');
    schedule(refused ? ELSEWHERE_RETRY_MS : retryDelay(Math.max(1, failures)));
  };

  const attempt = async () => {
    if (stopped || fetchingToken || !ended) return;
    if (timer) clearTimeout(timer);
    timer = null;
    const n = ++attemptNo;
    ended = false;
    fetchingToken = true;
    let answer: { token: string; url: string };
    try {
      answer = await realtimeToken(workspaceId);
    } catch (err) {
      fetchingToken = false;
      const code = err instanceof ApiError ? err.status : 0;
      lost(n, code >= 400 && code < 500 && code !== 408 && code !== 429);
      return;
    } finally {
      fetchingToken = false;
    }
    if (stopped || n !== attemptNo) return;
    token = answer.token;
    if (!socket) create(answer.url);
    socket!.connect();
    // A connection that neither opens nor fails (packets dropped on the way) is given up too.
    setTimeout(() => {
      if (!opened) lost(n);
    }, REQUEST_TIMEOUT_MS);
  };

  /** Now rather than later: the browser is online again, or the page is shown again. */
  const kick = () => {
    if (stopped) return;
    if (!ended && socket?.isConnected()) {
      // It looks open; after a sleep or a network change it may be dead without knowing it.
      const n = attemptNo;
      let answered = false;
      const sent = socket.ping(() => {
        answered = true;
      });
      if (sent)
        setTimeout(() => {
          if (!answered) lost(n);
        }, PING_TIMEOUT_MS);
      return;
    }
    if (ended && !fetchingToken) {
      failures = 0;
      void attempt();
    }
  };
  const onVisible = () => {
    if (document.visibilityState === 'visible') kick();
  };
  const onOffline = () => {
    // The browser knows the network is gone: an open-looking socket is checked (and dropped).
    if (!ended && socket?.isConnected()) kick();
  };
  globalThis.addEventListener?.('online', kick);
  globalThis.addEventListener?.('offline', onOffline);
  globalThis.addEventListener?.('focus', kick);
  globalThis.addEventListener?.('pageshow', kick);
  globalThis.document?.addEventListener('visibilitychange', onVisible);

  const create = (url: string) => {
    const s = new Socket(url.replace(/\/websocket$/, ''), { params: () => ({ token }) });
    socket = s;
    s.onOpen(() => {
      opened = true;
      joinSides();
    });
    s.onClose(() => lost(attemptNo));
    // The private teams' topics (their tickets in full; the workspace topic has stand-ins) and my
    // own (personal views, notifications): applied as they come, once. The token names the private
    // teams I am in; when they change the gateway closes the socket, and the reconnect's token
    // says which topics to be in.
    const sides = new Map<string, Channel>();
    const joinSides = () => {
      const claims = tokenClaims(token);
      const want = new Set([
        ...(claims.teams ?? []).map((t) => `team:${workspaceId}:${t}`),
        ...(claims.sub ? [`user:${claims.sub}`] : []),
      ]);
      for (const [topic, ch] of sides) {
        if (!want.has(topic)) {
          ch.leave();
          sides.delete(topic);
        }
      }
      for (const topic of want) {
        if (sides.has(topic)) continue;
        const ch = s.channel(topic, {});
        ch.on('event', (e: Envelope) => handOn(e));
        ch.join();
        sides.set(topic, ch);
      }
    };
    connected(s);
    channel = s.channel(`workspace:${workspaceId}`, {});
    channel.on('event', (e: Envelope) => receive(e));
    // A lost connection (the Phoenix client's own heartbeat timeout included) errors the channel.
    channel.onError(() => {
      if (status === 'live') setStatus('reconnecting');
    });
    channel
      .join()
      .receive('ok', (r: { latest_seq: number }) => joined(r.latest_seq))
      .receive('error', () => setStatus('reconnecting'));
  };

  setStatus('connecting');
  void attempt();

  const ticket = (ticketId: string, teamId: string | null, th: TicketHandlers): TicketLive => {
    let left = false;
    let ch: Channel | null = null;
    let state: 'viewing' | 'replying' = 'viewing';
    let lastTyping = 0;
    void socketReady.then((s) => {
      if (left || stopped) return;
      ch = s.channel(`ticket:${workspaceId}:${ticketId}`, teamId ? { team_id: teamId } : {});
      const presence = new Presence(ch);
      presence.onSync(() =>
        th.onViewers(
          presence.list((userId: string, { metas }: { metas: Array<{ name: string; state: string }> }) => {
            const top = [...metas].sort((a, b) => (RANK[b.state] ?? 0) - (RANK[a.state] ?? 0))[0];
            return { userId, name: top?.name ?? '', state: top?.state ?? 'viewing' };
          }),
        ),
      );
      ch.on('typing', (p: { user_id: string; name: string }) => th.onTyping({ userId: p.user_id, name: p.name }));
      ch.on('customer_typing', (p: { contact_id: string }) => th.onCustomerTyping?.({ contactId: p.contact_id }));
      ch.join();
    });
    return {
      setState(next) {
        if (next === state) return;
        state = next;
        ch?.push('presence', { state });
      },
      typing(contactId) {
        const now = Date.now();
        if (now - lastTyping < 2500) return;
        lastTyping = now;
        ch?.push('typing', contactId ? { contact_id: contactId } : {});
      },
      leave() {
        left = true;
        ch?.leave();
      },
    };
  };

  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      globalThis.removeEventListener?.('online', kick);
      globalThis.removeEventListener?.('offline', onOffline);
      globalThis.removeEventListener?.('focus', kick);
      globalThis.removeEventListener?.('pageshow', kick);
      globalThis.document?.removeEventListener('visibilitychange', onVisible);
      channel?.leave();
      socket?.disconnect();
    },
    ticket,
  };
}
