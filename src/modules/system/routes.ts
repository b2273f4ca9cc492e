// Liveness and readiness.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ErrorSchema } from '../../platform/http/schemas.js';

/** The process's role (ROLE; docs/operations.md "Several processes"). */
const RoleField = Type.Union(
  [Type.Literal('all'), Type.Literal('api'), Type.Literal('gateway'), Type.Literal('worker')],
  {
    description: 'What this process runs (ROLE): all, api, gateway or worker.',
  },
);

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

export default async function systemRoutes(app: App, deps: Deps) {
  const open = { access: access.public(), rateLimited: false };

  app.get(
    '/healthz',
    {
      config: open,
      schema: {
        tags: ['system'],
        summary: 'Liveness',
        response: { 200: Type.Object({ status: Type.Literal('ok'), role: RoleField }) },
      },
    },
    async () => ({ status: 'ok' as const, role: deps.config.role }),
  );

  app.get(
    '/readyz',
    {
      config: open,
      schema: {
        tags: ['system'],
        summary: 'Readiness: database and message bus reachable',
        response: {
          200: Type.Object({
            status: Type.Literal('ok'),
            role: RoleField,
            database: Type.Literal('ok'),
            bus: Type.Literal('ok'),
          }),
          503: ErrorSchema,
        },
      },
    },
    async (_req, reply) => {
      const [dbr, busr] = await Promise.allSettled([within(deps.database.ping(), 2000), within(deps.bus.ping(), 2000)]);
      const errors = [
        ...(dbr.status === 'rejected' ? [{ location: 'database', message: 'unreachable' }] : []),
        ...(busr.status === 'rejected' ? [{ location: 'bus', message: `${deps.bus.kind} unreachable` }] : []),
      ];
      if (errors.length === 0) {
        return { status: 'ok' as const, role: deps.config.role, database: 'ok' as const, bus: 'ok' as const };
      }
      reply.code(503);
      return {
        status: 503,
        code: 'unavailable',
        detail: `Not ready: ${errors.map((e) => e.location).join(' and ')} unreachable.`,
        errors,
      };
    },
  );
}
