// POST /v1/realtime/token: a 5-minute token (purpose ws) for the agent socket.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access, recordedActorType } from '../../platform/http/context.js';
import { Timestamp } from '../../platform/http/schemas.js';

/** The gateway's address as clients see it: PUBLIC_URL with ws(s). */
export const gatewayUrl = (publicUrl: string) => publicUrl.replace(/^http/, 'ws');

export default async function realtimeRoutes(app: App, deps: Deps) {
  app.post(
    '/v1/realtime/token',
    {
      config: { access: access.member('viewer', 'realtime'), idempotent: false },
      schema: {
        tags: ['realtime'],
        summary: 'A realtime token (5 minutes, valid only at connect) and the gateway address',
        response: { 200: Type.Object({ token: Type.String(), url: Type.String(), expires_at: Timestamp }) },
      },
    },
    async (req, reply) => {
      const { ctx } = req;
      const actor = ctx.actor;
      const { token, expiresAt } = await deps.tokens.sign({
        purpose: 'ws',
        sub: actor.kind === 'member' ? actor.userId : actor.apiKeyId,
        kind: recordedActorType(actor),
        ...(actor.kind === 'member' ? { sid: actor.sessionId } : {}),
        wid: ctx.workspaceId,
        role: ctx.role,
        teams: ctx.teams,
      });
      reply.header('cache-control', 'no-store');
      return {
        token,
        url: `${gatewayUrl(deps.config.publicUrl)}/socket/websocket`,
        expires_at: expiresAt.toISOString(),
      };
    },
  );
}
