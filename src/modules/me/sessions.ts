// /v1/me/sessions: the signed-in person's own sessions (one per sign-in, on any device), listed
// and revocable: "sign out everywhere else". The rules of sessions themselves (lifetime, refresh,
// revoking and closing sockets) are src/modules/auth/sessions.ts.
//
// Only for people signed in with a session (API keys get 403, as every user route). A session
// of someone else is answered like one that does not exist (404). None of these routes stores
// its answer for Idempotency-Key: the key is per person, and two sessions of one person must not
// get each other's answers; revoking twice is harmless anyway.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import { iso, Nullable } from '../../platform/http/schemas.js';
import {
  LISTED_SESSIONS,
  liveSessionsOf,
  revokeOtherSessions,
  revokeSessionOf,
  USER_AGENT_MAX,
} from '../auth/sessions.js';

export const OwnSessionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The session: DELETE /v1/me/sessions/{id} signs it out.' }),
    created_at: Type.String({ format: 'date-time', description: 'The sign-in.' }),
    last_used_at: Type.String({
      format: 'date-time',
      description:
        'The sign-in or the latest refresh. Clients refresh their 15-minute access token while in use, so ' +
        'this is within about 15 minutes of the last activity.',
    }),
    expires_at: Type.String({
      format: 'date-time',
      description:
        'When the session ends unless it is refreshed before: 30 days after the last use, at the latest 60 days ' +
        'after the sign-in.',
    }),
    user_agent: Nullable(
      Type.String({
        maxLength: USER_AGENT_MAX,
        description: `The User-Agent of the sign-in or the latest refresh, as sent (control characters removed, at most ${USER_AGENT_MAX} characters); null when none was sent.`,
      }),
    ),
    ip: Nullable(
      Type.String({
        description:
          'The client address of the sign-in or the latest refresh (behind a proxy: as TRUST_PROXY lets the ' +
          'service see it); null for sessions from before addresses were kept.',
      }),
    ),
    kind: Type.Union([Type.Literal('browser'), Type.Literal('native')], {
      description:
        'browser: a refresh cookie in a web browser; native: the native app (SVC-Client), which holds the refresh token itself.',
    }),
    current: Type.Boolean({ description: 'The session of the access token this request was made with.' }),
  },
  { title: 'OwnSession', description: 'One sign-in of yours that has not ended. Never shows a token.' },
);

const OwnSessions = Type.Object(
  {
    data: Type.Array(OwnSessionSchema, {
      description: `Your live sessions, most recently used first (at most ${LISTED_SESSIONS}).`,
    }),
  },
  { description: 'Your sessions on every device.' },
);

const SessionParams = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'A session id from GET /v1/me/sessions.' }) },
  { additionalProperties: false },
);

const Revoked = Type.Object(
  {
    revoked: Type.Integer({
      minimum: 0,
      description: 'How many live sessions were signed out (0 when this was the only one).',
    }),
  },
  { description: 'What signing out everywhere else did.' },
);

const OWN = { access: access.user(), idempotent: false } as const;

export default async function meSessionRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/me/sessions',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Your sessions: where you are signed in',
        description:
          `Every sign-in of yours that has not ended (not signed out, revoked or expired), on any device, most ` +
          `recently used first, at most ${LISTED_SESSIONS}. \`current\` marks the session of this request's access ` +
          'token. No token or hash of one is ever shown. For signed-in people (API keys get 403).',
        response: { 200: OwnSessions },
      },
    },
    async (req, reply) => {
      const sessions = await liveSessionsOf(deps, req.user.userId);
      reply.header('cache-control', 'no-store');
      return {
        data: sessions.map((s) => ({
          id: s.id,
          created_at: iso(s.created_at)!,
          last_used_at: iso(s.last_used_at)!,
          expires_at: iso(s.ends_at)!,
          user_agent: s.user_agent,
          ip: s.ip,
          kind: s.native ? ('native' as const) : ('browser' as const),
          current: s.id === req.user.sessionId,
        })),
      };
    },
  );

  app.delete(
    '/v1/me/sessions/:id',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Sign out one of your sessions',
        description:
          'Revokes it: its access tokens stop working at once, its refresh token is refused, and its live sockets ' +
          'close. 404 when it is not one of your live sessions (someone else’s, ended, or unknown alike); 422 ' +
          'when the id is not a UUID. Your current session may be named too, but POST /v1/auth/logout is the way ' +
          'to sign out here (it also clears the browser’s cookie).',
        params: SessionParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      if (!(await revokeSessionOf(deps, req.user.userId, req.params.id.toLowerCase()))) {
        throw notFound('Session not found.');
      }
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/me/sessions/revoke-others',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Sign out everywhere else',
        description:
          'Revokes every session of yours except the current one (the one of this access token): their access ' +
          'tokens and refresh tokens stop working and their live sockets close, on every device and every other ' +
          'browser. This session stays signed in. No body. Answers how many sessions were signed out.',
        response: { 200: Revoked },
      },
    },
    async (req) => ({ revoked: await revokeOtherSessions(deps, req.user.userId, req.user.sessionId) }),
  );
}
