// The platform services every module receives. Built once by runtime.ts.
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { NewTicketColumns, NewTicketDraft, TicketChange } from './modules/tickets/change.js';
import type { TicketRow } from './modules/tickets/queries.js';
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
