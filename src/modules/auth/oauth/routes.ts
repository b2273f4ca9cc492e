// /v1/auth/oauth/*: OAuth sign-in (start, callback, exchange) and /v1/me/identities (linked
// accounts). docs/auth.md "OAuth sign-in".
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import { hashSecret } from '../../../platform/crypto/tokens.js';
import type { App } from '../../../platform/http/app-type.js';
import { access } from '../../../platform/http/context.js';
import { ApiError, invalid, unauthorized } from '../../../platform/http/errors.js';
import { sendSession } from '../routes.js';
import { LoginResult } from '../schemas.js';
import { passwordVersion, verifyProof } from '../service.js';
import { deviceOf, presentedCookies, replacePreviousSession, signedInAccounts, startSession } from '../sessions.js';
import {
  FLOW_COOKIE,
  FLOW_COOKIE_PATH,
  finishSignIn,
  identitiesOf,
  signInConfig,
  startSignIn,
  takeExchangeCode,
  unlinkIdentity,
} from './service.js';

const PUBLIC = { access: access.public(), idempotent: false } as const;

/**
 * The sign-in limits (interface.md Authentication rule 5, sign-in-guard.ts) on a callback or an
 * exchange: a slot per address (the account key is the state or code, which names nobody, so
 * the limit that bites is the address's); a 401 keeps its slot counted, anything else gives it
 * back. Past the limit: 429 rate_limited before the flow or code is touched.
 */
async function limited<T>(deps: Deps, key: string, ip: string, run: () => Promise<T>): Promise<T> {
  const attempt = await deps.signInGuard.attempt(key, ip);
  try {
    const out = await run();
    await attempt.success();
    return out;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'unauthorized') attempt.failure();
    else await attempt.success();
    throw err;
  }
}

export default async function oauthSignInRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/auth/oauth/:provider/start',
    {
      config: PUBLIC,
      schema: {
        tags: ['auth'],
        summary: 'Start signing in with Google or Microsoft',
        description:
          'Redirects to the provider. client=native with code_challenge (S256) for the app; link=1 while signed ' +
          'in (the refresh cookie) links the account to the person instead. 404 when the provider is not configured. ' +
          'With a sign-in challenge configured (CHALLENGE), a sign-in (not a link) needs challenge_token, or from ' +
          'the native app its device check as app_attest_key_id, app_attest_challenge and app_attest_assertion ' +
          '(what app_attest is on login): missing or refused, 422 at query.challenge_token (query.app_attest_*) ' +
          'before anything is stored; 503 when the check cannot be verified.',
        params: Type.Object({ provider: Type.String({ maxLength: 20 }) }),
        querystring: Type.Object(
          {
            client: Type.Optional(Type.Literal('native')),
            code_challenge: Type.Optional(Type.String({ maxLength: 100 })),
            link: Type.Optional(Type.Literal('1')),
            challenge_token: Type.Optional(Type.String({ maxLength: 4096 })),
            app_attest_key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            app_attest_challenge: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            app_attest_assertion: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
          },
          { additionalProperties: false },
        ),
        response: { 302: Type.Null() },
      },
    },
    async (req, reply) => {
      const native = req.query.client === 'native';
      // An unknown or unconfigured provider answers 404 before anything else is asked.
      signInConfig(deps, req.params.provider);
      let linkUserId: string | null = null;
      if (req.query.link === '1') {
        const live = await signedInAccounts(deps, presentedCookies(req));
        if (live.length === 0) throw unauthorized('Sign in first to link an account.');
        linkUserId = live[0]!.user_id;
      } else {
        // The human check (interface.md Authentication rule 5), before a flow is stored: here,
        // not at the callback, because the provider's redirect back can carry no token.
        const q = req.query;
        const attest = [q.app_attest_key_id, q.app_attest_challenge, q.app_attest_assertion];
        if (attest.some((v) => v !== undefined) && attest.some((v) => v === undefined)) {
          const missing = (['key_id', 'challenge', 'assertion'] as const).find((_, i) => attest[i] === undefined)!;
          throw invalid(`query.app_attest_${missing}`, 'is required with the other app_attest_ parameters');
        }
        await verifyProof(
          deps,
          {
            challenge_token: q.challenge_token,
            app_attest:
              q.app_attest_key_id && q.app_attest_challenge && q.app_attest_assertion
                ? { key_id: q.app_attest_key_id, challenge: q.app_attest_challenge, assertion: q.app_attest_assertion }
                : undefined,
          },
          req.ip,
          'query',
        );
      }
      const { url, browser } = await startSignIn(deps, {
        provider: req.params.provider,
        native,
        codeChallenge: req.query.code_challenge,
        linkUserId,
      });
      if (!native) {
        reply.setCookie(FLOW_COOKIE, browser, {
          path: FLOW_COOKIE_PATH,
          httpOnly: true,
          sameSite: 'lax',
          secure: deps.config.publicUrl.startsWith('https:'),
          maxAge: 600,
        });
      }
      reply.header('cache-control', 'no-store');
      return reply.redirect(url, 302);
    },
  );

  app.get(
    '/v1/auth/oauth/:provider/callback',
    {
      config: PUBLIC,
      schema: {
        tags: ['auth'],
        summary: 'The provider returns here',
        description:
          'Signs the browser in (refresh cookie) and redirects to the app, or for client=native redirects to ' +
          '{APP_SCHEME}://auth/callback?code=... (one-time, 60 s). With two-factor on, the browser goes to ' +
          '{APP_URL}/sign-in#mfa_token=... (completed at POST /v1/auth/mfa). When the provider sends the person ' +
          'back with ?error= (Cancel) instead of a code, the flow is used up, nobody is signed in and the browser ' +
          'goes to {APP_URL}/sign-in#oauth_error=<code> (native: {APP_SCHEME}://auth/callback?error=<code>), <code> ' +
          "being the provider's error when it matches ^[a-z_]{1,40}$, else oauth_failed. 401 for a wrong, reused or " +
          'expired state, a refused code or an ID token that does not verify; 422 for an email the provider does ' +
          'not vouch for (a new person or one matched by email); 429 rate_limited past the sign-in limits.',
        params: Type.Object({ provider: Type.String({ maxLength: 20 }) }),
        querystring: Type.Object(
          {
            state: Type.String({ minLength: 1, maxLength: 200 }),
            code: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
            error: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: true },
        ), // providers add scope, iss, session_state
        response: { 302: Type.Null() },
      },
    },
    async (req, reply) => {
      const { state, code, error } = req.query;
      if (code === undefined && error === undefined) throw invalid('query.code', 'is required');
      const out = await limited(deps, `oauth-state:${hashSecret(state)}`, req.ip, () =>
        finishSignIn(deps, {
          provider: req.params.provider,
          state,
          ...(code !== undefined ? { code } : {}),
          ...(error !== undefined ? { error } : {}),
          browser: req.cookies[FLOW_COOKIE],
          ip: req.ip,
        }),
      );
      reply.clearCookie(FLOW_COOKIE, { path: FLOW_COOKIE_PATH });
      reply.header('cache-control', 'no-store');
      if (out.kind === 'error') {
        const to = out.native
          ? `${deps.config.appScheme}://auth/callback?error=${encodeURIComponent(out.error)}`
          : `${deps.config.appUrl}/sign-in#oauth_error=${encodeURIComponent(out.error)}`;
        return reply.redirect(to, 302);
      }
      if (out.kind === 'native') {
        return reply.redirect(`${deps.config.appScheme}://auth/callback?code=${encodeURIComponent(out.code)}`, 302);
      }
      if (out.linked) return reply.redirect(`${deps.config.appUrl}/profile?linked=1`, 302);
      const user = await deps.database.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', out.userId)
        .executeTakeFirstOrThrow();
      if (user.mfa_enabled) {
        // Two-factor after OAuth as after a password: the app completes it at POST /v1/auth/mfa.
        const { token } = await deps.tokens.sign({
          sub: user.id,
          purpose: 'mfa',
          pwv: passwordVersion(user.password_hash),
        });
        return reply.redirect(`${deps.config.appUrl}/sign-in#mfa_token=${encodeURIComponent(token)}`, 302);
      }
      const s = await startSession(deps, user, false, deviceOf(req));
      await replacePreviousSession(deps, req, reply, user.id, s.sessionId);
      sendSession(reply, s, false);
      return reply.redirect(`${deps.config.appUrl}/`, 302);
    },
  );

  app.post(
    '/v1/auth/oauth/exchange',
    {
      config: PUBLIC,
      schema: {
        tags: ['auth'],
        summary: 'The native app exchanges its one-time code for a session',
        description:
          '401 for a wrong, used or expired code or a code_verifier that does not match; 429 rate_limited past ' +
          'the sign-in limits. With two-factor on: mfa_required and mfa_token (complete at POST /v1/auth/mfa).',
        body: Type.Object(
          {
            code: Type.String({ minLength: 1, maxLength: 200 }),
            code_verifier: Type.String({ minLength: 43, maxLength: 128 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: LoginResult },
      },
    },
    async (req, reply) => {
      const userId = await limited(deps, `oauth-code:${hashSecret(req.body.code)}`, req.ip, () =>
        takeExchangeCode(deps, req.body.code, req.body.code_verifier),
      );
      const user = await deps.database.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      const native = true; // the exchange is the native path: the refresh token is in the body
      if (user.mfa_enabled) {
        const { token } = await deps.tokens.sign({
          sub: user.id,
          purpose: 'mfa',
          pwv: passwordVersion(user.password_hash),
        });
        reply.header('cache-control', 'no-store');
        return { mfa_required: true as const, mfa_token: token };
      }
      const s = await startSession(deps, user, native, deviceOf(req));
      return sendSession(reply, s, native);
    },
  );

  app.get(
    '/v1/me/identities',
    {
      config: { access: access.user() },
      schema: {
        tags: ['me'],
        summary: 'Your linked Google and Microsoft accounts',
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                id: Type.String(),
                provider: Type.String(),
                email: Type.String(),
                created_at: Type.String({ format: 'date-time' }),
              }),
            ),
          }),
        },
      },
    },
    async (req) => ({
      data: (await identitiesOf(deps, req.user.userId)).map((r) => ({ ...r, created_at: r.created_at.toISOString() })),
    }),
  );

  app.delete(
    '/v1/me/identities/:id',
    {
      config: { access: access.user(), idempotent: false },
      schema: {
        tags: ['me'],
        summary: 'Unlink an account',
        description:
          '409 conflict when it would leave you no way to sign in (no password, no passkey, no other account).',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await unlinkIdentity(deps, req.user.userId, req.ip, req.params.id);
      return reply.code(204).send(null);
    },
  );
}
