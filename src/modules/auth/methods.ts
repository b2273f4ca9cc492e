// GET /v1/auth/methods: which sign-in buttons the app shows (public, no credentials).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';

export default async function authMethodRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/auth/methods',
    {
      config: { access: access.public() },
      schema: {
        tags: ['auth'],
        summary: 'The sign-in methods this service offers',
        response: {
          200: Type.Object({
            password: Type.Boolean(),
            passkeys: Type.Boolean(),
            oauth: Type.Object({ google: Type.Boolean(), microsoft: Type.Boolean() }),
          }),
        },
      },
    },
    async () => ({
      password: true,
      passkeys: true,
      oauth: { google: deps.config.oauth.google !== null, microsoft: deps.config.oauth.microsoft !== null },
    }),
  );
}
