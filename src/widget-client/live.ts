// The widget socket (docs/widget.md "The widget socket"): the official Phoenix client (npm
// `phoenix`, serializer v2) on the session's gateway_url, joined to the session's contact topic.
//
// Reconnecting is ours, not the Phoenix client's: a ws_token is only good for five minutes and
// only to connect, so after a lost connection the widget opens its session again (a fresh
// ws_token) and then a new socket, joining with {since: the last seq applied}: the messages missed
// meanwhile come first, in order, then the live ones. `resync` in the join's reply (too many
// missed, or no longer kept) means: reload over HTTP. Tries back off from half a second to 15
// seconds, and start again at once when the browser says it is online again (when it says it is
// offline, the socket is given up at once).
import { type Channel, Presence, Socket } from 'phoenix';
import type { Agent, Session } from './types.js';

export type Connection = 'connecting' | 'online' | 'offline';

export interface LiveEvent {
  id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface LiveHandlers {
  event(e: LiveEvent): void;
  typing(p: { ticket_id: string; user: { id: string; name: string | null; avatar_url: string | null } }): void;
  presence(agents: Agent[]): void;
  status(s: Connection): void;
  /** Events were missed that replay cannot bring: reload what is shown. */
  resync(): void;
  /** A fresh session for the next connection; throws when there is none to have. */
  refresh(): Promise<Session>;
}

const BACKOFF = [500, 1000, 2000, 5000, 10_000, 15_000];

export class Live {
  lastSeq: number | null = null;
  private socket: Socket | null = null;
  private channel: Channel | null = null;
  /** Bumped at each connection: callbacks of an older socket are ignored. */
  private generation = 0;
  private tries = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private readonly onOnline = () => this.retryNow();
  /** The browser lost its network: the socket is gone too; reconnect when it is back (online). */
  private readonly onOffline = () => {
    if (this.socket) this.lost();
    this.handlers.status('offline');
  };

  constructor(private readonly handlers: LiveHandlers) {
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOffline);
  }

  start(session: Session): void {
    this.stopped = false;
    this.connect(session);
  }

  /** Pushes `typing` for a conversation (agents on the ticket see customer_typing). */
  typing(ticketId: string): void {
    if (this.channel?.state === 'joined') this.channel.push('typing', { ticket_id: ticketId });
  }

  stop(): void {
    this.stopped = true;
    this.teardown();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
  }

  private teardown(): void {
    this.generation++;
    const { socket, channel } = this;
    this.socket = null;
    this.channel = null;
    channel?.leave();
    socket?.disconnect();
  }

  private connect(s: Session): void {
    this.teardown();
    const generation = this.generation;
    const mine = () => generation === this.generation && !this.stopped;
    this.handlers.status('connecting');
    const socket = new Socket(s.gateway_url.replace(/\/websocket$/, ''), {
      params: { token: s.ws_token },
      // Reconnects are made here (above); the client's own would reuse an expired token.
      reconnectAfterMs: () => 3_600_000,
      rejoinAfterMs: (tries) => BACKOFF[Math.min(tries, BACKOFF.length) - 1] ?? 15_000,
    });
    socket.onClose(() => {
      if (mine()) this.lost();
    });
    const channel = socket.channel(s.topic, () => (this.lastSeq === null ? {} : { since: this.lastSeq }));
    channel.on('event', (e: LiveEvent) => {
      if (!mine()) return;
      if (typeof e.seq === 'number') this.lastSeq = Math.max(this.lastSeq ?? 0, e.seq);
      this.handlers.event(e);
    });
    channel.on('typing', (p) => {
      if (mine()) this.handlers.typing(p);
    });
    const presence = new Presence(channel);
    presence.onSync(() => {
      if (!mine()) return;
      this.handlers.presence(
        presence.list((id: string, p: { metas: Array<{ name?: string; avatar?: string | null }> }) => ({
          id,
          name: p.metas[0]?.name ?? null,
          avatar: p.metas[0]?.avatar ?? null,
        })),
      );
    });
    channel
      .join()
      .receive('ok', (reply: { latest_seq?: number; resync?: boolean }) => {
        if (!mine()) return;
        this.tries = 0;
        const latest = typeof reply?.latest_seq === 'number' ? reply.latest_seq : null;
        if (reply?.resync) {
          if (latest !== null) this.lastSeq = Math.max(this.lastSeq ?? 0, latest);
          this.handlers.resync();
        } else if (this.lastSeq === null && latest !== null) {
          this.lastSeq = latest;
        }
        this.handlers.status('online');
      })
      .receive('error', () => {
        if (mine()) this.lost();
      });
    this.socket = socket;
    this.channel = channel;
    socket.connect();
  }

  private lost(): void {
    if (this.stopped || this.timer) return;
    this.teardown();
    this.handlers.status(navigator.onLine === false ? 'offline' : 'connecting');
    const delay = BACKOFF[Math.min(this.tries, BACKOFF.length - 1)]!;
    this.tries++;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.reconnect();
    }, delay);
  }

  private retryNow(): void {
    if (this.stopped || this.socket?.isConnected()) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.tries = 0;
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    if (this.stopped) return;
    try {
      const s = await this.handlers.refresh();
      if (!this.stopped) this.connect(s);
    } catch {
      // Offline, the service unreachable, or the visitor is gone (refresh said so): try later.
      if (!this.stopped) this.lost();
    }
  }
}
