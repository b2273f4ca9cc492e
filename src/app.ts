// Builds the Fastify app: the platform pipeline (errors, parsing, auth, rate limits,
// idempotency, OpenAPI), then each module's routes. Request order for every route:
// rate limit → authenticate → authorize → validate → handler (transaction) → present.
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import type { Deps } from './deps.js';
import aiSearchRoutes from './modules/ai/embeddings/routes.js';
import aiFeatureRoutes from './modules/ai/features/routes.js';
import aiRoutes from './modules/ai/routes.js';
import apiKeyRoutes from './modules/api-keys/routes.js';
import { apiKeyResolver } from './modules/api-keys/service.js';
import assignmentRoutes from './modules/assignment/routes.js';
import assistantRoutes, { type AssistantRouteOptions } from './modules/assistant/routes.js';
import attachmentRoutes from './modules/attachments/routes.js';
import auditRoutes from './modules/audit/routes.js';
import authMethodRoutes from './modules/auth/methods.js';
import oauthSignInRoutes from './modules/auth/oauth/routes.js';
import passkeyRoutes from './modules/auth/passkeys/routes.js';
import { userResolver } from './modules/auth/resolver.js';
import authRoutes from './modules/auth/routes.js';
import automationRoutes from './modules/automations/routes.js';
import billingRoutes from './modules/billing/routes.js';
import stripeBilling from './modules/billing/stripe/provider.js';
import businessHoursRoutes from './modules/business-hours/routes.js';
import companyRoutes from './modules/companies/routes.js';
import contactRoutes from './modules/contacts/routes.js';
import csatPageRoutes from './modules/csat/page.js';
import csatRoutes from './modules/csat/routes.js';
import customFieldRoutes from './modules/custom-fields/routes.js';
import inboundEmailRoutes from './modules/email/inbound-route.js';
import eventRoutes from './modules/events/routes.js';
import helpCenterRoutes from './modules/help-center/routes.js';
import imageRoutes from './modules/images/routes.js';
import invitationRoutes from './modules/invitations/routes.js';
import kbRoutes from './modules/kb/routes.js';
import mailRoutes from './modules/mail/routes.js';
import mailboxRoutes from './modules/mailboxes/routes.js';
import meRoutes from './modules/me/routes.js';
import memberRoutes from './modules/members/routes.js';
import messageRoutes from './modules/messages/routes.js';
import notificationRoutes from './modules/notifications/routes.js';
import onboardingRoutes from './modules/onboarding/routes.js';
import portalRoutes from './modules/portal/routes.js';
import realtimeRoutes from './modules/realtime/routes.js';
import reportRoutes from './modules/reports/routes.js';
import savedReplyRoutes from './modules/saved-replies/routes.js';
import searchRoutes from './modules/search/routes.js';
import slaPolicyRoutes from './modules/sla/routes.js';
import systemRoutes from './modules/system/routes.js';
import tagGroupRoutes from './modules/tag-groups/routes.js';
import tagRoutes from './modules/tags/routes.js';
import teamRoutes from './modules/teams/routes.js';
import ticketRoutes from './modules/tickets/routes.js';
import triageRoutes from './modules/triage/routes.js';
import viewRoutes from './modules/views/routes.js';
import webAppRoutes from './modules/web-app/routes.js';
import webhookRoutes from './modules/webhooks/routes.js';
import widgetRoutes from './modules/widget/routes.js';
import { visitorResolver } from './modules/widget/visitors.js';
import workspaceRoutes from './modules/workspace/routes.js';
import { registerOpenApi } from './openapi.js';
import type { App, RouteEntry } from './platform/http/app-type.js';
import { registerAuth } from './platform/http/auth.js';
import type { Access } from './platform/http/context.js';
import { Drains } from './platform/http/drain.js';
import { installIdempotency } from './platform/http/idempotency.js';
import { installRateLimit } from './platform/http/rate-limit.js';
import { installResponseCheck, type ResponseViolationSink } from './platform/http/response-check.js';
import { ErrorSchema } from './platform/http/schemas.js';
import {
  clientErrorHandler,
  frameworkErrors,
  genReqId,
  installErrors,
  installJsonParser,
  installNotFound,
  installRequestLog,
  installTextGuard,
  installValidation,
  sharedSerializers,
} from './platform/http/setup.js';

// The app's type and the route table's row live in platform/http/app-type.ts, so that route files
// do not import this file (which imports them all); re-exported for the tests and runtime.ts.
export type { App, RouteEntry };

/** Every module's routes, in the order the reference lists them. */
const MODULES: Array<(app: App, deps: Deps) => Promise<void>> = [
  systemRoutes,
  authRoutes,
  authMethodRoutes,
  oauthSignInRoutes,
  passkeyRoutes,
  meRoutes,
  workspaceRoutes,
  memberRoutes,
  invitationRoutes,
  teamRoutes,
  auditRoutes,
  notificationRoutes,
  apiKeyRoutes,
  eventRoutes,
  realtimeRoutes,
  ticketRoutes,
  messageRoutes,
  attachmentRoutes,
  contactRoutes,
  companyRoutes,
  tagRoutes,
  tagGroupRoutes,
  viewRoutes,
  savedReplyRoutes,
  automationRoutes,
  slaPolicyRoutes,
  kbRoutes,
  searchRoutes,
  reportRoutes,
  csatRoutes,
  csatPageRoutes,
  customFieldRoutes,
  webhookRoutes,
  mailboxRoutes,
  mailRoutes,
  inboundEmailRoutes,
  imageRoutes,
  assignmentRoutes,
  triageRoutes,
  aiRoutes,
  billingRoutes,
  stripeBilling,
  aiFeatureRoutes,
  aiSearchRoutes,
  businessHoursRoutes,
  onboardingRoutes,
  helpCenterRoutes,
  portalRoutes,
  widgetRoutes,
  webAppRoutes,
];

export const JSON_BODY_LIMIT = 1024 * 1024;

function securityOf(a: Access): Array<Record<string, string[]>> | undefined {
  switch (a.kind) {
    case 'public':
      return [];
    case 'user':
      return [{ accessToken: [] }];
    case 'identity':
      return [{ accessToken: [] }, { apiKey: [] }];
    case 'workspace':
      return a.scopes === null
        ? [{ accessToken: [], workspace: [] }]
        : [{ accessToken: [], workspace: [] }, { apiKey: a.scopes }];
    case 'visitor':
      return [{ visitor: [] }];
  }
}

export interface AppOptions {
  /** Check every answer against its route's response schema and report mismatches (tests). */
  checkResponses?: ResponseViolationSink;
  /** The rate limits' window (a minute); tests shorten it. */
  rateLimitWindowMs?: number;
  /** The assistant's tools (tests offer their own; default: the assistant's TOOLS). */
  assistant?: AssistantRouteOptions;
}

export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.log,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId,
    requestIdHeader: false,
    frameworkErrors,
    clientErrorHandler,
    bodyLimit: JSON_BODY_LIMIT,
    trustProxy: deps.config.trustProxy,
    // A path parameter up to 512 characters: ids are 36, a rating link's signed token about 300.
    routerOptions: { maxParamLength: 512 },
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const routeTable: RouteEntry[] = [];
  app.decorate('routeTable', routeTable);
  installValidation(app);
  installJsonParser(app);
  installErrors(app);
  installNotFound(app);
  installRequestLog(app);
  if (opts.checkResponses) installResponseCheck(app, opts.checkResponses);
  // While shutting down, answers in flight close their connection so the shutdown can finish.
  let closing = false;
  // An answer before the whole body arrived (a refused upload): the rest is read so the client
  // can read the answer (platform/http/drain.ts).
  const drains = new Drains();
  app.decorate('beginShutdown', () => {
    closing = true;
    drains.cutAll();
  });
  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-request-id', req.id);
    if (closing) reply.header('connection', 'close');
    else drains.start(req, reply);
    return payload;
  });

  // Every route must say who may call it; a route without access fails the start.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) {
      route.config = { ...(route.config ?? {}), access: { kind: 'public' }, rateLimited: false } as typeof route.config;
      return;
    }
    const a = route.config?.access;
    if (!a) throw new Error(`route ${route.method} ${route.url} declares no access`);
    // A query parameter the route does not know is refused (422), on every route that reads one,
    // unless the route opens its query on purpose (a provider's redirect adds its own).
    const query = route.schema?.querystring as { additionalProperties?: unknown } | undefined;
    if (query && query.additionalProperties === undefined) {
      throw new Error(`route ${route.method} ${route.url}: its querystring schema must set additionalProperties`);
    }
    // HTML pages (the help center) are not API operations: not in the route table nor the
    // document, and their answers are pages, not error bodies.
    if (route.config?.page) {
      route.schema = { ...(route.schema ?? {}), hide: true } as typeof route.schema;
      return;
    }
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD') continue;
      routeTable.push({
        method,
        url: route.url,
        access: a,
        schema: {
          body: route.schema?.body,
          querystring: route.schema?.querystring,
          params: route.schema?.params,
        },
      });
    }
    route.schema = {
      ...(route.schema ?? {}),
      security: securityOf(a),
      response: { ...((route.schema?.response as object) ?? {}), '4XX': ErrorSchema, '5XX': ErrorSchema },
      ...(a.kind === 'workspace'
        ? { 'x-access': { min_role: a.role, api_key_scopes: a.scopes } }
        : { 'x-access': { kind: a.kind } }),
    } as typeof route.schema;
  });

  await app.register(cookie);
  registerAuth(app, {
    apiKey: apiKeyResolver(deps),
    accessToken: userResolver(deps),
    visitorToken: visitorResolver(deps),
  });
  installTextGuard(app); // after authorization, before each route's schema
  await installRateLimit(app, {
    perMinute: deps.config.rateLimitPerMinute,
    redis: deps.redis,
    ...(opts.rateLimitWindowMs ? { windowMs: opts.rateLimitWindowMs } : {}),
  });
  installIdempotency(app, deps.database, deps.secrets, deps.writer, deps.config.idempotencyLeaseMs);

  await registerOpenApi(app, deps);

  for (const mod of MODULES) await mod(app, deps);
  await assistantRoutes(app, deps, opts.assistant);
  return app;
}
