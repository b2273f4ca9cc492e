// The audit log: who changed what. Written in the same transaction as the change.
import type { Transaction } from 'kysely';
import { newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';

export interface AuditEntry {
  action: string;
  entityType: string;
  entityId: string | null;
  data?: Record<string, unknown>;
}

/** Who acted, in which workspace: a request's context, or a person/the system outside one. */
export type AuditWho =
  | RequestContext
  | { workspaceId: string; actor: { type: 'system' } | { type: 'user'; userId: string }; ip: string | null };

export async function recordAudit(trx: Transaction<DB>, who: AuditWho, entry: AuditEntry): Promise<void> {
  const actor = who.actor;
  await trx
    .insertInto('audit_logs')
    .values({
      workspace_id: who.workspaceId,
      id: newId(),
      actor_type: actor.type,
      actor_user_id: actor.type === 'user' ? actor.userId : null,
      actor_api_key_id: actor.type === 'api_key' ? actor.apiKeyId : null,
      action: entry.action,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      data: JSON.stringify(entry.data ?? {}),
      ip: who.ip,
    })
    .execute();
}
