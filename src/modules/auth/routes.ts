// /v1/auth/*: register and sign in. (Refresh, logout, two-factor: the identity issue.)
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import type { Deps } from '../../deps.js';
import { access } from '../../platform/http/context.js';
import { LoginBody, RegisterBody, Session } from './schemas.js';
import { type IssuedSession, login, register } from './service.js';

/** Native clients (SVC-Client: ios/<version>, no Origin) get the refresh token in the body. */
export const isNative = (req: FastifyRequest): boolean =>
  /^ios\/[\w.+-]{1,32}$/.test(String(req.headers['svc-client'] ?? '')) && req.headers.origin === undefined;

const REFRESH_COOKIE_MAX_AGE = 60 * 24 * 3600;

export function sendSession(reply: FastifyReply, s: IssuedSession, native: boolean) {
  if (!native) {
    reply.setCookie(`svc_rt_${s.user.id}`, s.refreshToken, {
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      path: '/v1/auth',
      maxAge: REFRESH_COOKIE_MAX_AGE,
    });
  }
  reply.header('cache-control', 'no-store');
  return {
    access_token: s.accessToken,
    expires_in: s.expiresIn,
    token_type: 'Bearer' as const,
    ...(native ? { refresh_token: s.refreshToken } : {}),
    user: s.user,
  };
}

export default async function authRoutes(app: App, deps: Deps) {
  app.post(
    '/v1/auth/register',
    {
      config: { access: access.public(), idempotent: false },
      schema: {
        tags: ['auth'],
        summary: 'Create an account and sign in',
        body: RegisterBody,
        response: { 201: Session },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const s = await register(deps, req.body, native);
      reply.code(201);
      return sendSession(reply, s, native);
    },
  );

  app.post(
    '/v1/auth/login',
    {
      config: { access: access.public(), idempotent: false },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with email and password',
        body: LoginBody,
        response: { 200: Session },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const s = await login(deps, req.body, native);
      return sendSession(reply, s, native);
    },
  );
}
