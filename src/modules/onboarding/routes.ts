// /v1/onboarding: the setup checklist of the signed-in member, and hiding it. Per person (their
// role, their photo, their choice to hide it), so for signed-in people only: API keys get 403.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { Onboarding } from './schemas.js';
import { dismissOnboarding, getOnboarding } from './service.js';

export default async function onboardingRoutes(app: App, deps: Deps) {
  const tags = ['onboarding'];
  const member = access.usersOnly('viewer');

  app.get(
    '/v1/onboarding',
    {
      config: { access: member },
      schema: {
        tags,
        summary: 'The setup checklist for the caller: steps their role can do, done as soon as the thing exists',
        response: { 200: Onboarding },
      },
    },
    async (req) => getOnboarding(deps, req.ctx),
  );

  app.post(
    '/v1/onboarding/dismiss',
    {
      config: { access: member },
      schema: { tags, summary: 'Hide the checklist for the caller only', response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await dismissOnboarding(deps, req.ctx);
      return reply.code(204).send(null);
    },
  );
}
