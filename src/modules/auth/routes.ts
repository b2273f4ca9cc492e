// /v1/auth/*: register, sign in (with two-factor), refresh, sign out, the accounts of this
// browser, and App Attest for the native app. Every route is public (the credential is the
// password, the mfa_token, or the refresh token) and outside Idempotency-Key.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ApiError, invalid } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { workspacesOfUser } from '../workspace/service.js';
import { ipBucket } from './protection.js';
import {
  Accounts,
  AppAttestChallenge,
  AppAttestKey,
  AppAttestKeyBody,
  EmptyBody,
  LoginBody,
  LoginResult,
  LogoutBody,
  MfaBody,
  RefreshBody,
  RegisterBody,
  Session,
} from './schemas.js';
import { completeMfa, login, register } from './service.js';
import {
  bodyToken,
  clearRefreshCookie,
  deviceOf,
  type IssuedSession,
  LEGACY_COOKIE,
  logout,
  type Presented,
  presentedCookies,
  refresh,
  replacePreviousSession,
  setRefreshCookie,
  signedInAccounts,
} from './sessions.js';
import { getUser } from './users.js';

/** Native clients (SVC-Client: ios/<version>, no Origin) get the refresh token in the body. */
export const isNative = (req: FastifyRequest): boolean =>
  /^ios\/[\w.+-]{1,32}$/.test(String(req.headers['svc-client'] ?? '')) && req.headers.origin === undefined;

export function sendSession(reply: FastifyReply, s: IssuedSession, native: boolean) {
  if (!native) setRefreshCookie(reply, s);
  reply.header('cache-control', 'no-store');
  return {
    access_token: s.accessToken,
    expires_in: s.expiresIn,
    token_type: 'Bearer' as const,
    ...(native ? { refresh_token: s.refreshToken } : {}),
    user: s.user,
  };
}

/**
 * Refresh, logout and accounts may be called with no body at all when the browser presents a
 * refresh cookie (that is their whole input). Without a cookie the body is required as usual.
 */
async function bodyOptionalWithCookie(req: FastifyRequest) {
  if (req.body === undefined && presentedCookies(req).length > 0) {
    req.body = {};
  }
}

/** The refresh tokens of a request: the body's for native clients, the cookies' otherwise. */
function presentedBy(req: FastifyRequest, native: boolean, bodyTokenValue: string | undefined): Presented[] {
  if (native) return bodyTokenValue === undefined ? [] : bodyToken(bodyTokenValue);
  if (bodyTokenValue !== undefined) {
    throw invalid('body.refresh_token', 'is for native clients (SVC-Client: ios/<version>); browsers use the cookie');
  }
  return presentedCookies(req);
}

const SIGN_IN = { access: access.public(), idempotent: false } as const;

export default async function authRoutes(app: App, deps: Deps) {
  app.post(
    '/v1/auth/register',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'Create an account and sign in',
        description:
          'With CHALLENGE set, send challenge_token (or app_attest from the native app). 409 conflict when the ' +
          'email is taken; 409 too_many_accounts when this browser is already signed in to five other accounts.',
        body: RegisterBody,
        response: { 201: Session },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const s = await register(deps, req, req.body, native);
      if (!native) await replacePreviousSession(deps, req, reply, s.user.id, s.sessionId);
      reply.code(201);
      return sendSession(reply, s, native);
    },
  );

  app.post(
    '/v1/auth/login',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'Sign in with email and password',
        description:
          'Answers a session (and sets the refresh cookie `svc_rt_<user_id>`), or, for a user with two-factor, ' +
          '`{mfa_required: true, mfa_token}` to complete at POST /v1/auth/mfa. At most 10 failed attempts per ' +
          'account and 30 per IP address in 15 minutes (429 rate_limited with Retry-After).',
        body: LoginBody,
        response: { 200: LoginResult },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const out = await login(deps, req, req.body, native);
      if (out.kind === 'mfa') {
        reply.header('cache-control', 'no-store');
        return { mfa_required: true as const, mfa_token: out.mfaToken };
      }
      if (!native) await replacePreviousSession(deps, req, reply, out.session.user.id, out.session.sessionId);
      return sendSession(reply, out.session, native);
    },
  );

  app.post(
    '/v1/auth/mfa',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'Complete a sign-in with a two-factor code',
        description:
          'mfa_token from POST /v1/auth/login (5 minutes) and a 6-digit TOTP code or an unused recovery code. ' +
          'A code works once. Answers a session, as login.',
        body: MfaBody,
        response: { 200: Session },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const s = await completeMfa(deps, req, req.body, native);
      if (!native) await replacePreviousSession(deps, req, reply, s.user.id, s.sessionId);
      return sendSession(reply, s, native);
    },
  );

  app.post(
    '/v1/auth/refresh',
    {
      config: SIGN_IN,
      preValidation: bodyOptionalWithCookie,
      schema: {
        tags: ['auth'],
        summary: 'A new access token; the refresh token rotates',
        description:
          'Browsers: the `svc_rt_<user_id>` cookies (or the legacy `svc_refresh`, moved to the new name); ' +
          '`user_id` refreshes that account only, otherwise the most recently used. Native clients: ' +
          '`refresh_token` in the body, and the new one comes back in the body. A refresh token that was ' +
          'already rotated signs its whole session out (401).',
        body: RefreshBody,
        response: { 200: Session },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const presented = presentedBy(req, native, req.body.refresh_token);
      reply.header('cache-control', 'no-store');
      const r = await refresh(deps, reply, presented, req.body.user_id, deviceOf(req));
      if (!native && r.fromLegacy) clearRefreshCookie(reply, LEGACY_COOKIE);
      return sendSession(reply, r.issued, native);
    },
  );

  app.post(
    '/v1/auth/logout',
    {
      config: SIGN_IN,
      preValidation: bodyOptionalWithCookie,
      schema: {
        tags: ['auth'],
        summary: 'Sign out (and close the live sockets of the session)',
        description:
          'Signs out the current account: `user_id` when given, else the access token’s user, else the most ' +
          'recently used. `all: true` signs out every account of this browser. Native clients send ' +
          '`refresh_token`. Always 204.',
        body: LogoutBody,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const presented = presentedBy(req, native, req.body.refresh_token);
      const auth = req.auth;
      await logout(deps, reply, presented, {
        all: req.body.all === true,
        ...(req.body.user_id !== undefined ? { userId: req.body.user_id } : {}),
        accessSession: auth.kind === 'user' ? { userId: auth.user.userId, sessionId: auth.user.sessionId } : null,
      });
      reply.header('cache-control', 'no-store');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/auth/accounts',
    {
      config: SIGN_IN,
      preValidation: bodyOptionalWithCookie,
      schema: {
        tags: ['auth'],
        summary: 'The accounts signed in on this browser, with their workspaces',
        description: 'Reads the refresh cookies; nothing rotates. Most recently used first.',
        body: EmptyBody,
        response: { 200: Accounts },
      },
    },
    async (req, reply) => {
      const sessions = await signedInAccounts(deps, isNative(req) ? [] : presentedCookies(req));
      const data = [];
      for (const [i, s] of sessions.entries()) {
        const [user, workspaces] = await Promise.all([getUser(deps, s.user_id), workspacesOfUser(deps, s.user_id)]);
        if (!user) continue;
        data.push({
          user,
          workspaces: workspaces.map((w) => ({ id: w.id, name: w.name, slug: w.slug, role: w.role as 'owner' })),
          last_used_at: iso(s.last_used_at)!,
          current: i === 0,
        });
      }
      reply.header('cache-control', 'no-store');
      return { data };
    },
  );

  // App Attest challenges cost a row each: at most 30 a minute per address (on top of the
  // general limit), counted in Redis when it is set.
  const challengeLimiter = app.createRateLimit({
    max: 30,
    timeWindow: 60_000,
    keyGenerator: (req) => `aa-challenge:${ipBucket(req.ip)}`,
  });

  app.post(
    '/v1/auth/app-attest/challenge',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'A single-use App Attest challenge (5 minutes)',
        description:
          'For the native app: attest a key with it (POST /v1/auth/app-attest/keys) or sign it in an assertion ' +
          '(`app_attest` on login and register). 404 when App Attest is not configured (APP_ATTEST_APP_ID).',
        response: { 200: AppAttestChallenge },
      },
    },
    async (req, reply) => {
      const limit = await challengeLimiter(req);
      if (!limit.isAllowed && limit.isExceeded) {
        const s = String(limit.ttlInSeconds);
        throw new ApiError('rate_limited', `Too many challenges. Retry in ${s} s.`, undefined, {
          'retry-after': s,
          'ratelimit-limit': String(limit.max),
          'ratelimit-remaining': '0',
          'ratelimit-reset': s,
        });
      }
      // App Attest's verifier (node-app-attest, cbor) is loaded on first use, not at start.
      const { issueChallenge } = await import('./app-attest.js');
      const c = await issueChallenge(deps);
      reply.header('cache-control', 'no-store');
      return { challenge: c.challenge, expires_at: iso(c.expiresAt)! };
    },
  );

  app.post(
    '/v1/auth/app-attest/keys',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'Register a key attested by Apple App Attest',
        description:
          'The attestation is verified against Apple’s App Attest root, this app’s id and the challenge ' +
          '(which is used up whatever the outcome). 422 when it does not verify; 409 when the key is known.',
        body: AppAttestKeyBody,
        response: { 201: AppAttestKey },
      },
    },
    async (req, reply) => {
      const { registerKey } = await import('./app-attest.js');
      const k = await registerKey(deps, req.body);
      reply.code(201);
      return { key_id: k.keyId, environment: k.environment as 'production', created_at: iso(k.createdAt)! };
    },
  );
}
