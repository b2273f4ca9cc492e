// Webhook endpoints (the /v1/webhooks routes; docs/webhooks.md): CRUD, the test event, delivery records and
// redelivery. The delivery machinery (dispatcher, attempts, retries, health) is delivery.ts.
//
// The signing secret is `whsec_` + 32 random bytes, shown once in the create response and stored
// sealed with SECRET_KEY (AES-256-GCM, bound to the workspace and endpoint ids).
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId, randomSecret } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { scopeForType } from '../../platform/events/visibility.js';
import type { RequestContext, Scope } from '../../platform/http/context.js';
import { conflict, forbidden, invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { resolvedProblem } from '../../platform/net/http.js';
import { recordAudit } from '../audit/service.js';
import { ALL_EVENTS, EVENT_TYPES, isEventType, TEST_EVENT } from './catalog.js';
import { enqueueDeliveries } from './queue.js';
import type {
  CreateWebhookBody,
  Delivery,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  PatchWebhookBody,
  RotateSecretBody,
  Webhook,
} from './schemas.js';

export type WebhookView = Static<typeof Webhook>;
export type DeliveryView = Static<typeof Delivery>;

/** Endpoints per workspace. */
export const MAX_WEBHOOKS = 20;
export const SECRET_PREFIX = 'whsec_';

export const secretContext = (workspaceId: string, id: string) => `webhook-secret:${workspaceId}:${id}`;

const notFoundWebhook = () => notFound('Webhook not found.');

function webhookQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('webhook_endpoints as w')
    .select([
      'w.id',
      'w.url',
      'w.events',
      'w.description',
      'w.enabled',
      'w.team_ids',
      'w.previous_secret_expires_at',
      'w.created_at',
      'w.updated_at',
      microsOf('w.created_at').as('created_us'),
    ])
    .where('w.workspace_id', '=', workspaceId);
}

type WebhookRow = Awaited<ReturnType<ReturnType<typeof webhookQuery>['executeTakeFirstOrThrow']>>;

export const presentWebhook = (r: WebhookRow): WebhookView => ({
  id: r.id,
  url: r.url,
  events: r.events,
  description: r.description,
  enabled: r.enabled,
  team_ids: [...r.team_ids].sort(),
  // A rotation's overlap that has ended is no longer there to mention.
  previous_secret_expires_at:
    r.previous_secret_expires_at !== null && r.previous_secret_expires_at.getTime() > Date.now()
      ? iso(r.previous_secret_expires_at)
      : null,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

export async function loadWebhook(db: Kysely<DB>, workspaceId: string, id: string): Promise<WebhookView | null> {
  const row = await webhookQuery(db, workspaceId).where('w.id', '=', id).executeTakeFirst();
  return row ? presentWebhook(row) : null;
}

export async function listWebhooks(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListWebhooksQuery>,
): Promise<Page<WebhookView>> {
  const limit = q.limit ?? 50;
  const list = `webhooks:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = webhookQuery(deps.database.db, ctx.workspaceId);
  if (after) query = query.where(createdBefore('w', after));
  const rows = await query
    .orderBy('w.created_at', 'desc')
    .orderBy('w.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], presentWebhook);
}

export async function getWebhook(deps: Deps, ctx: RequestContext, id: string): Promise<WebhookView> {
  if (!isUuid(id)) throw notFoundWebhook();
  const w = await loadWebhook(deps.database.db, ctx.workspaceId, id);
  if (!w) throw notFoundWebhook();
  return w;
}

// ---------------------------------------------------------------------------------------------
// Input rules.

/** 422 at body.url unless the URL is usable: https (or http with private addresses allowed), and
 *  not a local name or a name or address that is not public. */
async function checkUrl(deps: Deps, url: string): Promise<string> {
  const u = url.trim();
  const allow = deps.config.webhookAllowPrivate;
  const problem = await resolvedProblem(u, allow, deps.webhookOptions.resolve);
  if (problem) throw invalid('body.url', problem);
  return u;
}

/** The list as stored: `*` alone, or catalog types in the order given. */
function cleanEvents(events: string[]): string[] {
  if (events.includes(ALL_EVENTS)) return [ALL_EVENTS];
  events.forEach((t, i) => {
    if (!isEventType(t)) throw invalid(`body.events.${i}`, `is not an event type of the catalog: ${t}`);
  });
  return [...new Set(events)];
}

/** Lower-cased ids, each a private team of the workspace (422 otherwise). */
async function checkTeams(trx: Kysely<DB>, workspaceId: string, ids: string[]): Promise<string[]> {
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))].sort();
  if (wanted.length === 0) return wanted;
  const found = await trx
    .selectFrom('teams')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', wanted)
    .where('private', '=', true)
    .execute();
  const known = new Set(found.map((r) => r.id));
  const missing = wanted.filter((i) => !known.has(i));
  if (missing.length > 0) throw invalid('body.team_ids', `not private teams of this workspace: ${missing.join(', ')}`);
  return wanted;
}

/** May an API key with these scopes read events of this type itself? */
function keyMayRead(scopes: Scope[], type: string): boolean {
  if (scopes.includes('realtime')) return true;
  const need = scopeForType(type);
  return scopes.includes(need) || scopes.includes(need.replace(':read', ':write') as Scope);
}

/**
 * An API key may not point an endpoint at events it could not read itself: every subscribed type
 * must be readable with its scopes (`*` needs them all), and private teams are never granted by
 * keys (keys see no private team's records). Admins may do both.
 */
function checkKeyMayRoute(ctx: RequestContext, events: string[], teamIds: string[]): void {
  if (!ctx.scopes) return;
  const types = events.includes(ALL_EVENTS) ? EVENT_TYPES : events;
  const unreadable = types.filter((t) => !keyMayRead(ctx.scopes!, t));
  if (unreadable.length > 0) {
    throw forbidden(
      `An API key can only subscribe to events its scopes can read; missing for ${unreadable.slice(0, 5).join(', ')}` +
        (unreadable.length > 5 ? ', …' : '.'),
    );
  }
  if (teamIds.length > 0) throw forbidden('Only an admin can grant a webhook the events of private teams.');
}

async function lockWebhooks(u: Unit): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhooks:${u.workspaceId}`}, 0))`.execute(u.trx);
}

// ---------------------------------------------------------------------------------------------
// Writes.

export async function createWebhook(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateWebhookBody>,
): Promise<WebhookView & { secret: string }> {
  const events = cleanEvents(input.events);
  checkKeyMayRoute(ctx, events, input.team_ids ?? []);
  const url = await checkUrl(deps, input.url);
  const description = input.description?.trim() || null;
  const id = newId();
  const secret = randomSecret(SECRET_PREFIX);
  const view = await deps.writer.run(ctx.workspaceId, async (u) => {
    await lockWebhooks(u);
    const teamIds = await checkTeams(u.trx, ctx.workspaceId, input.team_ids ?? []);
    const { n } = await u.trx
      .selectFrom('webhook_endpoints')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('workspace_id', '=', ctx.workspaceId)
      .executeTakeFirstOrThrow();
    if (n >= MAX_WEBHOOKS) throw invalid('body', `a workspace has at most ${MAX_WEBHOOKS} webhook endpoints`);
    await u.trx
      .insertInto('webhook_endpoints')
      .values({
        workspace_id: ctx.workspaceId,
        id,
        url,
        events,
        description,
        enabled: input.enabled ?? true,
        team_ids: teamIds,
        secret_enc: deps.secrets.seal(secret, secretContext(ctx.workspaceId, id)),
      })
      .execute();
    const view = (await loadWebhook(u.trx, ctx.workspaceId, id))!;
    u.emit({ type: 'webhook.created', data: { webhook: view } });
    await recordAudit(u.trx, ctx, {
      action: 'webhook.created',
      entityType: 'webhook',
      entityId: id,
      data: { url, events, team_ids: teamIds, enabled: view.enabled },
    });
    return view;
  });
  return { ...view, secret };
}

export async function updateWebhook(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchWebhookBody>,
): Promise<WebhookView> {
  if (!isUuid(id)) throw notFoundWebhook();
  const events = input.events === undefined ? undefined : cleanEvents(input.events);
  // A missing endpoint is a 404 whatever the body; then the URL is resolved, before the
  // transaction, so no lock is held while DNS answers.
  if (input.url !== undefined && !(await endpointExists(deps.database.db, ctx.workspaceId, id))) {
    throw notFoundWebhook();
  }
  const url = input.url === undefined ? undefined : await checkUrl(deps, input.url);
  const { after, resumed } = await deps.writer.run(ctx.workspaceId, async (u) => {
    const locked = await u.trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events', 'description', 'enabled', 'team_ids'])
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!locked) throw notFoundWebhook();
    const teamIds = input.team_ids === undefined ? undefined : await checkTeams(u.trx, ctx.workspaceId, input.team_ids);
    // A key changing where or what an endpoint delivers must be able to read what it would then receive.
    if (url !== undefined || events !== undefined || teamIds !== undefined) {
      checkKeyMayRoute(ctx, events ?? locked.events, teamIds ?? locked.team_ids);
    }
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    if (url !== undefined && url !== locked.url) changes.url = { from: locked.url, to: url };
    if (events !== undefined && JSON.stringify(events) !== JSON.stringify(locked.events)) {
      changes.events = { from: locked.events, to: events };
    }
    const description = input.description === undefined ? undefined : input.description?.trim() || null;
    if (description !== undefined && description !== locked.description) {
      changes.description = { from: locked.description, to: description };
    }
    if (input.enabled !== undefined && input.enabled !== locked.enabled) {
      changes.enabled = { from: locked.enabled, to: input.enabled };
    }
    const beforeTeams = [...locked.team_ids].sort();
    if (teamIds !== undefined && JSON.stringify(teamIds) !== JSON.stringify(beforeTeams)) {
      changes.team_ids = { from: beforeTeams, to: teamIds };
    }
    if (Object.keys(changes).length === 0) {
      return { after: (await loadWebhook(u.trx, ctx.workspaceId, id))!, resumed: false };
    }
    const resumed = changes.enabled !== undefined && input.enabled === true;
    await u.trx
      .updateTable('webhook_endpoints')
      .set({
        ...(changes.url ? { url } : {}),
        ...(changes.events ? { events } : {}),
        ...(changes.description ? { description } : {}),
        ...(changes.enabled ? { enabled: input.enabled } : {}),
        ...(changes.team_ids ? { team_ids: teamIds } : {}),
        // Switched back on: its health starts again from now, and so do the events it receives
        // (none of the paused time; deliveries made before the pause still go out).
        ...(resumed ? { failing_since: null, receives_from: new Date() } : {}),
        updated_at: new Date(),
      })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .execute();
    const after = (await loadWebhook(u.trx, ctx.workspaceId, id))!;
    u.emit({ type: 'webhook.updated', data: { webhook: after, changes: Object.keys(changes) } });
    await recordAudit(u.trx, ctx, { action: 'webhook.updated', entityType: 'webhook', entityId: id, data: changes });
    return { after, resumed };
  });
  // Deliveries that waited while the endpoint was paused go out now.
  if (resumed) await resumePending(deps, ctx.workspaceId, id);
  return after;
}

/**
 * A new signing secret (shown in this answer only). The one it replaces keeps signing deliveries
 * beside it for `previous_secret_hours` (default 24; 0: not at all), a second v1 in SVC-Signature,
 * so a receiver switches without a failed delivery; a secret replaced before that is dropped.
 * Retries of earlier deliveries are signed anew, so they carry the new secret too.
 */
export async function rotateWebhookSecret(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof RotateSecretBody>,
): Promise<WebhookView & { secret: string }> {
  if (!isUuid(id)) throw notFoundWebhook();
  const hours = input.previous_secret_hours ?? 24;
  const secret = randomSecret(SECRET_PREFIX);
  const view = await deps.writer.run(ctx.workspaceId, async (u) => {
    const locked = await u.trx
      .selectFrom('webhook_endpoints')
      .select(['secret_enc'])
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!locked) throw notFoundWebhook();
    const until = hours === 0 ? null : new Date(Date.now() + hours * 3_600_000);
    await u.trx
      .updateTable('webhook_endpoints')
      .set({
        secret_enc: deps.secrets.seal(secret, secretContext(ctx.workspaceId, id)),
        // Sealed for the same endpoint: the ciphertext moves as it is.
        previous_secret_enc: until === null ? null : locked.secret_enc,
        previous_secret_expires_at: until,
        updated_at: new Date(),
      })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .execute();
    const after = (await loadWebhook(u.trx, ctx.workspaceId, id))!;
    u.emit({ type: 'webhook.updated', data: { webhook: after, changes: ['secret'] } });
    await recordAudit(u.trx, ctx, {
      action: 'webhook.secret_rotated',
      entityType: 'webhook',
      entityId: id,
      data: { previous_secret_expires_at: iso(until) },
    });
    return after;
  });
  return { ...view, secret };
}

async function resumePending(deps: Deps, workspaceId: string, endpointId: string): Promise<void> {
  const rows = await deps.database.db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: new Date() })
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  await enqueueDeliveries(
    deps,
    workspaceId,
    rows.map((r) => r.id),
  );
}

export async function deleteWebhook(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFoundWebhook();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('webhook_endpoints')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .returning(['url', 'events'])
      .executeTakeFirst();
    if (!gone) throw notFoundWebhook();
    u.emit({ type: 'webhook.deleted', data: { webhook_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'webhook.deleted',
      entityType: 'webhook',
      entityId: id,
      data: { url: gone.url, events: gone.events },
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Deliveries.

function deliveryQuery(db: Kysely<DB>, workspaceId: string, endpointId: string) {
  return db
    .selectFrom('webhook_deliveries as d')
    .select([
      'd.id',
      'd.event_id',
      'd.event_type',
      'd.status',
      'd.attempts',
      'd.response_status',
      'd.duration_ms',
      'd.error',
      'd.next_attempt_at',
      'd.created_at',
      microsOf('d.created_at').as('created_us'),
    ])
    .where('d.workspace_id', '=', workspaceId)
    .where('d.endpoint_id', '=', endpointId);
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof deliveryQuery>['executeTakeFirstOrThrow']>>;

export const presentDelivery = (r: DeliveryRow): DeliveryView => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status,
  attempts: r.attempts,
  response_status: r.response_status,
  duration_ms: r.duration_ms,
  error: r.error,
  next_attempt_at: iso(r.next_attempt_at),
  created_at: iso(r.created_at)!,
});

async function endpointExists(db: Kysely<DB>, workspaceId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/** An endpoint's deliveries, newest first (optionally of one status). */
export async function listDeliveries(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  q: Static<typeof ListDeliveriesQuery>,
): Promise<Page<DeliveryView>> {
  const limit = q.limit ?? 50;
  const list = `webhook-deliveries:${ctx.workspaceId}:${id.toLowerCase()}:${q.status ?? ''}`;
  // The cursor first (a 422 for a bad one, like every list), then the endpoint.
  const after = deps.pager.decode(list, q.cursor, 2);
  if (!(await endpointExists(deps.database.db, ctx.workspaceId, id))) throw notFoundWebhook();
  let query = deliveryQuery(deps.database.db, ctx.workspaceId, id);
  if (q.status) query = query.where('d.status', '=', q.status);
  if (after) query = query.where(createdBefore('d', after));
  const rows = await query
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], presentDelivery);
}

/** One delivery record with the body it sends (GET /v1/webhooks/{id}/deliveries/{delivery_id}). */
export async function getDelivery(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  deliveryId: string,
): Promise<DeliveryView & { body: string }> {
  if (!isUuid(id) || !isUuid(deliveryId)) throw notFound('Delivery not found.');
  const row = await deliveryQuery(deps.database.db, ctx.workspaceId, id)
    .select('d.payload')
    .where('d.id', '=', deliveryId.toLowerCase())
    .executeTakeFirst();
  if (!row) throw notFound('Delivery not found.');
  return { ...presentDelivery(row), body: row.payload };
}

interface NewDelivery {
  event_id: string;
  event_type: string;
  payload: string;
  event_at: Date;
}

/** A manual delivery (a test, a redelivery): its own row, sent even while the endpoint is paused. */
async function createManualDelivery(
  deps: Deps,
  workspaceId: string,
  endpointId: string,
  d: NewDelivery,
): Promise<DeliveryView> {
  const id = newId();
  await deps.database.db
    .insertInto('webhook_deliveries')
    .values({
      workspace_id: workspaceId,
      id,
      endpoint_id: endpointId,
      event_id: d.event_id,
      event_type: d.event_type,
      payload: d.payload,
      manual: true,
      event_at: d.event_at,
      next_attempt_at: new Date(),
    })
    .execute();
  // The answer (202) is the delivery as it was accepted: read before its job is queued, which a
  // worker may run before this request has answered.
  const row = await deliveryQuery(deps.database.db, workspaceId, endpointId)
    .where('d.id', '=', id)
    .executeTakeFirstOrThrow();
  await enqueueDeliveries(deps, workspaceId, [id]);
  return presentDelivery(row);
}

/**
 * POST /v1/webhooks/{id}/test: a `webhook.test` event to this endpoint only. It is not an event
 * of the workspace's stream: not stored, not replayed, and its seq is 0.
 */
export async function testWebhook(deps: Deps, ctx: RequestContext, id: string): Promise<DeliveryView> {
  if (!isUuid(id)) throw notFoundWebhook();
  const webhook = await loadWebhook(deps.database.db, ctx.workspaceId, id);
  if (!webhook) throw notFoundWebhook();
  const now = new Date();
  const envelope = {
    id: newId(),
    seq: 0,
    workspace_id: ctx.workspaceId,
    type: TEST_EVENT,
    visibility: 'agents',
    data: { webhook_id: webhook.id, url: webhook.url },
    occurred_at: now.toISOString(),
  };
  return createManualDelivery(deps, ctx.workspaceId, webhook.id, {
    event_id: envelope.id,
    event_type: TEST_EVENT,
    payload: JSON.stringify(envelope),
    event_at: now,
  });
}

/**
 * POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver: the same event (same body, same
 * SVC-Event-Id) once more, as a new delivery record with a fresh schedule. A delivery still
 * pending is already going to be sent: 409.
 */
export async function redeliver(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  deliveryId: string,
): Promise<DeliveryView> {
  if (!isUuid(id) || !isUuid(deliveryId)) throw notFound('Delivery not found.');
  if (!(await endpointExists(deps.database.db, ctx.workspaceId, id))) throw notFoundWebhook();
  const original = await deps.database.db
    .selectFrom('webhook_deliveries')
    .select(['event_id', 'event_type', 'payload', 'status'])
    .where('workspace_id', '=', ctx.workspaceId)
    .where('endpoint_id', '=', id)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  if (!original) throw notFound('Delivery not found.');
  if (original.status === 'pending') throw conflict('This delivery is still pending: it will be attempted again.');
  return createManualDelivery(deps, ctx.workspaceId, id, {
    event_id: original.event_id,
    event_type: original.event_type,
    payload: original.payload,
    event_at: new Date(),
  });
}
