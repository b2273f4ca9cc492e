// The sockets: an HTTP upgrade checked (path, serializer version, origin, token) and accepted,
// the frames it sends read, idle sockets (no heartbeat) closed, and a closed socket's topics left.
// Tokens are checked once, at connect.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { Conn, type Identity } from './conn.js';
import { AGENT_PATH, type GatewayCore, WIDGET_PATH } from './core.js';
import { identityOf } from './identity.js';
import { part } from './joins.js';
import { CLOSE, decodeFrame } from './protocol.js';
import { originOf, refuse, tokenFromProtocols } from './upgrade.js';
import { visitorMayConnect } from './visitors.js';

export function handleUpgrade(g: GatewayCore, req: IncomingMessage, socket: Duplex, head: Buffer) {
  socket.on('error', () => socket.destroy());
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://gateway');
  } catch {
    return refuse(socket, 400, 'bad_request', 'The request could not be read.');
  }
  const endpoint = url.pathname === AGENT_PATH ? 'agent' : url.pathname === WIDGET_PATH ? 'widget' : null;
  if (!endpoint) return refuse(socket, 404, 'not_found', 'No socket endpoint here.');
  if (g.closing) return refuse(socket, 503, 'unavailable', 'The gateway is shutting down.');
  const vsn = url.searchParams.get('vsn');
  if (vsn !== null && !/^2\.\d+\.\d+$/.test(vsn)) {
    return refuse(socket, 400, 'bad_request', 'Only the JSON serializer version 2 (vsn=2.0.0) is spoken here.');
  }
  if (endpoint === 'agent') {
    const origin = req.headers.origin;
    if (origin !== undefined && !g.origins.has(originOf(origin) ?? '')) {
      g.deps.log.info({ origin: origin.slice(0, 200) }, 'gateway refused an origin');
      return refuse(socket, 403, 'forbidden', 'This origin may not open an agent socket.');
    }
  }
  const token = url.searchParams.get('token') ?? tokenFromProtocols(req.headers['sec-websocket-protocol']);
  if (!token || token.length > 4096) return refuse(socket, 401, 'unauthorized', 'A realtime token is required.');
  authenticate(g, endpoint, token, req.socket.remoteAddress ?? '').then(
    (who) => {
      if (socket.destroyed) return;
      // Checked again: a revocation may have come while the database was read.
      if (!who || g.revoked.refuses(who)) {
        return refuse(socket, 401, 'unauthorized', 'The realtime token is invalid, expired or revoked.');
      }
      if (g.closing) return refuse(socket, 503, 'unavailable', 'The gateway is shutting down.');
      g.wss.handleUpgrade(req, socket, head, (ws) => accept(g, ws, socket, who));
    },
    (err) => {
      g.deps.log.error({ err: String(err) }, 'gateway could not check a token');
      refuse(socket, 500, 'internal_error', 'Something went wrong on our side.');
    },
  );
}

async function authenticate(
  g: GatewayCore,
  endpoint: 'agent' | 'widget',
  token: string,
  ip: string,
): Promise<Identity | null> {
  const who = await identityOf(g.deps.tokens, endpoint, token, ip);
  if (!who || g.revoked.refuses(who)) return null;
  // A visitor's token also needs its visitor live (not signed out, its contact not deleted)
  // and the widget on: read at each connect, so every gateway process, a restarted one too, knows.
  if (who.kind === 'widget' && !(await visitorMayConnect(g.deps.database.db, who))) return null;
  return who;
}

function accept(g: GatewayCore, ws: WebSocket, socket: Duplex, who: Identity): void {
  const conn = new Conn(ws, socket, who, g);
  g.conns.add(conn);
  addTo(g.byWorkspace, who.wid, conn);
  if (conn.userId) addTo(g.byUser, conn.userId, conn);
  ws.on('message', (data, isBinary) => onMessage(g, conn, data, isBinary));
  ws.on('close', () => onClose(g, conn));
  ws.on('error', () => conn.ws.terminate());
}

/** A socket whose unsent data passed the bound stopped reading, so it goes. */
export function dropSlow(g: GatewayCore, conn: Conn): void {
  if (conn.closed) return;
  conn.closed = true;
  g.deps.log.warn(
    { socket: conn.id, workspace_id: conn.wid, buffered: conn.buffered },
    'gateway dropped a socket that stopped reading',
  );
  conn.ws.terminate();
}

function onClose(g: GatewayCore, conn: Conn): void {
  conn.closed = true;
  if (!g.conns.delete(conn)) return;
  removeFrom(g.byWorkspace, conn.wid, conn);
  if (conn.userId) removeFrom(g.byUser, conn.userId, conn);
  for (const topic of conn.joined.keys()) part(g, conn, topic);
  conn.joined.clear();
}

function onMessage(g: GatewayCore, conn: Conn, data: RawData, isBinary: boolean) {
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
  g.onFrame(conn, f);
}

/** Closes the sockets that sent nothing (heartbeats included) for the heartbeat timeout. */
export function sweepIdle(g: GatewayCore): void {
  const now = Date.now();
  for (const c of g.conns) {
    if (now - c.lastSeen > g.limits.heartbeatTimeoutMs) c.close(CLOSE.heartbeatTimeout, 'heartbeat_timeout');
  }
  g.revoked.prune();
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
