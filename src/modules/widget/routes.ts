// /v1/widget: the chat widget's routes (docs/widget.md). Config and session are public (the
// widget_key names the workspace); the others take the visitor credential `Authorization:
// Visitor svc_vis_…`; the settings are for admins. Every visitor-facing route checks the
// request's Origin against the widget's allowed_origins (403 outside the list, CORS headers only
// for allowed origins) and answers 404 while the widget is turned off. Limits: 20 new
// conversations an hour and 60 messages a minute per visitor (429 with Retry-After).
import { unlink } from 'node:fs/promises';
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { documentedFileBody } from '../../platform/http/openapi.js';
import { PageQuerySchema } from '../../platform/http/pagination.js';
import { overLimit } from '../../platform/http/rate-limit.js';
import { PageOf } from '../../platform/http/schemas.js';
import { spoolDirOf } from '../attachments/purge.js';
import { Attachment } from '../attachments/schemas.js';
import { receiveUpload } from '../attachments/upload.js';
import { linksOf } from '../help-center/routes.js';
import { findHelpCenterById } from '../help-center/service.js';
import { DEFAULT_SETTINGS } from '../workspace/service.js';
import {
  Conversation,
  ConversationParams,
  NewConversationBody,
  NewMessageBody,
  PatchWidgetSettingsBody,
  SessionBody,
  WidgetArticle,
  WidgetArticlesQuery,
  WidgetConfig,
  WidgetKeyQuery,
  WidgetMessage,
  WidgetSession,
  WidgetSettings,
} from './schemas.js';
import widgetScriptRoutes from './script.js';
import {
  conversationMessages,
  listConversations,
  openSession,
  requestHandoff,
  sendMessage,
  startConversation,
  uploadForVisitor,
} from './service.js';
import {
  CORS_ALLOW_HEADERS,
  checkOrigin,
  corsHeaders,
  getWidgetSettings,
  markInstalled,
  normalOrigin,
  updateWidgetSettings,
  type Widget,
  widgetOfKey,
  widgetOfWorkspace,
} from './settings.js';
import { suggestArticles } from './suggestions.js';
import { revokeVisitor } from './visitors.js';

/** Article suggestions: the best few, as the visitor types. */
const ARTICLE_SUGGESTIONS = 5;

/** Per visitor (their contact): new conversations an hour, messages a minute (docs/api.md "Rate limits"). */
export const WIDGET_LIMITS = { conversationsPerHour: 20, messagesPerMinute: 60 };
/** The window of WIDGET_SESSIONS_PER_IP: new visitors per address and workspace. */
export const NEW_SESSIONS_WINDOW_MS = 10 * 60_000;

const TAGS = ['widget'];

export default async function widgetRoutes(app: App, deps: Deps): Promise<void> {
  // --- Settings (admins) -----------------------------------------------------------------------
  app.get(
    '/v1/widget/settings',
    {
      config: { access: access.member('admin', 'settings:read', 'settings:write') },
      schema: {
        tags: TAGS,
        summary: "The chat widget's settings: greeting, require_email, enabled, allowed_origins",
        response: { 200: WidgetSettings },
      },
    },
    async (req) => getWidgetSettings(deps, req.ctx),
  );

  app.patch(
    '/v1/widget/settings',
    {
      config: { access: access.member('admin', 'settings:write') },
      schema: {
        tags: TAGS,
        summary: "Change the chat widget's settings",
        description:
          'Any subset of the fields. allowed_origins replaces the list (origins such as https://shop.example.com, ' +
          'at most 50; an empty list lets every website use the widget). enabled false makes config and session ' +
          'answer 404.',
        body: PatchWidgetSettingsBody,
        response: { 200: WidgetSettings },
      },
    },
    async (req) => updateWidgetSettings(deps, req.ctx, req.body),
  );

  // --- What visitors call ---------------------------------------------------------------------
  const conversationLimiter = app.createRateLimit({
    max: WIDGET_LIMITS.conversationsPerHour,
    timeWindow: 3600_000,
    keyGenerator: (req) => `widget-conversations:${req.visitor.workspaceId}:${req.visitor.contactId}`,
  });
  const messageLimiter = app.createRateLimit({
    max: WIDGET_LIMITS.messagesPerMinute,
    timeWindow: 60_000,
    keyGenerator: (req) => `widget-messages:${req.visitor.workspaceId}:${req.visitor.contactId}`,
  });
  const count = async (
    limiter: typeof messageLimiter,
    req: FastifyRequest,
    reply: FastifyReply,
    what: string,
  ): Promise<void> => {
    const r = await limiter(req);
    if (!r.isAllowed && r.isExceeded) throw overLimit(reply, r, what);
  };

  // New visitors (sessions without visitor_token) per address and workspace: each is a row, and
  // a script must not make them by the thousand (resumed sessions are not counted).
  const sessionLimiter = app.createRateLimit({
    max: deps.config.widgetSessionsPerIp,
    timeWindow: NEW_SESSIONS_WINDOW_MS,
    keyGenerator: (req) => `widget-sessions:${(req.body as { key?: string }).key ?? ''}:${req.ip}`,
  });

  /** The visitor's widget, checked by the scope's preValidation hook. */
  const widgets = new WeakMap<FastifyRequest, Widget>();
  const widgetOf = (req: FastifyRequest) => widgets.get(req)!;
  const visitor = () => ({ config: { access: access.visitor() } });

  await app.register(async (scope: App) => {
    await scope.register(multipart);
    // Every answer of these routes (errors included) carries the CORS headers its origin may have.
    scope.addHook('onSend', async (req, reply, payload) => {
      corsHeaders(req, reply);
      return payload;
    });
    // Visitor routes: the widget must be on and the Origin allowed, before anything else is read.
    scope.addHook('preValidation', async (req) => {
      if (req.routeOptions.config.access?.kind !== 'visitor') return;
      const widget = await widgetOfWorkspace(deps, req.visitor.workspaceId);
      checkOrigin(req, widget);
      widgets.set(req, widget);
    });

    // Browsers ask before a cross-origin request with credentials or JSON (CORS preflight). The
    // question carries no credential and no body, so it cannot name a workspace unless it has
    // ?key=: then that widget's list decides; otherwise the answer allows the asking origin and
    // the request itself is checked. Not an API operation: outside the route table and document.
    scope.options(
      '/v1/widget/*',
      {
        config: { access: access.public(), page: true, rateLimited: false },
        schema: { hide: true, querystring: Type.Object({}, { additionalProperties: true }) },
      },
      async (req, reply) => {
        const origin = req.headers.origin === undefined ? null : normalOrigin(req.headers.origin);
        const key = (req.query as { key?: unknown }).key;
        if (origin !== null && typeof key === 'string') {
          try {
            checkOrigin(req, await widgetOfKey(deps, key));
          } catch (err) {
            // An unknown key is the request's own 404 (with CORS headers, so the widget reads it).
            if (err instanceof ApiError && err.code === 'forbidden') {
              return reply.code(403).header('cache-control', 'no-store').send();
            }
            if (!(err instanceof ApiError)) throw err;
          }
        }
        return reply
          .code(204)
          .header('access-control-allow-methods', 'GET, POST, PATCH, DELETE')
          .header('access-control-allow-headers', CORS_ALLOW_HEADERS)
          .header('access-control-max-age', '600')
          .send();
      },
    );

    scope.get(
      '/v1/widget/config',
      {
        config: { access: access.public() },
        schema: {
          tags: TAGS,
          summary: "The widget's look and rules, by widget_key (no credential)",
          description: 'Unknown key or widget turned off: 404. A browser Origin outside allowed_origins: 403.',
          querystring: WidgetKeyQuery,
          response: { 200: WidgetConfig },
        },
      },
      async (req) => {
        const widget = await widgetOfKey(deps, req.query.key);
        checkOrigin(req, widget);
        const ws = { ...DEFAULT_SETTINGS, ...widget.workspaceSettings };
        const home = new URL(linksOf(deps.config.publicUrl, widget.slug).home, deps.config.publicUrl).href;
        return {
          workspace_name: widget.workspaceName,
          brand_color: ws.brand_color,
          greeting: widget.settings.greeting,
          help_center_url: ws.help_center_enabled === true ? home : null,
          require_email: widget.settings.require_email,
        };
      },
    );

    scope.post(
      '/v1/widget/session',
      {
        config: { access: access.public(), idempotent: false },
        schema: {
          tags: TAGS,
          summary: 'Start or resume a visitor: the visitor token, the contact and a widget realtime token',
          description:
            'key is the workspace’s widget_key. visitor_token resumes a visitor (unknown, revoked or of another ' +
            'workspace: 401). A new visitor has no contact until they write or give an email: contact is then the ' +
            'contact to be (its id, no email). email and name fill in the contact’s blanks; an email is the ' +
            'contact’s unverified_email (a claim, never matched to mail) unless user_hash covers it (user_id is the ' +
            'address). user_id with user_hash (hex HMAC-SHA256 of user_id with the widget secret, computed on your ' +
            'server) is a verified identity: the same user_id is the same contact on every device; a wrong hash is ' +
            '401 and creates nothing. New visitors (no visitor_token) per address and workspace: ' +
            'WIDGET_SESSIONS_PER_IP (60) in 10 minutes, then 429 with Retry-After.',
          body: SessionBody,
          response: { 200: WidgetSession },
        },
      },
      async (req, reply) => {
        const widget = await widgetOfKey(deps, req.body.key);
        const verdict = checkOrigin(req, widget);
        if (req.body.visitor_token === undefined) {
          await count(
            sessionLimiter,
            req,
            reply,
            `At most ${deps.config.widgetSessionsPerIp} new chat visitors from one address in 10 minutes.`,
          );
        }
        const session = await openSession(deps, widget, req.body);
        // A browser on an allowed origin opened a session: the widget is installed somewhere.
        if (verdict === 'allowed') await markInstalled(deps, widget);
        reply.header('cache-control', 'no-store');
        return session;
      },
    );

    scope.delete(
      '/v1/widget/session',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: 'Sign the visitor out: the visitor token stops working',
          response: { 204: { description: 'Revoked', type: 'null' } },
        },
      },
      async (req, reply) => {
        await revokeVisitor(deps, req.visitor);
        return reply.code(204).send();
      },
    );

    scope.get(
      '/v1/widget/conversations',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: "The visitor's chat conversations, newest first",
          querystring: PageQuerySchema,
          response: { 200: PageOf(Conversation) },
        },
      },
      async (req) => listConversations(deps, req.visitor, req.query),
    );

    scope.post(
      '/v1/widget/conversations',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: 'Start a conversation (a chat ticket) with its first message',
          description:
            `body is plain text (HTML in it stays text). At most ${WIDGET_LIMITS.conversationsPerHour} new ` +
            `conversations an hour and ${WIDGET_LIMITS.messagesPerMinute} messages a minute per visitor ` +
            '(429 with Retry-After). With require_email on, 422 until the visitor gave an email.',
          body: NewConversationBody,
          response: { 201: Conversation },
        },
      },
      async (req, reply) => {
        await count(
          conversationLimiter,
          req,
          reply,
          `At most ${WIDGET_LIMITS.conversationsPerHour} new conversations an hour.`,
        );
        await count(messageLimiter, req, reply, `At most ${WIDGET_LIMITS.messagesPerMinute} messages a minute.`);
        const conversation = await startConversation(deps, widgetOf(req), req.visitor, req.body);
        return reply.code(201).send(conversation);
      },
    );

    scope.get(
      '/v1/widget/conversations/:id/messages',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: 'The public messages of a conversation, oldest first (never notes)',
          params: ConversationParams,
          response: { 200: Type.Object({ data: Type.Array(WidgetMessage) }) },
        },
      },
      async (req) => conversationMessages(deps, req.visitor, req.params.id),
    );

    scope.post(
      '/v1/widget/conversations/:id/messages',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: "Send the visitor's message",
          description:
            'A pending, on hold or solved conversation opens again; on a closed one the message starts a ' +
            'follow-up conversation (conversation_id names it).',
          params: ConversationParams,
          body: NewMessageBody,
          response: { 201: WidgetMessage },
        },
      },
      async (req, reply) => {
        await count(messageLimiter, req, reply, `At most ${WIDGET_LIMITS.messagesPerMinute} messages a minute.`);
        const message = await sendMessage(deps, req.visitor, req.params.id, req.body);
        return reply.code(201).send(message);
      },
    );

    scope.post(
      '/v1/widget/conversations/:id/handoff',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: 'Ask for a person (after an automatic answer)',
          params: ConversationParams,
          response: { 200: Conversation },
        },
      },
      async (req) => requestHandoff(deps, req.visitor, req.params.id),
    );

    scope.get(
      '/v1/widget/articles',
      {
        ...visitor(),
        schema: {
          tags: TAGS,
          summary: "The help center's published articles matching q: suggestions as the visitor types",
          description:
            `The best ${ARTICLE_SUGGESTIONS} published articles (drafts never) holding at least half of q's words ` +
            '(stemmed, stop words left out), each with the address of its help center page: none when no ' +
            'article is close enough. While the help center is off its articles are not public: the list is empty.',
          querystring: WidgetArticlesQuery,
          response: { 200: Type.Object({ data: Type.Array(WidgetArticle) }) },
        },
      },
      async (req) => {
        const center = await findHelpCenterById(deps, req.visitor.workspaceId);
        if (!center) return { data: [] };
        const l = linksOf(deps.config.publicUrl, center.slug);
        const hits = await suggestArticles(deps, center.workspaceId, req.query.q, ARTICLE_SUGGESTIONS);
        return {
          data: hits.map((h) => ({
            title: h.title,
            excerpt: h.excerpt,
            url: new URL(l.article(h.slug), deps.config.publicUrl).href,
          })),
        };
      },
    );

    const maxBytes = deps.config.attachmentMaxMb * 1024 * 1024;
    scope.post(
      '/v1/widget/attachments',
      {
        config: {
          access: access.visitor(),
          idempotent: false,
          swaggerTransform: documentedFileBody(
            `The file, at most ATTACHMENT_MAX_MB (${deps.config.attachmentMaxMb} MB here); over it 413 too_large.`,
          ),
        },
        schema: {
          tags: TAGS,
          summary: "Upload a file for the visitor's next message (multipart/form-data, one field named file)",
          description:
            'The same pipeline and limits as POST /v1/attachments. Only this visitor can attach it, by listing ' +
            'its id in attachment_ids; unattached uploads are removed after 24 hours.',
          consumes: ['multipart/form-data'],
          response: { 201: Attachment },
        },
      },
      async (req, reply) => {
        let upload: Awaited<ReturnType<typeof receiveUpload>>;
        try {
          upload = await receiveUpload(req, maxBytes, spoolDirOf(deps.config));
        } catch (err) {
          reply.header('connection', 'close');
          throw err;
        }
        try {
          const attachment = await uploadForVisitor(deps, req.visitor, upload);
          return reply.code(201).send(attachment);
        } finally {
          await unlink(upload.path).catch(() => {});
        }
      },
    );
  });

  // GET /widget.js, the browser script that calls the routes above.
  await widgetScriptRoutes(app);
}
