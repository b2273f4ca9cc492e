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

export async function recordAudit(trx: Transaction<DB>, ctx: RequestContext, entry: AuditEntry): Promise<void> {
  await trx
    .insertInto('audit_logs')
    .values({
      workspace_id: ctx.workspaceId,
      id: newId(),
      actor_type: ctx.actor.type,
      actor_user_id: ctx.actor.type === 'user' ? ctx.actor.userId : null,
      actor_api_key_id: ctx.actor.type === 'api_key' ? ctx.actor.apiKeyId : null,
      action: entry.action,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      data: JSON.stringify(entry.data ?? {}),
      ip: ctx.ip,
    })
    .execute();
}
