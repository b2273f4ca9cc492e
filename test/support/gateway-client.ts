// The official Phoenix client (npm `phoenix`) against the gateway, with `ws` as its transport
// in Node, and small promise helpers around joins and pushes. Used by test/gateway*.test.ts.
import { randomUUID } from 'node:crypto';
import { type Channel, Socket } from 'phoenix';
import WebSocket from 'ws';
import type { Api, ReqOpts, Service } from './helpers.js';

export const wsBase = (httpUrl: string) => httpUrl.replace(/^http/, 'ws');

export interface Client {
  socket: Socket;
  /** Close events seen by the client (code, reason). */
  closes: Array<{ code: number; reason: string }>;
  /** Errors (refused connects, broken transports). */
  errors: number;
  opened: number;
  disconnect(): void;
}

export interface ConnectOpts {
  widget?: boolean;
  origin?: string;
  /** Reconnect delay (ms); the client's default backoff otherwise. */
  reconnectMs?: number;
}

/** A Phoenix socket on the agent (or widget) endpoint; `token` may change between reconnects. */
export function connect(base: string, token: string | (() => string), o: ConnectOpts = {}): Client {
  const origin = o.origin;
  const transport = origin
    ? class extends WebSocket {
        constructor(url: string, protocols?: string | string[]) {
          super(url, protocols, { headers: { origin } });
        }
      }
    : WebSocket;
  const socket = new Socket(`${wsBase(base)}/socket${o.widget ? '/widget' : ''}`, {
    transport: transport as never,
    params: typeof token === 'function' ? () => ({ token: token() }) : { token },
    ...(o.reconnectMs !== undefined ? { reconnectAfterMs: () => o.reconnectMs! } : {}),
    rejoinAfterMs: () => 200,
  });
  const client: Client = {
    socket,
    closes: [],
    errors: 0,
    opened: 0,
    disconnect: () => socket.disconnect(),
  };
  socket.onOpen(() => {
    client.opened++;
  });
  socket.onClose((e: { code: number; reason: string }) => {
    client.closes.push({ code: e.code, reason: e.reason });
  });
  socket.onError(() => {
    client.errors++;
  });
  socket.connect();
  return client;
}

export interface Reply {
  status: 'ok' | 'error' | 'timeout';
  response: any;
}

/** Joins and resolves with the first reply (a refused channel is left, so it does not retry). */
export function join(ch: Channel, timeout = 5000): Promise<Reply> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: Reply) => {
      if (done) return;
      done = true;
      if (r.status !== 'ok') ch.leave();
      resolve(r);
    };
    ch.join(timeout)
      .receive('ok', (response) => finish({ status: 'ok', response }))
      .receive('error', (response) => finish({ status: 'error', response }))
      .receive('timeout', () => finish({ status: 'timeout', response: null }));
  });
}

export function push(ch: Channel, event: string, payload: object, timeout = 5000): Promise<Reply> {
  return new Promise((resolve) => {
    ch.push(event, payload, timeout)
      .receive('ok', (response) => resolve({ status: 'ok', response }))
      .receive('error', (response) => resolve({ status: 'error', response }))
      .receive('timeout', () => resolve({ status: 'timeout', response: null }));
  });
}

/** Everything a channel receives of one event name, in arrival order. */
export function collect<T = any>(ch: Channel, event = 'event'): T[] {
  const got: T[] = [];
  ch.on(event, (payload) => {
    got.push(payload as T);
  });
  return got;
}

/** A realtime token for the caller (POST /v1/realtime/token). */
export async function realtimeToken(api: Api, as: ReqOpts): Promise<string> {
  const r = await api.post('/v1/realtime/token', undefined, as);
  if (r.status !== 200) throw new Error(`realtime token: ${r.status} ${r.text}`);
  return r.body.token;
}

/**
 * A widget realtime token (purpose widget_ws: sub = contact id, wid = workspace, vid = the visitor),
 * signed directly, for a visitor of the contact made here (the gateway opens a widget socket only
 * for a live visitor: src/gateway/visitors.ts).
 */
export async function widgetToken(svc: Service, workspaceId: string, contactId: string, ttl?: number) {
  const vid = randomUUID();
  await svc.rt.deps.database.db
    .insertInto('widget_visitors')
    .values({ workspace_id: workspaceId, id: vid, contact_id: contactId, token_hash: `test-${vid}` })
    .execute();
  return (await svc.rt.deps.tokens.sign({ purpose: 'widget_ws', sub: contactId, wid: workspaceId, vid }, ttl)).token;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the socket is open (or fails after `ms`). */
export async function opened(c: Client, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!c.socket.isConnected()) {
    if (Date.now() > until) throw new Error('socket did not open');
    await sleep(10);
  }
}
