// /v1/mailboxes/oauth/{provider}/start and /callback: connecting a Google or Microsoft mailbox
// (src/modules/mailboxes/oauth.ts has the flow and why it is safe).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import {
  finishOAuth,
  OAUTH_COOKIE,
  OAUTH_COOKIE_PATH,
  OAUTH_PROVIDERS,
  OAuthFlowError,
  type OAuthProvider,
  startOAuth,
} from './oauth.js';

const ProviderParams = Type.Object(
  { provider: Type.Union(OAUTH_PROVIDERS.map((p) => Type.Literal(p))) },
  { additionalProperties: false },
);

const StartBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'The new mailbox’s name' }),
    email: Type.Optional(
      Type.String({
        maxLength: 254,
        description: 'The mailbox address (default: the account’s); suggested to the provider’s sign-in',
      }),
    ),
    mailbox_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'Reconnect this mailbox (same provider, same account)' }),
    ),
  },
  { additionalProperties: false },
);

const StartResult = Type.Object(
  { url: Type.String({ description: 'Send the browser here (the provider’s consent page)' }) },
  { additionalProperties: false },
);

// Whatever the provider adds (scope, authuser, prompt, session_state, iss, …) is accepted.
const CallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 4096 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: true },
);

export default async function mailboxOAuthRoutes(app: App, deps: Deps) {
  const tags = ['mailboxes'];
  const secure = deps.config.publicUrl.startsWith('https:');

  app.post(
    '/v1/mailboxes/oauth/:provider/start',
    {
      config: { access: access.usersOnly('admin') },
      schema: {
        tags,
        summary: 'Start connecting a Google or Microsoft mailbox: returns the provider’s URL to send the browser to',
        description:
          'Also sets an HttpOnly cookie (Path=/v1/mailboxes/oauth, 10 minutes) that the callback needs: call it ' +
          'from the browser that will follow the URL (same origin, or fetch with credentials).',
        params: ProviderParams,
        body: StartBody,
        response: { 200: StartResult },
      },
    },
    async (req, reply) => {
      const { url, verifier } = await startOAuth(deps, req.ctx, req.params.provider as OAuthProvider, req.body);
      reply.setCookie(OAUTH_COOKIE, verifier, {
        path: OAUTH_COOKIE_PATH,
        httpOnly: true,
        sameSite: 'lax',
        secure,
        maxAge: 600,
      });
      return { url };
    },
  );

  app.get(
    '/v1/mailboxes/oauth/:provider/callback',
    {
      config: { access: access.public() },
      schema: {
        tags,
        summary: 'Where the provider returns the browser; redirects to the app’s settings/mailboxes page',
        description:
          'Redirects to APP_URL/settings/mailboxes?connected=<mailbox id>, or ?error=<code> (invalid_state, ' +
          'session_expired, forbidden, access_denied, provider_error, token_exchange_failed, account_unverified, ' +
          'account_mismatch, mailbox_exists, mailbox_not_found, not_configured).',
        params: ProviderParams,
        querystring: CallbackQuery,
        response: { 302: Type.Null() },
      },
    },
    async (req, reply) => {
      const provider = req.params.provider as OAuthProvider;
      const back = new URL(`${deps.config.appUrl}/settings/mailboxes`);
      try {
        const id = await finishOAuth(deps, provider, req.query, req.cookies[OAUTH_COOKIE], req.ip);
        back.searchParams.set('connected', id);
      } catch (err) {
        if (!(err instanceof OAuthFlowError)) {
          req.log.error({ provider, err: err instanceof Error ? err.message : String(err) }, 'mailbox oauth failed');
        }
        back.searchParams.set('error', err instanceof OAuthFlowError ? err.code : 'provider_error');
        back.searchParams.set('provider', provider);
      }
      reply.clearCookie(OAUTH_COOKIE, { path: OAUTH_COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure });
      reply.header('cache-control', 'no-store');
      return reply.redirect(back.toString(), 302);
    },
  );
}
