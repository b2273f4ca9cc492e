// The type of the app every route plugin receives, and what app.ts decorates it with: routes
// depend on this file and the framework's types, not on app.ts (which imports every module's
// routes). Imports no module.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Access } from './context.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** One row of the route table: what a test walks to check every route's access and input handling. */
export interface RouteEntry {
  method: string;
  url: string;
  access: Access;
  schema: { body?: unknown; querystring?: unknown; params?: unknown };
}

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: RouteEntry[];
    beginShutdown(): void;
  }
  interface FastifyContextConfig {
    /**
     * An HTML page (the help center), not an API operation: outside the route table and the
     * OpenAPI document, its errors its own (pages, not error bodies).
     */
    page?: boolean;
  }
}
