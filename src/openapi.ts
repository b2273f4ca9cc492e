// The OpenAPI 3.1 document (GET /v1/openapi.json) and its reference page (/docs): registered
// before the modules' routes, which @fastify/swagger then collects. What the routes do not say
// is added here, once: the security schemes, the tags with their descriptions, the license, an
// operationId for every operation (from method and path), and the webhook catalog.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Deps } from './deps.js';
import { webhookCatalog } from './modules/webhooks/openapi.js';
import type { App } from './platform/http/app-type.js';
import { SCOPES } from './platform/http/context.js';
import { addOperationIds } from './platform/http/openapi.js';

/** Every tag an operation may carry, with what a reader finds under it. */
const TAGS: Array<{ name: string; description: string }> = [
  { name: 'system', description: 'Health probes and version.' },
  { name: 'auth', description: 'Sign-up, login, tokens, sessions, password reset and two-factor authentication.' },
  { name: 'me', description: 'The signed-in user: profile, picture and the workspaces they belong to.' },
  { name: 'workspace', description: 'The current workspace (SVC-Workspace): name, settings, images, ownership.' },
  { name: 'members', description: 'People of the workspace: roles, availability, open-ticket caps.' },
  { name: 'invitations', description: 'Invitations by email, and accepting them.' },
  { name: 'teams', description: 'Teams of agents; private teams hide their tickets from everyone else.' },
  { name: 'audit', description: 'The audit log of administrative changes.' },
  { name: 'notifications', description: 'The caller’s notifications (assigned, mentioned, SLA breached, …).' },
  { name: 'api-keys', description: 'Workspace API keys (svc_live_…) and their scopes.' },
  { name: 'events', description: 'Replay of the event stream by seq (the same envelopes as the gateway).' },
  { name: 'realtime', description: 'Tokens and the address of the realtime gateway.' },
  { name: 'tickets', description: 'Tickets: create, list and filter, update, merge, bulk changes, timelines.' },
  { name: 'attachments', description: 'File uploads for messages, and their downloads.' },
  { name: 'images', description: 'Processed pictures (avatars, logos, brand images), served publicly by id.' },
  { name: 'contacts', description: 'The people who write in.' },
  { name: 'companies', description: 'Organisations contacts belong to.' },
  { name: 'labels', description: 'Labels (tags) and label groups on tickets, contacts and companies.' },
  { name: 'views', description: 'Saved ticket filters, personal or shared.' },
  { name: 'saved-replies', description: 'Reusable reply texts.' },
  { name: 'automations', description: 'Rules that act on tickets when they are created, updated or replied to.' },
  { name: 'sla-policies', description: 'Response and resolution targets.' },
  {
    name: 'knowledge-base',
    description: 'Help center collections and articles (drafts included), slugs, and article search by language.',
  },
  { name: 'search', description: 'Full-text search across tickets, messages, contacts and knowledge base articles.' },
  {
    name: 'csat',
    description: "Customer satisfaction: a solved ticket's customer rates it from the link they were mailed.",
  },
  { name: 'reports', description: 'Counts and timings over a period.' },
  { name: 'custom-fields', description: 'Custom fields of tickets, contacts and companies.' },
  { name: 'webhooks', description: 'Webhook endpoints, their deliveries, test events and redelivery.' },
  { name: 'mailboxes', description: 'Email mailboxes: IMAP/SMTP, Google and Microsoft accounts, forwarding.' },
  { name: 'email', description: 'Raw inbound email from a mail server (MTA).' },
  {
    name: 'mail',
    description: 'Outgoing mail: whether it is set up (SMTP_URL), and the outbox of mail kept while it is not.',
  },
  { name: 'assignment', description: 'Automatic assignment of new tickets to agents.' },
  { name: 'triage', description: 'AI triage settings: which fields are set on new tickets.' },
  {
    name: 'ai',
    description: "AI: the workspace's provider, models and prices, settings, own key, and the AI features.",
  },
  {
    name: 'billing',
    description: 'Plans, seats, the AI balance, top-ups, auto-recharge and the usage report (hosted offering).',
  },
  {
    name: 'assistant',
    description:
      'The assistant: your conversations with it, its runs (streamed or JSON), and your approval of each change it proposes.',
  },
  { name: 'business-hours', description: 'Working hours and holidays that SLA clocks follow.' },
  { name: 'onboarding', description: 'The first-run checklist of a workspace.' },
  {
    name: 'widget',
    description: 'The chat widget: its visitors (Authorization: Visitor svc_vis_…) and its settings.',
  },
];

interface Doc {
  tags?: Array<{ name: string; description?: string }>;
  paths?: Record<string, Record<string, { tags?: string[] }>>;
  webhooks?: Record<string, Record<string, { tags?: string[] }>>;
}

/** A tag an operation uses but TAGS does not declare is added bare: the lint's tag-description flags it. */
function declareUsedTags(doc: Doc): void {
  doc.tags ??= [];
  const declared = new Set(doc.tags.map((t) => t.name));
  for (const item of [...Object.values(doc.paths ?? {}), ...Object.values(doc.webhooks ?? {})]) {
    for (const op of Object.values(item)) {
      for (const tag of op?.tags ?? []) {
        if (declared.has(tag)) continue;
        declared.add(tag);
        doc.tags.push({ name: tag });
      }
    }
  }
}

/**
 * The reference page's Content-Security-Policy: everything from this service. The plugin's own
 * (`staticCSP: true`) allows fonts and styles from any https host and images from
 * validator.swagger.io, and asks for upgrade-insecure-requests, which on a plain-http address
 * inside a network (http://helpdesk.lan:3000/docs) sends every asset request to https and
 * leaves the page blank. connect-src adds PUBLIC_URL's origin, the server "Try it out" calls,
 * for a page opened under another name of the same instance.
 */
export function docsCsp(publicUrl: string): string {
  return [
    "default-src 'self'",
    `connect-src 'self' ${new URL(publicUrl).origin}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}

export async function registerOpenApi(app: App, deps: Deps): Promise<void> {
  const catalog = webhookCatalog();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Help desk API',
        version: '1.0.0',
        description:
          'Tickets, messages, contacts, labels, automations, a realtime gateway and signed webhooks. ' +
          'Errors are `{status, code, detail, errors?}`. Lists are cursor pages `{data, next_cursor}`.',
        license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
      },
      servers: [{ url: deps.config.publicUrl, description: 'This instance (PUBLIC_URL)' }],
      tags: [...TAGS, catalog.tag],
      components: {
        securitySchemes: {
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'Access token (15 minutes) from /v1/auth/login.',
          },
          workspace: {
            type: 'apiKey',
            in: 'header',
            name: 'SVC-Workspace',
            description: 'The workspace id, with an access token.',
          },
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: `API key (svc_live_…). Scopes: ${SCOPES.join(', ')}.`,
          },
          visitor: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Visitor <svc_vis_…> (chat widget).',
          },
        },
        // Converted by @fastify/swagger like the routes' schemas.
        schemas: catalog.schemas as never,
        parameters: catalog.parameters as never,
      },
      webhooks: catalog.webhooks as never,
    },
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      addOperationIds(documentObject.openapiObject as Doc);
      declareUsedTags(documentObject.openapiObject as Doc);
      return documentObject.openapiObject;
    },
  });
  // The page loads ./json (/docs/json), the same document; the plugin sets that url itself.
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: docsCsp(deps.config.publicUrl) });

  app.get(
    '/v1/openapi.json',
    { config: { access: { kind: 'public' }, rateLimited: false }, schema: { hide: true } },
    async () => app.swagger(),
  );
}
