// {gateway_url}/health: whether the gateway answers (clients check it when sockets keep
// failing, e.g. behind a proxy that does not pass WebSocket upgrades). On the API's server it
// is a public route of the route table; the gateway-only process answers it without Fastify.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { App } from '../platform/http/app-type.js';
import { access } from '../platform/http/context.js';
import type { Gateway } from './gateway.js';

export const HEALTH_PATH = '/health';

const Health = Type.Object(
  { status: Type.Literal('ok'), sockets: Type.Integer({ description: 'Sockets open on this process.' }) },
  { title: 'GatewayHealth' },
);

export function registerGatewayRoutes(app: App, gateway: Gateway): void {
  app.get(
    HEALTH_PATH,
    {
      config: { access: access.public(), rateLimited: false },
      schema: {
        tags: ['realtime'],
        summary: 'Realtime gateway health (the sockets are at /socket/websocket and /socket/widget/websocket)',
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' as const, sockets: gateway.stats().sockets }),
  );
}

/** The gateway-only process's HTTP answers: /health, and the API's error body for the rest. */
export function gatewayHttpHandler(gateway: Gateway) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    let status = 200;
    let body: object = { status: 'ok', sockets: gateway.stats().sockets };
    if (path !== HEALTH_PATH) {
      status = 404;
      body = { status, code: 'not_found', detail: 'This process serves the realtime gateway only.' };
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      status = 405;
      body = { status, code: 'method_not_allowed', detail: 'Use GET.' };
      res.setHeader('allow', 'GET, HEAD');
    }
    sendJson(req, res, status, body);
  };
}

/** A JSON answer of the gateway process's own HTTP server (no body for HEAD; never cached). */
export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
  req.resume();
}
