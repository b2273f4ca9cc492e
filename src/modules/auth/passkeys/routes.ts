// Passkeys (gaps.md "Sign-up and sessions"): /v1/me/passkeys* for the signed-in person (options,
// register with a name, list, delete) and /v1/auth/passkey* for sign-in (options, verify), which
// answers a session exactly as login (two-factor is not asked: a passkey is two factors).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../../deps.js';
import type { App } from '../../../platform/http/app-type.js';
import { access } from '../../../platform/http/context.js';
import { iso, Nullable } from '../../../platform/http/schemas.js';
import { isNative, sendSession } from '../routes.js';
import { Session } from '../schemas.js';
import { replacePreviousSession } from '../sessions.js';
import {
  deletePasskey,
  listPasskeys,
  type PasskeyView,
  registerPasskey,
  registrationOptions,
  signInOptions,
  signInWithPasskey,
} from './service.js';

const WebAuthnJson = Type.Object(
  {},
  { additionalProperties: true, description: 'WebAuthn JSON as the browser gives it.' },
);

const Passkey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'Passkey' },
);

const present = (p: PasskeyView) => ({
  id: p.id,
  name: p.name,
  created_at: iso(p.created_at)!,
  last_used_at: iso(p.last_used_at),
});

const OWN = { access: access.user(), idempotent: false } as const;
const SIGN_IN = { access: access.public(), idempotent: false } as const;

export default async function passkeyRoutes(app: App, deps: Deps) {
  app.post(
    '/v1/me/passkeys/options',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Registration options for a new passkey',
        description:
          'PublicKeyCredentialCreationOptionsJSON for navigator.credentials.create (through @simplewebauthn/browser). ' +
          'Its challenge is single-use and lives 5 minutes.',
        response: { 200: WebAuthnJson },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return (await registrationOptions(deps, req.user.userId)) as unknown as Record<string, unknown>;
    },
  );

  app.post(
    '/v1/me/passkeys',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Register a passkey',
        description:
          '`response` is the RegistrationResponseJSON of the browser for a challenge from POST /v1/me/passkeys/options. ' +
          '422 when it does not verify, answers no live challenge of yours, or the passkey is already registered.',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 100 }), response: WebAuthnJson },
          { additionalProperties: false },
        ),
        response: { 201: Passkey },
      },
    },
    async (req, reply) => {
      const p = await registerPasskey(deps, req.user.userId, req.ip, req.body);
      reply.code(201);
      return present(p);
    },
  );

  app.get(
    '/v1/me/passkeys',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Your passkeys',
        response: { 200: Type.Object({ data: Type.Array(Passkey) }) },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return { data: (await listPasskeys(deps, req.user.userId)).map(present) };
    },
  );

  app.delete(
    '/v1/me/passkeys/:id',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Delete one of your passkeys',
        description: '404 when it is not one of yours.',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deletePasskey(deps, req.user.userId, req.ip, req.params.id.toLowerCase());
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/auth/passkey/options',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'Options to sign in with a passkey',
        description:
          'Without `email`: a discoverable-credential sign-in (the browser offers its passkeys). With `email`: the ' +
          "person's passkeys as allowCredentials (an unknown email answers the same shape). With CHALLENGE set, " +
          'send challenge_token. The challenge_id is single-use and lives 5 minutes.',
        body: Type.Optional(
          Type.Object(
            {
              email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
              challenge_token: Type.Optional(Type.String({ maxLength: 4096 })),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: Type.Object({ options: WebAuthnJson, challenge_id: Type.String({ format: 'uuid' }) }) },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return (await signInOptions(deps, req, req.body ?? {})) as unknown as {
        options: Record<string, unknown>;
        challenge_id: string;
      };
    },
  );

  app.post(
    '/v1/auth/passkey',
    {
      config: SIGN_IN,
      schema: {
        tags: ['auth'],
        summary: 'Sign in with a passkey',
        description:
          '`response` is the AuthenticationResponseJSON for the options of `challenge_id`. Answers a session as ' +
          'login (refresh cookie, or refresh_token in the body for native clients); no two-factor step. 401 when ' +
          'the challenge is unknown, used or expired, the passkey is unknown or not the email’s, the signature does ' +
          'not verify, or its counter did not grow (a possibly cloned authenticator: audited). Failed attempts count ' +
          'towards the sign-in limits (429).',
        body: Type.Object(
          { challenge_id: Type.String({ format: 'uuid' }), response: WebAuthnJson },
          { additionalProperties: false },
        ),
        response: { 200: Session },
      },
    },
    async (req, reply) => {
      const native = isNative(req);
      const s = await signInWithPasskey(deps, req, req.body, native);
      if (!native) await replacePreviousSession(deps, req, reply, s.user.id, s.sessionId);
      return sendSession(reply, s, native);
    },
  );
}
