// Reading and refusing a WebSocket upgrade request: its Origin, the token the Phoenix client
// puts in Sec-WebSocket-Protocol, and an answer in the API's error body.
import type { Duplex } from 'node:stream';

const AUTH_PROTOCOL_PREFIX = 'base64url.bearer.phx.';

/** The origin of an Origin header, or null for none or `null`. */
export function originOf(text: string): string | null {
  try {
    const u = new URL(text);
    return u.origin === 'null' ? null : u.origin;
  } catch {
    return null;
  }
}

/** The token the Phoenix client's `authToken` option puts in Sec-WebSocket-Protocol. */
export function tokenFromProtocols(header: string | undefined): string | null {
  if (!header) return null;
  for (const p of header.split(',')) {
    const v = p.trim();
    if (!v.startsWith(AUTH_PROTOCOL_PREFIX)) continue;
    try {
      return Buffer.from(v.slice(AUTH_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
    } catch {
      return null;
    }
  }
  return null;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Answers an upgrade that is not accepted with the API's error body, then closes. */
export function refuse(socket: Duplex, status: number, code: string, detail: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ status, code, detail });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
