// The realtime gateway (docs/realtime.md) through the official Phoenix client: a socket per
// selected workspace, joined to workspace:<id>. Events are applied in seq order, once: a live
// event more than one past the last applied, and every rejoin after a reconnect whose latest_seq
// is ahead, first replays the gap from GET /v1/events; `resync` (away longer than the retention)
// reloads everything. A fresh realtime token is fetched before every reconnect.
import { type Channel, Presence, Socket } from 'phoenix';
import { api, ok } from './api';

export interface Envelope {
  id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  occurred_at: string;
}

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

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
  return ok(api.POST('/v1/realtime/token', { headers: { 'svc-workspace': workspaceId } }));
}

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
    h.onStatus('live');
    if (lastSeq === null) {
      // First join: what was loaded over HTTP may predate it by a moment; load it again.
      lastSeq = latest;
      h.onResync();
      const queued = waiting.splice(0).sort((a, b) => a.seq - b.seq);
      for (const e of queued) receive(e);
    } else if (latest > lastSeq) void replay(latest);
  };

  void (async () => {
    h.onStatus('connecting');
    let token: string;
    let url: string;
    try {
      ({ token, url } = await realtimeToken(workspaceId));
    } catch {
      h.onStatus('reconnecting');
      return;
    }
    if (stopped) return;
    socket = new Socket(url.replace(/\/websocket$/, ''), {
      params: () => ({ token }),
      reconnectAfterMs: (tries: number) => [500, 1000, 2000, 5000][tries - 1] ?? 10_000,
    });
    socket.onClose(() => {
      if (stopped) return;
      h.onStatus('reconnecting');
      // The automatic reconnect needs a token from the last 5 minutes.
      realtimeToken(workspaceId).then(
        (t) => {
          token = t.token;
        },
        () => {},
      );
    });
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
        if (sides.has(topic) || !socket) continue;
        const ch = socket.channel(topic, {});
        ch.on('event', (e: Envelope) => handOn(e));
        ch.join();
        sides.set(topic, ch);
      }
    };
    socket.onOpen(joinSides);
    socket.connect();
    connected(socket);
    channel = socket.channel(`workspace:${workspaceId}`, {});
    channel.on('event', (e: Envelope) => receive(e));
    channel
      .join()
      .receive('ok', (r: { latest_seq: number }) => joined(r.latest_seq))
      .receive('error', () => h.onStatus('reconnecting'));
  })();

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
      channel?.leave();
      socket?.disconnect();
    },
    ticket,
  };
}
