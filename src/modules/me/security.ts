// /v1/me/mfa and /v1/me/password: the signed-in person's own two-factor and password. None of
// these answers is stored for Idempotency-Key (they carry secrets shown once).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { confirmTotp, disableMfa, startTotpEnrolment } from '../auth/mfa.js';
import { CodeBody, PasswordBody, RecoveryCodes, TotpEnrolment } from '../auth/schemas.js';
import { changePassword } from '../auth/service.js';

const OWN = { access: access.user(), idempotent: false } as const;

export default async function meSecurityRoutes(app: App, deps: Deps) {
  app.post(
    '/v1/me/mfa/totp',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Start two-factor enrolment (TOTP)',
        description:
          'A new secret for an authenticator app (shown once; pending until confirmed). Starting again replaces ' +
          'a pending secret. 409 when two-factor is already on.',
        response: { 200: TotpEnrolment },
      },
    },
    async (req, reply) => {
      const e = await startTotpEnrolment(deps, req.user.userId);
      reply.header('cache-control', 'no-store');
      return { secret: e.secret, otpauth_url: e.otpauthUrl };
    },
  );

  app.post(
    '/v1/me/mfa/totp/confirm',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Confirm two-factor enrolment with a first code',
        description: 'Turns two-factor on and answers ten single-use recovery codes, shown only here.',
        body: CodeBody,
        response: { 200: RecoveryCodes },
      },
    },
    async (req, reply) => {
      const codes = await confirmTotp(deps, req.user.userId, req.body.code);
      reply.header('cache-control', 'no-store');
      return { recovery_codes: codes };
    },
  );

  app.delete(
    '/v1/me/mfa',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Turn two-factor off',
        description: 'With a current code or an unused recovery code. 409 when two-factor is off.',
        body: CodeBody,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await disableMfa(deps, req.user.userId, req.body.code);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/me/password',
    {
      config: OWN,
      schema: {
        tags: ['me'],
        summary: 'Change the password',
        description:
          'Signs out every other session of yours (their live sockets close); this one stays signed in. A wrong ' +
          'current_password counts as a failed sign-in attempt.',
        body: PasswordBody,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await changePassword(deps, req.user, req.body);
      return reply.code(204).send(null);
    },
  );
}
