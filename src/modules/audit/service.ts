// The audit log: who changed what. Written in the same transaction as the change.
import type { Static } from '@sinclair/typebox';
import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import {
  type Actor,
  actingContactId,
  actingUserId,
  type RequestContext,
  unknownActor,
} from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import type { AuditLog, ListAuditLogsQuery } from './schemas.js';

export type AuditLogView = Static<typeof AuditLog>;

export interface AuditEntry {
  action: string;
  entityType: string;
  entityId: string | null;
  data?: Record<string, unknown>;
}

/** Who acted, in which workspace: a request's context, or a person or the system outside one. */
export interface AuditContext {
  workspaceId: string;
  actor: Actor;
  ip: string | null;
}

/**
 * An entry's actor_type: the audit log knows user, api_key and system. Everything but a person's
 * session and a key is the system; the contact who acted (a visitor, a customer) is kept in
 * actor_contact_id, the person an AI acted for in actor_user_id.
 */
export function auditActorType(actor: Actor): 'user' | 'api_key' | 'system' {
  switch (actor.kind) {
    case 'member':
      return 'user';
    case 'api_key':
      return 'api_key';
    case 'system':
    case 'automation':
    case 'visitor':
    case 'customer':
    case 'ai':
      return 'system';
    default:
      return unknownActor(actor);
  }
}

export async function recordAudit(trx: Transaction<DB>, ctx: AuditContext, entry: AuditEntry): Promise<void> {
  const { actor } = ctx;
  await trx
    .insertInto('audit_logs')
    .values({
      workspace_id: ctx.workspaceId,
      id: newId(),
      actor_type: auditActorType(actor),
      actor_user_id: actingUserId(actor),
      actor_api_key_id: actor.kind === 'api_key' ? actor.apiKeyId : null,
      actor_contact_id: actingContactId(actor),
      action: entry.action,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      data: JSON.stringify(entry.data ?? {}),
      ip: ctx.ip,
    })
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Reading the log: GET /v1/audit-logs, newest first, with filters.

/** Entries of the caller's workspace, newest first, filtered; cursors are bound to the filters. */
export async function listAuditLogs(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListAuditLogsQuery>,
): Promise<Page<AuditLogView>> {
  const limit = q.limit ?? 50;
  const from = q.from === undefined ? null : new Date(q.from);
  const to = q.to === undefined ? null : new Date(q.to);
  if (from && Number.isNaN(from.getTime())) throw invalid('query.from', 'is not a valid time');
  if (to && Number.isNaN(to.getTime())) throw invalid('query.to', 'is not a valid time');
  if (from && to && to.getTime() < from.getTime()) throw invalid('query.to', 'must not be before from');
  const actor = q.actor?.toLowerCase();
  const filters = { action: q.action, actor, entity_type: q.entity_type, from: iso(from), to: iso(to) };
  const list = `audit-logs:${ctx.workspaceId}:${JSON.stringify(filters)}`;
  const after = deps.pager.decode(list, q.cursor, 2);

  let query = deps.database.db
    .selectFrom('audit_logs as a')
    .leftJoin('users as u', 'u.id', 'a.actor_user_id')
    .select([
      'a.id',
      'a.actor_type',
      'a.actor_user_id',
      'a.actor_api_key_id',
      'a.actor_contact_id',
      'a.action',
      'a.entity_type',
      'a.entity_id',
      'a.data',
      'a.ip',
      'a.created_at',
      microsOf('a.created_at').as('created_us'),
      'u.id as u_id',
      'u.name as u_name',
      'u.email as u_email',
      'u.avatar_url as u_avatar_url',
    ])
    .where('a.workspace_id', '=', ctx.workspaceId);
  if (q.action !== undefined) query = query.where('a.action', '=', q.action);
  if (q.entity_type !== undefined) query = query.where('a.entity_type', '=', q.entity_type);
  if (actor !== undefined) {
    query = query.where((eb) => eb.or([eb('a.actor_user_id', '=', actor), eb('a.actor_api_key_id', '=', actor)]));
  }
  if (from) query = query.where('a.created_at', '>=', from);
  if (to) query = query.where('a.created_at', '<', to);
  if (after) query = query.where(createdBefore('a', after));
  const rows = await query
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(
    list,
    rows,
    limit,
    (r) => [r.created_us, r.id],
    (r): AuditLogView => ({
      id: r.id,
      actor: {
        type: r.actor_type as AuditLogView['actor']['type'],
        user: r.u_id ? { id: r.u_id, name: r.u_name!, email: r.u_email!, avatar_url: r.u_avatar_url } : null,
        api_key_id: r.actor_api_key_id,
        ...(r.actor_contact_id !== null ? { contact_id: r.actor_contact_id } : {}),
      },
      action: r.action,
      entity_type: r.entity_type,
      entity_id: r.entity_id,
      data: (r.data ?? {}) as Record<string, unknown>,
      ip: r.ip,
      created_at: iso(r.created_at)!,
    }),
  );
}
