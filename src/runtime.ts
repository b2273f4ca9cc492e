// Wires the platform together: config → database → migrations → bus → app → jobs, then the
// workers (main.ts: once the server listens).
// Used by main.ts (the service) and the tests (same code path). The process's role
// (config.role, ROLE) decides what runs here: `all` everything; `api` the HTTP routes, no
// sockets and no job workers (it sends jobs; workers run them); `worker` the job workers,
// schedules and pollers, with only /healthz and /readyz over HTTP. The `gateway` role is
// src/gateway-process.ts (no routes, no jobs).
import pino from 'pino';
import { type App, type AppOptions, buildApp } from './app.js';
import type { Config, Role } from './config.js';
import type { Deps } from './deps.js';
import { Gateway, registerGatewayRoutes } from './gateway/index.js';
import { plugSemantic, registerSemanticJobs } from './modules/ai/embeddings/index.js';
import {
  type AutoSummarizeOptions,
  autoSummarizeHook,
  DEFAULT_AUTO_SUMMARIZE_OPTIONS,
  registerAutoSummarizeJobs,
} from './modules/ai/features/auto-summarize.js';
import { type AiOptions, DEFAULT_AI_OPTIONS, ProviderPool } from './modules/ai/pool.js';
import { createProvider } from './modules/ai/providers/index.js';
import { followedKnownKeys } from './modules/api-keys/known-keys.js';
import { assignmentHook } from './modules/assignment/hook.js';
import { hasSession } from './modules/assistant/service.js';
import { registerAttachmentJobs } from './modules/attachments/purge.js';
import { registerSignInJobs } from './modules/auth/jobs.js';
import { pruneEndedSessions } from './modules/auth/sessions.js';
import { SignInGuard } from './modules/auth/sign-in-guard.js';
import { automationsHook } from './modules/automations/engine.js';
import { RunCounts } from './modules/automations/run-counts.js';
import { renameTagInAutomations } from './modules/automations/service.js';
import { registerRechargeJobs } from './modules/billing/stripe/provider.js';
import { csatHook, registerCsatJobs } from './modules/csat/mail.js';
import { InboundListeners } from './modules/email/delivered.js';
import { type ImapOptions, ImapPollers } from './modules/email/imap.js';
import { registerInboundJobs } from './modules/email/inbound.js';
import { registerOutbound } from './modules/email/outbound.js';
import { DEFAULT_OUTBOUND_OPTIONS, type OutboundOptions } from './modules/email/outbound-options.js';
import { ArticleViews, pruneArticleViews } from './modules/help-center/views.js';
import { DEFAULT_PICTURE_OPTIONS, type PictureOptions, Pictures } from './modules/images/pictures.js';
import { registerPictureJobs } from './modules/images/sources.js';
import { registerInvitationJobs } from './modules/invitations/mail.js';
import { hasPublishedArticle } from './modules/kb/articles.js';
import { notificationsHook } from './modules/notifications/hook.js';
import { pruneLimitMarks } from './modules/portal/limits.js';
import { registerPortalJobs } from './modules/portal/mail.js';
import { prunePortalSessions } from './modules/portal/session.js';
import { registerSlaJobs } from './modules/sla/breaches.js';
import { slaHook } from './modules/sla/hook.js';
import { registerAutoCloseJob } from './modules/tickets/auto-close.js';
import { TicketHooks } from './modules/tickets/hooks.js';
import { registerTicketJobs } from './modules/tickets/snooze.js';
import { plugTriage, registerTriageJobs, triageHook } from './modules/triage/auto.js';
import { trainingHook } from './modules/triage/dedicated/training.js';
import { configuredEngine, triageConfigured } from './modules/triage/service.js';
import { renameTagInViews } from './modules/views/service.js';
import { DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from './modules/webhooks/options.js';
import { registerWebhooks, type WebhookWorkers } from './modules/webhooks/workers.js';
import { registerAnswerJobs } from './modules/widget/ai-answers.js';
import { widgetInstalled } from './modules/widget/settings.js';
import { pruneIdleVisitors } from './modules/widget/visitors.js';
import { openBus } from './platform/bus/index.js';
import { SecretBox } from './platform/crypto/secrets.js';
import { TokenSigner } from './platform/crypto/tokens.js';
import { openDatabase, raiseWall } from './platform/db/index.js';
import { migrateToLatest } from './platform/db/migrate.js';
import { Writer } from './platform/db/tx.js';
import { EventPublisher } from './platform/events/publisher.js';
import { pruneEvents } from './platform/events/retention.js';
import { pruneIdempotencyKeys } from './platform/http/idempotency.js';
import { Pager } from './platform/http/pagination.js';
import { Jobs } from './platform/jobs/index.js';
import { pruneMailOutbox } from './platform/mail/outbox.js';
import { openStorage } from './platform/storage/index.js';

export interface Runtime {
  /** What this process does (config.role): `all`, `api` or `worker`. */
  role: Exclude<Role, 'gateway'>;
  deps: Deps;
  app: App;
  /** The realtime gateway, on the same HTTP server (src/gateway); started with role `all` only. */
  gateway: Gateway;
  /** Listens on config.port (0 = any free port); returns the base URL. */
  listen(): Promise<string>;
  /**
   * Starts the job workers, schedules and mailbox pollers; createRuntime has done it already
   * unless `deferWorkers` (main.ts: once the server listens). Once only; the same promise after.
   */
  startWorkers(): Promise<void>;
  /** Graceful: stop accepting, drain requests and jobs, close the database. */
  stop(): Promise<void>;
  /** The webhook dispatcher, worker and sweeps (null when jobs do not run here, or not yet). */
  webhooks: WebhookWorkers | null;
  /** The IMAP / Google / Microsoft mailbox pollers (null when jobs do not run here, or not yet). */
  imap: ImapPollers | null;
  /** How long each start-up step took, in milliseconds (logged at debug level by main.ts). */
  startup: StartupPhases;
}

/** Start-up steps in the order they run; `bench:startup` prints them. */
export interface StartupPhases {
  /** openDatabase: the pool, or the embedded database's own start (PGlite). */
  database: number;
  migrations: number;
  /** Bus, Redis client and storage. */
  bus: number;
  /** buildApp and app.ready(): plugins, routes, schemas. */
  app: number;
  /** The gateway's subscriptions and the event publisher. */
  gateway: number;
  /** pg-boss start: its schema on a fresh database; from here jobs can be sent. */
  jobs: number;
  /** startWorkers: queues, workers, schedules, the webhook dispatcher, IMAP pollers. */
  workers: number;
}

export const MAINTENANCE_JOB = 'maintenance.prune';

export async function createRuntime(
  config: Config,
  opts: {
    logger?: pino.Logger;
    jobs?: boolean;
    /** The job queue's database schema (default pgboss; tests on a shared PostgreSQL give each service its own). */
    jobsSchema?: string;
    /**
     * Semantic search's backfill of every workspace (at start and hourly; default on). Tests on a
     * shared PostgreSQL turn it off: each service would embed every other test's workspaces.
     */
    embeddingBackfill?: boolean;
    webhooks?: Partial<WebhookOptions>;
    imap?: Partial<ImapOptions>;
    email?: Partial<OutboundOptions>;
    /** AI provider calls: timeout and retries (tests shorten them). */
    ai?: Partial<AiOptions>;
    /** auto_summarize: the delay from a message to the summary's refresh (tests shorten it). */
    autoSummarize?: Partial<AutoSummarizeOptions>;
    /** Pictures: pool size, fetch settings (tests point the lookups at stand-in servers). */
    pictures?: Partial<PictureOptions>;
    /** Tests: report answers that do not match their route's response schema. */
    checkResponses?: AppOptions['checkResponses'];
    /** Tests: the rate limits' window, shorter than a minute (the app's 429 countdown). */
    rateLimitWindowMs?: number;
    /** Tests: the tools the assistant offers (default: its own, src/modules/assistant/tools). */
    assistant?: AppOptions['assistant'];
    /** Embedded database only: the data directory a new database starts from (tests). */
    databaseTemplate?: Blob;
    /**
     * Leave the job workers, schedules and mailbox pollers to startWorkers() (main.ts calls it once
     * the server listens): the API answers about a second sooner. Jobs sent before then wait in
     * their queue, as they would for a busy worker.
     */
    deferWorkers?: boolean;
  } = {},
): Promise<Runtime> {
  const role = config.role;
  if (role === 'gateway') throw new Error('ROLE=gateway runs src/gateway-process.ts, not createRuntime');
  // api: HTTP only. worker: jobs only. all: both, and the sockets.
  const runsJobs = role !== 'api' && opts.jobs !== false;
  const holdsSockets = role === 'all';
  const log =
    opts.logger ??
    pino({
      level: config.logLevel,
      base: role === 'all' ? { pid: process.pid } : { pid: process.pid, role },
      redact: { paths: ['*.authorization', '*.password', '*.token', '*.secret'], censor: '[redacted]' },
    });

  const startup: StartupPhases = { database: 0, migrations: 0, bus: 0, app: 0, gateway: 0, jobs: 0, workers: 0 };
  let mark = performance.now();
  const phase = (name: keyof StartupPhases) => {
    const now = performance.now();
    startup[name] += now - mark;
    mark = now;
  };
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: config.memoryDatabase,
    template: opts.databaseTemplate,
  });
  phase('database');
  const closers: Array<() => Promise<unknown>> = [() => database.close()];
  try {
    await migrateToLatest(database.db as never, {
      onAhead: (names) =>
        log.info(
          { migrations: names.slice(0, 20), count: names.length },
          'the database was migrated by a newer release: this one runs on it unchanged (a rolling upgrade)',
        ),
    });
    if (!config.rowLevelSecurity) log.warn('row-level security is off: ROW_LEVEL_SECURITY=false');
    else if (!(await raiseWall(database))) {
      log.warn('row-level security is off: the database user may not take the role svc_tenant');
    }
    phase('migrations');
    const bus = await openBus(config.natsUrl);
    closers.unshift(() => bus.close());
    // ioredis is loaded only when REDIS_URL is set.
    const redis = config.redisUrl
      ? new (await import('ioredis')).Redis(config.redisUrl, {
          lazyConnect: false,
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
        })
      : null;
    if (redis) {
      redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
      closers.unshift(() => redis.quit().catch(() => redis.disconnect()));
    }
    const publisher = new EventPublisher(database, bus, log);
    // An api process sends jobs and runs none: no pg-boss maintenance nor cron timekeeping there.
    const jobs = new Jobs(database, log, {
      ...(opts.jobsSchema ? { schema: opts.jobsSchema } : {}),
      ...(role === 'api' ? { background: false } : {}),
    });
    const storage = await openStorage(config);
    if (storage.close) closers.unshift(async () => storage.close?.());
    phase('bus');
    // Workflow inside a ticket's transaction, in hook order (src/modules/tickets/hooks.ts).
    const ticketHooks = new TicketHooks();
    ticketHooks.add(automationsHook); // 10: the workspace's automations (src/modules/automations/engine.ts)
    ticketHooks.add(assignmentHook); // 20: new tickets to online agents (src/modules/assignment/hook.ts)
    ticketHooks.add(slaHook); // 30: SLA clocks: due dates, first reply, solve, reopen (src/modules/sla/hook.ts)
    ticketHooks.add(notificationsHook); // 40: assigned, mentioned, customer_replied (src/modules/notifications/hook.ts)
    ticketHooks.add(csatHook); // 50: a solved ticket's rating request (src/modules/csat/mail.ts)
    ticketHooks.add(triageHook); // 60: auto_triage queues a run of a new ticket (src/modules/triage/auto.ts)
    ticketHooks.add(trainingHook); // 61: a solve queues the dedicated engine's training (src/modules/triage/dedicated/training.ts)
    // 62: auto_summarize queues the summary's refresh after a new message (src/modules/ai/features/auto-summarize.ts)
    ticketHooks.add(autoSummarizeHook({ ...DEFAULT_AUTO_SUMMARIZE_OPTIONS, ...opts.autoSummarize }));
    const deps: Deps = {
      config,
      database,
      writer: new Writer(database.db, publisher),
      publisher,
      bus,
      jobs,
      pager: new Pager(config.secretKey),
      tokens: new TokenSigner(config.secretKey),
      secrets: new SecretBox(config.secretKey),
      redis,
      storage,
      log,
      ticketHooks,
      // A label renamed or merged: the views, then the automations, that name it by name follow,
      // in the label's transaction (src/modules/tags/service.ts).
      tagRenameHooks: [(_deps, u, from, to) => renameTagInViews(u, from, to), renameTagInAutomations],
      webhookOptions: { ...DEFAULT_WEBHOOK_OPTIONS, ...opts.webhooks }, // tests shorten them
      outboundOptions: { ...DEFAULT_OUTBOUND_OPTIONS, ...opts.email }, // tests shorten them
      knownKeys: followedKnownKeys(bus),
      signInGuard: new SignInGuard(config.signin, redis, log),
      inboundListeners: new InboundListeners(), // the outbound side's auto-reply registers here
      runCounts: new RunCounts(database, log), // automations' run_count, written every second
      articleViews: new ArticleViews(database, log), // help center views, counted 4 times a second
      // Nothing plugs into the AI seams yet (src/deps.ts AiSeams); the providers are made on first
      // use, with the timeouts and retries tests may shorten (src/modules/ai/pool.ts).
      ai: {
        decide: null,
        triage: null,
        triageEngine: async (d) => configuredEngine(d),
        providers: new ProviderPool({ ...DEFAULT_AI_OPTIONS, ...opts.ai }, createProvider),
      },
      pictures: new Pictures({ ...DEFAULT_PICTURE_OPTIONS, ...opts.pictures }), // src/modules/images
      // The knowledge base's check of publish_article: a published article (src/modules/kb/articles.ts).
      // The widget's check of install_widget: a session from a browser on an allowed origin (src/modules/widget/settings.ts).
      onboardingChecks: new Map([
        ['publish_article', (db, workspaceId) => hasPublishedArticle(db, workspaceId)],
        ['install_widget', (db, workspaceId) => widgetInstalled(db, workspaceId)],
        // Triage's check of setup_triage: auto_triage on, or settings changed (src/modules/triage/service.ts).
        ['setup_triage', (db, workspaceId) => triageConfigured(db, workspaceId)],
        // The assistant's check of try_ollie: the person has a conversation (src/modules/assistant/service.ts).
        ['try_ollie', (db, workspaceId, userId) => hasSession(db, workspaceId, userId)],
      ]),
    };
    // AI triage: the engines, the automations' seams, the engine reported (src/modules/triage/auto.ts).
    plugTriage(deps);
    // Semantic search: the embedder and this process's vectors (src/modules/ai/embeddings/index.ts).
    const closeSemantic = plugSemantic(deps);
    closers.unshift(closeSemantic);
    const pictures = deps.pictures;
    closers.unshift(() => pictures.close());
    const runCounts = deps.runCounts;
    closers.unshift(() => runCounts.stop());
    const articleViews = deps.articleViews;
    closers.unshift(() => articleViews.stop());
    const app = await buildApp(deps, {
      checkResponses: opts.checkResponses,
      ...(opts.rateLimitWindowMs ? { rateLimitWindowMs: opts.rateLimitWindowMs } : {}),
      ...(opts.assistant ? { assistant: opts.assistant } : {}),
    });
    // The realtime gateway shares the API's server and port: /health, and WebSocket upgrades
    // (role all; an api or worker process has no sockets, a gateway process holds them).
    const gateway = new Gateway(deps);
    if (holdsSockets) registerGatewayRoutes(app, gateway);
    if (role === 'worker') onlyHealth(app);
    await app.ready();
    phase('app');
    if (holdsSockets) {
      await gateway.start();
      gateway.attach(app.server);
      closers.unshift(() => gateway.close());
    }

    publisher.start();
    closers.unshift(() => publisher.stop());
    phase('gateway');
    if (opts.jobs !== false) {
      await jobs.start();
      closers.unshift(() => jobs.stop());
    }
    phase('jobs');

    // Each step's statements run on this thread on the embedded database, chained by promises that
    // leave the event loop no turn: after each step, requests that came in meanwhile are served
    // (main.ts starts the workers once the API listens; about 50 statements, a second or so).
    const step = async <T>(work: Promise<T>): Promise<T> => {
      const done = await work;
      await new Promise((resolve) => setImmediate(resolve));
      return done;
    };
    const startWorkers = async () => {
      if (!runsJobs || stopped) return;
      const started = performance.now();
      await step(
        jobs.work(MAINTENANCE_JOB, async () => {
          const events = await pruneEvents(database, config.eventRetentionMs);
          const keys = await pruneIdempotencyKeys(database);
          const sessions = await pruneEndedSessions(database);
          const views = await pruneArticleViews(database);
          const portal = (await prunePortalSessions(database)) + (await pruneLimitMarks(database));
          const outbox = await pruneMailOutbox(database);
          const visitors = await pruneIdleVisitors(database);
          if (events + keys + sessions + views + portal + outbox + visitors > 0) {
            log.info(
              {
                events,
                idempotency_keys: keys,
                sessions,
                article_view_marks: views,
                portal_rows: portal,
                outbox_mails: outbox,
                widget_visitors: visitors,
              },
              'pruned',
            );
          }
        }),
      );
      await step(jobs.schedule(MAINTENANCE_JOB, '17 * * * *'));

      await step(registerInvitationJobs(deps)); // invitation emails (src/modules/invitations/mail.ts)
      await step(registerCsatJobs(deps)); // rating requests of solved tickets (src/modules/csat/mail.ts)
      await step(registerPortalJobs(deps)); // the portal's confirmations and sign-in links (src/modules/portal/mail.ts)
      await step(registerSignInJobs(deps)); // OAuth pictures, sweep of expired sign-in rows (src/modules/auth/jobs.ts)
      await step(registerAttachmentJobs(deps)); // hourly purge of unattached uploads (src/modules/attachments/purge.ts)
      const pictureJobs = await step(registerPictureJobs(deps)); // lookups, removal of retired pictures (src/modules/images/sources.ts)
      closers.unshift(async () => pictureJobs.stop());
      await step(registerTicketJobs(deps)); // snoozed tickets wake up every minute (src/modules/tickets/snooze.ts)
      await step(registerSlaJobs(deps)); // SLA breaches every minute and at start (src/modules/sla/breaches.ts)
      await step(registerTriageJobs(deps)); // automatic and automations' triage runs (src/modules/triage/auto.ts)
      const embedding = await step(registerSemanticJobs(deps, opts.embeddingBackfill ?? true)); // vectors after writes, hourly backfill (src/modules/ai/embeddings/queue.ts)
      closers.unshift(async () => embedding.stop());
      await step(registerAnswerJobs(deps)); // AI answers to chat visitors (src/modules/widget/ai-answers.ts)
      await step(registerAutoSummarizeJobs(deps)); // auto_summarize's refreshes (src/modules/ai/features/auto-summarize.ts)
      await step(registerRechargeJobs(deps)); // auto-recharge payments (src/modules/billing/stripe/provider.ts)
      await step(registerAutoCloseJob(deps)); // solved tickets close after auto_close_days (src/modules/tickets/auto-close.ts)
      await step(registerInboundJobs(deps)); // inbound mail → tickets, and the spool sweep (src/modules/email/inbound.ts)
      const w = await step(registerWebhooks(deps)); // dispatcher, deliveries, sweeps (src/modules/webhooks/workers.ts)
      runtime.webhooks = w;
      closers.unshift(() => w.stop());
      const outbound = await step(registerOutbound(deps)); // replies on email tickets, auto-replies (src/modules/email/outbound.ts)
      closers.unshift(() => outbound.stop());

      const pollers = new ImapPollers(deps, opts.imap); // IMAP mailboxes' new mail (src/modules/email/imap.ts)
      runtime.imap = pollers;
      pollers.start();
      closers.unshift(() => pollers.stop());
      startup.workers = performance.now() - started;
    };

    let stopped = false;
    let workers: Promise<void> | null = null;
    const runtime: Runtime = {
      role,
      deps,
      app,
      gateway,
      webhooks: null,
      imap: null,
      startup,
      async listen() {
        const address = await app.listen({ port: config.port, host: config.host });
        return address;
      },
      startWorkers() {
        workers ??= startWorkers();
        return workers;
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        // Workers still starting finish first, so that each one registered is also stopped.
        await workers?.catch(() => {});
        // Sockets first (1001 going away): the server's close waits for every connection.
        if (holdsSockets) await gateway.close();
        app.beginShutdown();
        // Requests in flight get to finish; connections still open after 10 s are cut.
        const cut = setTimeout(() => app.server.closeAllConnections(), 10_000);
        cut.unref();
        await app.close();
        clearTimeout(cut);
        for (const close of closers) await close().catch(() => {});
      },
    };
    if (!opts.deferWorkers) await runtime.startWorkers();
    return runtime;
  } catch (err) {
    for (const close of closers) await close().catch(() => {});
    throw err;
  }
}

/** The paths a worker process answers over HTTP: its probes (docs/operations.md "Several processes"). */
const WORKER_PATHS = new Set(['/healthz', '/readyz']);

/** Role worker: every path but the probes answers 404 (the routes are the api processes'). */
function onlyHealth(app: App): void {
  app.addHook('onRequest', async (req, reply) => {
    if (WORKER_PATHS.has(req.url.split('?')[0] ?? '')) return;
    return reply.code(404).send({
      status: 404,
      code: 'not_found',
      detail: 'This process runs jobs only (ROLE=worker): it answers /healthz and /readyz.',
    });
  });
}
