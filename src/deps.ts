// The platform services every module receives. Built once by runtime.ts.
import type { Static } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { ProviderPool } from './modules/ai/pool.js';
import type { KnownKeys } from './modules/api-keys/known-keys.js';
import type { SignInGuard } from './modules/auth/sign-in-guard.js';
import type { RunCounts } from './modules/automations/run-counts.js';
import type { InboundListeners } from './modules/email/delivered.js';
import type { OutboundOptions } from './modules/email/outbound-options.js';
import type { ArticleViews } from './modules/help-center/views.js';
import type { Pictures } from './modules/images/pictures.js';
import type { OnboardingChecks } from './modules/onboarding/checks.js';
import type { NewTicketColumns, NewTicketDraft, TicketChange, TicketHookMessage } from './modules/tickets/change.js';
import type { TicketRow } from './modules/tickets/queries.js';
import type { TriageEngine } from './modules/triage/schemas.js';
import type { WebhookOptions } from './modules/webhooks/options.js';
import type { EventBus } from './platform/bus/index.js';
import type { SecretBox } from './platform/crypto/secrets.js';
import type { TokenSigner } from './platform/crypto/tokens.js';
import type { Database } from './platform/db/index.js';
import type { Unit, Writer } from './platform/db/tx.js';
import type { EventPublisher } from './platform/events/publisher.js';
import type { Pager } from './platform/http/pagination.js';
import type { Jobs } from './platform/jobs/index.js';
import type { Storage } from './platform/storage/index.js';

export interface Deps {
  config: Config;
  database: Database;
  writer: Writer;
  publisher: EventPublisher;
  bus: EventBus;
  jobs: Jobs;
  pager: Pager;
  tokens: TokenSigner;
  secrets: SecretBox;
  redis: Redis | null;
  /** Uploaded bytes: local disk or S3 (src/platform/storage). */
  storage: Storage;
  log: FastifyBaseLogger;
  /** What workflow modules do inside a ticket's transaction (src/modules/tickets/hooks.ts). */
  ticketHooks: TicketHookRunner;
  /**
   * What modules that store label names (views, automations) do when a label's name changes,
   * called in this order by the tags module inside the rename's or merge's transaction.
   */
  tagRenameHooks: readonly TagRenameHook[];
  /** Webhook delivery settings (tests shorten them through createRuntime's `webhooks`). */
  webhookOptions: WebhookOptions;
  /** Outbound email settings (tests shorten them through createRuntime's `email`). */
  outboundOptions: OutboundOptions;
  /** The API keys this process has seen lately (src/modules/api-keys/known-keys.ts). */
  knownKeys: KnownKeys;
  /** Failed sign-in counters (src/modules/auth/sign-in-guard.ts). */
  signInGuard: SignInGuard;
  /** Called after each inbound mail became a message and committed (src/modules/email/delivered.ts). */
  inboundListeners: InboundListeners;
  /** Automations' run_count, written every second (src/modules/automations/run-counts.ts). */
  runCounts: RunCounts;
  /** Help center article views, counted every quarter of a second (src/modules/help-center/views.ts). */
  articleViews: ArticleViews;
  /** What the AI features plug in, and the providers their calls go to (src/modules/ai). */
  ai: AiSeams;
  /** Onboarding steps checked by the module that owns each (src/modules/onboarding/checks.ts). */
  onboardingChecks: OnboardingChecks;
  /** Pictures: the decoding worker pool, lookup settings, served-bytes cache (src/modules/images). */
  pictures: Pictures;
}

/** What an automation asks the decision engine (its ai_decide conditions, in one call). */
export interface DecisionRequest {
  automation: { id: string; name: string };
  /** The ticket as it is at that moment, in the change's transaction. */
  ticket: TicketRow;
  /** The message of the event (the reply, or the first message), if any. */
  message: TicketHookMessage | null;
  /** Every ai_decide question of one automation run, asked in one call (charged once). */
  questions: string[];
}

/**
 * Answers each question with the probability (0 to 1) that the answer is yes, in the order
 * asked; null (or a missing or non-number entry) when it cannot answer: then the condition
 * does not hold.
 */
export type DecisionEngine = (deps: Deps, u: Unit, request: DecisionRequest) => Promise<Array<number | null> | null>;

export interface TriageRequest {
  automation: { id: string; name: string };
  ticket: TicketRow;
  message: TicketHookMessage | null;
}

/** What the ai_triage action does (the AI issue's triage, applied as the automation). */
export type TriageHandler = (deps: Deps, u: Unit, request: TriageRequest) => Promise<void>;

/**
 * The seams the AI features plug into. With none plugged in, ai_decide conditions do not hold,
 * ai_triage does nothing, and GET /v1/triage reports the engine from the configuration alone.
 */
export interface AiSeams {
  decide: DecisionEngine | null;
  triage: TriageHandler | null;
  /** What GET /v1/triage shows as the workspace's engine. */
  triageEngine: (deps: Deps, workspaceId: string) => Promise<Static<typeof TriageEngine>>;
  /** The language model providers this process holds, one per (kind, key, base URL) (src/modules/ai/pool.ts). */
  providers: ProviderPool;
}

/**
 * Inside a label's rename, or its merge into another label (src/modules/tags/service.ts): a
 * module that stores label names rewrites `from` (any case) to `to`. The tags module calls
 * these without importing the modules that register them (runtime.ts).
 */
export type TagRenameHook = (deps: Deps, u: Unit, from: string, to: string) => Promise<void>;

/**
 * What the tickets module calls at its five points of change: the hooks the workflow modules
 * registered in runtime.ts (TicketHooks in src/modules/tickets/hooks.ts). Declared here, beside
 * Deps, so that this file imports no module that takes Deps back.
 */
export interface TicketHookRunner {
  /** The columns the hooks give a new ticket in its INSERT (each null when no hook sets it). */
  prepareCreated(deps: Deps, u: Unit, draft: NewTicketDraft): Promise<NewTicketColumns>;
  /** Runs the hooks of a change in order; the ticket as they all left it, or null when none changed it. */
  run(deps: Deps, u: Unit, change: TicketChange): Promise<TicketRow | null>;
}
