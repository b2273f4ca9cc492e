// Webhook delivery: from a committed event to a signed POST that a receiver acknowledged.
//
// 1. The dispatcher subscribes to the bus. For each committed envelope and each enabled endpoint
//    subscribed to its type that may see it (private-team events only when granted the team;
//    personal events never), it writes a delivery record, then queues a job on the durable
//    queue (pg-boss). Records are written with ON CONFLICT DO NOTHING on (event, endpoint): the
//    bus is at-least-once and every process subscribes, so a republished event or a second
//    process finds the record already there and queues nothing.
// 2. A job carries deliveries of one workspace. The worker takes them with a lease (so two
//    workers never attempt the same delivery), POSTs each with its signature, and records the
//    result: any 2xx acknowledges; anything else is retried on the schedule (about 1 min, 5 min,
//    30 min, 2 h, 5 h, 10 h, 10 h, with jitter: 8 attempts), each retry a job that starts at
//    its time. Jobs survive restarts, so a restart resumes pending deliveries.
// 3. Two sweeps in every process close the gaps of a crash: events committed more than a few
//    seconds ago that have no delivery records (the process died between the commit and the
//    dispatcher), and pending deliveries well past due that no worker holds (it died between
//    writing the record and queueing the job, or in the middle of an attempt).
// 4. Health: an endpoint whose attempts have all failed for 3 days is disabled (webhook.updated,
//    audit webhook.disabled, an email to the workspace's admins and owners).
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { EventEnvelope } from '../../platform/events/envelope.js';
import { canSee } from '../../platform/events/visibility.js';
import type { RequestContext } from '../../platform/http/context.js';
import { systemMailer } from '../../platform/mail/index.js';
import { type SafeResponse, safePost } from '../../platform/net/http.js';
import { signWebhook } from '../../webhooks.js';
import { recordAudit } from '../audit/service.js';
import { ALL_EVENTS, TEST_EVENT } from './catalog.js';
import type { WebhookOptions } from './options.js';
import { type DeliverJob, DISABLED_MAIL_JOB, enqueueDeliveries } from './queue.js';
import { loadWebhook, secretContext } from './service.js';

export const USER_AGENT = 'Helpdesk-Webhooks/0.1 (+signed; see SVC-Signature)';

/** The body of a delivery: the envelope without topics (and without the internal team_id). */
export function deliveryBody(e: EventEnvelope): string {
  return JSON.stringify({
    id: e.id,
    seq: e.seq,
    workspace_id: e.workspace_id,
    type: e.type,
    visibility: e.visibility,
    data: e.data,
    occurred_at: e.occurred_at,
  });
}

interface EndpointTarget {
  workspace_id: string;
  id: string;
  events: string[];
  team_ids: string[];
  receives_from: Date;
}

/**
 * What an endpoint may see: the rule of replay and the gateway (visibility.ts), for a caller that
 * reads every event type (like a key with every scope) and belongs to the granted private teams.
 * Personal events (notifications, personal views) are nobody's but their owner's.
 */
function webhookContext(ep: EndpointTarget): RequestContext {
  return {
    workspaceId: ep.workspace_id,
    actor: { kind: 'api_key', apiKeyId: `webhook:${ep.id}`, createdBy: null },
    role: null,
    scopes: ['realtime'],
    teams: ep.team_ids,
    ip: '',
  };
}

export function endpointReceives(ep: EndpointTarget, e: EventEnvelope): boolean {
  if (e.type === 'event.hidden' || e.type === TEST_EVENT) return false;
  if (!ep.events.includes(ALL_EVENTS) && !ep.events.includes(e.type)) return false;
  // An endpoint receives the events committed after it was created or last switched back on.
  if (new Date(e.occurred_at).getTime() < ep.receives_from.getTime()) return false;
  return canSee(webhookContext(ep), e);
}

// ---------------------------------------------------------------------------------------------
// 1. The dispatcher.

export class Dispatcher {
  #buffer: EventEnvelope[] = [];
  #draining: Promise<void> | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly windowMs = 0,
  ) {}

  /**
   * The bus handler. Events are gathered for a few milliseconds (and while a write is under way),
   * so that a stream of events costs a few statements and jobs per batch, not per event.
   */
  readonly onEvent = (e: EventEnvelope): void => {
    this.#buffer.push(e);
    this.#draining ??= this.#drain();
  };

  async #drain(): Promise<void> {
    try {
      await new Promise((r) => (this.windowMs > 0 ? setTimeout(r, this.windowMs) : setImmediate(r)));
      while (this.#buffer.length > 0) {
        const batch = this.#buffer.splice(0, 2000);
        try {
          await this.dispatch(batch);
        } catch (err) {
          // The sweep finds these events again (they have no delivery records).
          this.deps.log.warn(
            { events: batch.length, err: err instanceof Error ? err.message : String(err) },
            'webhook dispatch failed; the sweep will retry',
          );
        }
      }
    } finally {
      this.#draining = null;
      if (this.#buffer.length > 0) this.#draining = this.#drain();
    }
  }

  /** Resolves when everything received so far was dispatched. */
  async idle(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /** Writes the delivery records of these events and queues their jobs; returns how many were new. */
  async dispatch(events: EventEnvelope[]): Promise<number> {
    const relevant = events.filter((e) => e.type !== 'event.hidden' && e.type !== TEST_EVENT);
    if (relevant.length === 0) return 0;
    const db = this.deps.database.db;
    const workspaceIds = [...new Set(relevant.map((e) => e.workspace_id))];
    const endpoints = await db
      .selectFrom('webhook_endpoints')
      .select(['workspace_id', 'id', 'events', 'team_ids', 'receives_from'])
      .where('workspace_id', 'in', workspaceIds)
      .where('enabled', '=', true)
      .execute();
    if (endpoints.length === 0) return 0;
    const byWorkspace = new Map<string, EndpointTarget[]>();
    for (const ep of endpoints) {
      const list = byWorkspace.get(ep.workspace_id);
      if (list) list.push(ep);
      else byWorkspace.set(ep.workspace_id, [ep]);
    }
    const rows: Array<{
      workspace_id: string;
      id: string;
      endpoint_id: string;
      event_id: string;
      event_type: string;
      payload: string;
      event_at: Date;
      next_attempt_at: Date;
    }> = [];
    const seen = new Set<string>();
    const now = new Date();
    for (const e of relevant) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      const targets = (byWorkspace.get(e.workspace_id) ?? []).filter((ep) => endpointReceives(ep, e));
      if (targets.length === 0) continue;
      const payload = deliveryBody(e);
      for (const ep of targets) {
        rows.push({
          workspace_id: e.workspace_id,
          id: newId(),
          endpoint_id: ep.id,
          event_id: e.id,
          event_type: e.type,
          payload,
          event_at: new Date(e.occurred_at),
          next_attempt_at: now,
        });
      }
    }
    let created = 0;
    const groups = new Map<string, string[]>();
    for (let i = 0; i < rows.length; i += 1000) {
      const inserted = await db
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + 1000))
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'event_id', 'endpoint_id']).where(sql<boolean>`not manual`).doNothing(),
        )
        .returning(['workspace_id', 'id'])
        .execute();
      created += inserted.length;
      for (const r of inserted) {
        const g = groups.get(r.workspace_id);
        if (g) g.push(r.id);
        else groups.set(r.workspace_id, [r.id]);
      }
    }
    await Promise.all([...groups].map(([w, ids]) => enqueueDeliveries(this.deps, w, ids)));
    return created;
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Attempts.

interface Claimed {
  workspace_id: string;
  id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  event_at: Date;
  endpoint_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  enabled: boolean;
}

interface Outcome {
  id: string;
  status: 'pending' | 'succeeded' | 'failed';
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

/** Runs `work` over `items`, at most `width` at a time. */
async function inPool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export class Deliverer {
  /** Endpoints that timed out recently (this process): no request until then, so a hanging
   *  receiver costs one timeout per retry interval instead of holding every worker. */
  readonly #cooling = new Map<string, number>();

  constructor(
    private readonly deps: Deps,
    private readonly opts: WebhookOptions,
  ) {}

  get maxAttempts(): number {
    return this.opts.retryDelaysMs.length + 1;
  }

  /** The wait after the attempt numbered `attempt` (1-based) failed, with jitter; null after the last. */
  retryDelay(attempt: number, random = Math.random()): number | null {
    const base = this.opts.retryDelaysMs[attempt - 1];
    if (base === undefined) return null;
    return Math.max(0, Math.round(base * (1 + this.opts.jitter * (2 * random - 1))));
  }

  async handle(job: DeliverJob): Promise<void> {
    const db = this.deps.database.db;
    const ids = [...new Set(job.d)].filter((id) => typeof id === 'string');
    if (ids.length === 0) return;
    const rounds = Math.ceil(ids.length / this.opts.perEndpointConcurrency) + 1;
    const leaseMs = rounds * (this.opts.timeoutMs + 5000) + 30_000;
    const claimed: Claimed[] = await db
      .updateTable('webhook_deliveries as d')
      .from('webhook_endpoints as e')
      .set({ lease_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` })
      .whereRef('e.workspace_id', '=', 'd.workspace_id')
      .whereRef('e.id', '=', 'd.endpoint_id')
      .where('d.workspace_id', '=', job.w)
      .where('d.id', 'in', ids)
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', sql<Date>`now() + interval '2 seconds'`)
      .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<', sql<Date>`now()`)]))
      .where((eb) => eb.or([eb('e.enabled', '=', true), eb('d.manual', '=', true)]))
      .returning([
        'd.workspace_id',
        'd.id',
        'd.event_id',
        'd.event_type',
        'd.payload',
        'd.attempts',
        'd.event_at',
        'e.id as endpoint_id',
        'e.url',
        'e.secret_enc',
        'e.previous_secret_enc',
        'e.previous_secret_expires_at',
        'e.failing_since',
        'e.enabled',
      ])
      .execute();
    if (claimed.length === 0) return;

    // Endpoint by endpoint, all at once; within an endpoint, in commit order, a few at a time.
    const byEndpoint = new Map<string, Claimed[]>();
    for (const d of claimed) {
      const list = byEndpoint.get(d.endpoint_id);
      if (list) list.push(d);
      else byEndpoint.set(d.endpoint_id, [d]);
    }
    const outcomes: Outcome[] = [];
    const retryAt = new Map<number, Date>();
    const health: Array<{ ep: Claimed; succeeded: number; failed: number }> = [];
    await Promise.all(
      [...byEndpoint.values()].map(async (list) => {
        list.sort((a, b) => a.event_at.getTime() - b.event_at.getTime() || (a.id < b.id ? -1 : 1));
        const tally = { ep: list[0]!, succeeded: 0, failed: 0 };
        health.push(tally);
        await inPool(list, this.opts.perEndpointConcurrency, async (d) => {
          const res = await this.attempt(d);
          const attempt = d.attempts + 1;
          if (res.status !== null && res.status >= 200 && res.status < 300) {
            tally.succeeded++;
            outcomes.push({
              id: d.id,
              status: 'succeeded',
              response_status: res.status,
              duration_ms: res.durationMs,
              error: null,
              next_attempt_at: null,
            });
            return;
          }
          tally.failed++;
          // One jittered time per attempt number within a job: one retry job per group.
          let next: Date | null | undefined = retryAt.get(attempt);
          if (next === undefined) {
            const wait = this.retryDelay(attempt);
            next = wait === null ? null : new Date(Date.now() + wait);
            if (next) retryAt.set(attempt, next);
          }
          outcomes.push({
            id: d.id,
            status: next ? 'pending' : 'failed',
            response_status: res.status,
            duration_ms: res.durationMs,
            error: res.error ?? `the endpoint answered ${res.status}`,
            next_attempt_at: next ? next.toISOString() : null,
          });
        });
      }),
    );

    await sql`
      UPDATE webhook_deliveries d
         SET attempts = d.attempts + 1, status = r.status, response_status = r.response_status,
             duration_ms = r.duration_ms, error = r.error, next_attempt_at = r.next_attempt_at,
             lease_until = NULL, updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb)
             AS r(id uuid, status text, response_status int, duration_ms int, error text, next_attempt_at timestamptz)
       WHERE d.workspace_id = ${job.w} AND d.id = r.id`.execute(db);

    const retries = new Map<string, string[]>();
    for (const o of outcomes) {
      if (o.status !== 'pending' || !o.next_attempt_at) continue;
      const list = retries.get(o.next_attempt_at);
      if (list) list.push(o.id);
      else retries.set(o.next_attempt_at, [o.id]);
    }
    for (const [at, list] of retries) await enqueueDeliveries(this.deps, job.w, list, new Date(at));
    for (const h of health) await this.#health(job.w, h.ep, h.succeeded, h.failed);
  }

  /** One POST, signed now. */
  async attempt(d: Claimed): Promise<SafeResponse> {
    const until = this.#cooling.get(d.endpoint_id);
    if (until !== undefined) {
      if (until > Date.now()) {
        return {
          status: null,
          durationMs: 0,
          error: 'not sent: the endpoint timed out on another delivery moments ago',
          timedOut: false,
        };
      }
      this.#cooling.delete(d.endpoint_id);
    }
    const secret = this.deps.secrets.open(d.secret_enc, secretContext(d.workspace_id, d.endpoint_id));
    if (secret === null) {
      return {
        status: null,
        durationMs: 0,
        error: 'not sent: the signing secret cannot be decrypted (was SECRET_KEY changed?)',
        timedOut: false,
      };
    }
    // After a rotation, the replaced secret signs too until its time is up (a second v1).
    const previous =
      d.previous_secret_enc !== null &&
      d.previous_secret_expires_at !== null &&
      d.previous_secret_expires_at.getTime() > Date.now()
        ? this.deps.secrets.open(d.previous_secret_enc, secretContext(d.workspace_id, d.endpoint_id))
        : null;
    const t = Math.floor(Date.now() / 1000);
    const res = await safePost(
      d.url,
      d.payload,
      {
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'SVC-Event-Id': d.event_id,
        'SVC-Event-Type': d.event_type,
        'SVC-Signature': signWebhook(secret, t, d.payload, previous),
      },
      {
        allowPrivate: this.deps.config.webhookAllowPrivate,
        timeoutMs: this.opts.timeoutMs,
        ...(this.opts.resolve ? { resolve: this.opts.resolve } : {}),
      },
    );
    if (res.timedOut) this.#cooling.set(d.endpoint_id, Date.now() + (this.opts.retryDelaysMs[0] ?? 60_000));
    return res;
  }

  /**
   * A success clears the endpoint's failing_since; a job with failures only sets it (once) and
   * disables the endpoint when it is older than disableAfterMs.
   */
  async #health(workspaceId: string, ep: Claimed, succeeded: number, failed: number): Promise<void> {
    const db = this.deps.database.db;
    const where = db
      .updateTable('webhook_endpoints')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', ep.endpoint_id);
    if (succeeded > 0) {
      if (ep.failing_since !== null) {
        await where.set({ failing_since: null }).where('failing_since', 'is not', null).execute();
      }
      return;
    }
    if (failed === 0) return;
    let since = ep.failing_since;
    if (since === null) {
      const row = await where
        .set({ failing_since: sql<Date>`coalesce(failing_since, now())` })
        .returning('failing_since')
        .executeTakeFirst();
      since = row?.failing_since ?? null;
    }
    if (ep.enabled && since && Date.now() - since.getTime() >= this.opts.disableAfterMs) {
      await disableFailingEndpoint(this.deps, workspaceId, ep.endpoint_id, since);
    }
  }
}

/** Three days of failures: the endpoint is switched off, with an event, an audit entry and an email. */
export async function disableFailingEndpoint(
  deps: Deps,
  workspaceId: string,
  endpointId: string,
  failingSince: Date,
): Promise<boolean> {
  return deps.writer.run(workspaceId, async (u) => {
    const row = await u.trx
      .updateTable('webhook_endpoints')
      .set({ enabled: false, updated_at: new Date() })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', endpointId)
      .where('enabled', '=', true)
      .returning(['url'])
      .executeTakeFirst();
    if (!row) return false;
    const view = (await loadWebhook(u.trx, workspaceId, endpointId))!;
    u.emit({ type: 'webhook.updated', data: { webhook: view, changes: ['enabled'] } });
    await recordAudit(
      u.trx,
      { workspaceId, actor: { kind: 'system' }, ip: null },
      {
        action: 'webhook.disabled',
        entityType: 'webhook',
        entityId: endpointId,
        data: { url: row.url, failing_since: failingSince.toISOString(), reason: 'every delivery failed for 3 days' },
      },
    );
    u.afterCommit(async () => {
      await deps.jobs.send(DISABLED_MAIL_JOB, { w: workspaceId, e: endpointId }, { retryLimit: 5 });
    });
    return true;
  });
}

/** The notice to the workspace's admins and owners (the system mailer; kept in the outbox when SMTP_URL is unset). */
export async function sendDisabledMail(deps: Deps, job: { w: string; e: string }): Promise<number> {
  const db = deps.database.db;
  const ws = await db.selectFrom('workspaces').select('name').where('id', '=', job.w).executeTakeFirst();
  const ep = await db
    .selectFrom('webhook_endpoints')
    .select(['url', 'failing_since', 'enabled'])
    .where('workspace_id', '=', job.w)
    .where('id', '=', job.e)
    .executeTakeFirst();
  if (!ws || !ep || ep.enabled) return 0;
  const people = await db
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.email', 'u.name'])
    .where('m.workspace_id', '=', job.w)
    .where('m.role', 'in', ['owner', 'admin'])
    .orderBy('u.email')
    .execute();
  const mailer = systemMailer(deps);
  const since = ep.failing_since
    ? `${ep.failing_since.toISOString().slice(0, 16).replace('T', ' ')} UTC`
    : 'three days';
  for (const p of people) {
    await mailer.send(
      {
        to: p.email,
        subject: `Webhook disabled in ${ws.name}`,
        text: [
          `Hello ${p.name},`,
          '',
          `The webhook endpoint ${ep.url} of ${ws.name} has been disabled: every delivery to it has failed since ${since}.`,
          'It receives no new events while it is disabled. Once the receiver works again, send a test event',
          `(POST /v1/webhooks/${job.e}/test) and switch it back on (PATCH /v1/webhooks/${job.e} with {"enabled": true});`,
          'deliveries that were still pending are then sent.',
        ].join('\n'),
      },
      { workspaceId: job.w, kind: 'notice' },
    );
  }
  return people.length;
}
