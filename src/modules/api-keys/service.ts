// API keys: `svc_live_` + 32 random bytes; only a hash is stored; shown once.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { isUuid, newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { CredentialResolver } from '../../platform/http/auth.js';
import { type RequestContext, SCOPES, type Scope } from '../../platform/http/context.js';
import { forbidden, invalid, notFound } from '../../platform/http/errors.js';
import type { Page, PageQueryInput } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import { publishControl } from '../members/control.js';
import type { ApiKey, CreateApiKeyBody } from './schemas.js';

export type ApiKeyView = Static<typeof ApiKey>;

const LAST_USED_RESOLUTION_MS = 60_000;

function baseQuery(deps: Deps, workspaceId: string) {
  return deps.database.db
    .selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.created_by')
    .select([
      'k.id',
      'k.name',
      'k.prefix',
      'k.scopes',
      'k.expires_at',
      'k.last_used_at',
      'k.created_at',
      microsOf('k.created_at').as('created_us'),
      'u.id as u_id',
      'u.name as u_name',
      'u.email as u_email',
      'u.avatar_url as u_avatar_url',
    ])
    .where('k.workspace_id', '=', workspaceId);
}

type Row = Awaited<ReturnType<ReturnType<typeof baseQuery>['executeTakeFirstOrThrow']>>;

const present = (r: Row): ApiKeyView => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes as Scope[],
  created_by: r.u_id ? { id: r.u_id, name: r.u_name!, email: r.u_email!, avatar_url: r.u_avatar_url } : null,
  expires_at: iso(r.expires_at),
  last_used_at: iso(r.last_used_at),
  created_at: iso(r.created_at)!,
});

export async function listApiKeys(deps: Deps, ctx: RequestContext, q: PageQueryInput): Promise<Page<ApiKeyView>> {
  const limit = q.limit ?? 50;
  const list = `api-keys:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = baseQuery(deps, ctx.workspaceId);
  if (after) query = query.where(createdBefore('k', after));
  const rows = await query
    .orderBy('k.created_at', 'desc')
    .orderBy('k.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present);
}

export async function createApiKey(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateApiKeyBody>,
): Promise<ApiKeyView & { key: string }> {
  const scopes = input.scopes as Scope[];
  // A key can hand out no more than it holds itself.
  if (ctx.scopes && scopes.some((s) => !ctx.scopes!.includes(s))) {
    throw forbidden('An API key can only create keys with scopes it has itself.');
  }
  let expiresAt: Date | null = null;
  if (input.expires_at !== undefined) {
    expiresAt = new Date(input.expires_at);
    if (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= Date.now()) {
      throw invalid('body.expires_at', 'must be a time in the future');
    }
  }
  const name = input.name.trim();
  if (name === '') throw invalid('body.name', 'must not be blank');
  const secret = randomSecret('svc_live_');
  const id = newId();
  const createdBy = ctx.actor.kind === 'member' ? ctx.actor.userId : ctx.actor.createdBy;
  await deps.writer.run(ctx.workspaceId, async (u) => {
    await u.trx
      .insertInto('api_keys')
      .values({
        workspace_id: ctx.workspaceId,
        id,
        name,
        prefix: secret.slice(0, 'svc_live_'.length + 6),
        key_hash: hashSecret(secret),
        scopes: SCOPES.filter((s) => scopes.includes(s)),
        created_by: createdBy,
        expires_at: expiresAt,
      })
      .execute();
    await recordAudit(u.trx, ctx, {
      action: 'api_key.created',
      entityType: 'api_key',
      entityId: id,
      data: { name, scopes },
    });
  });
  const row = await baseQuery(deps, ctx.workspaceId).where('k.id', '=', id).executeTakeFirstOrThrow();
  return { ...present(row), key: secret };
}

export async function deleteApiKey(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('API key not found.');
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('api_keys')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .returning(['id', 'name'])
      .executeTakeFirst();
    if (!gone) throw notFound('API key not found.');
    await recordAudit(u.trx, ctx, {
      action: 'api_key.deleted',
      entityType: 'api_key',
      entityId: id,
      data: { name: gone.name },
    });
  });
  // This process stops knowing it before answering; the others on the notice, which also
  // closes its realtime sockets on every gateway and refuses its tokens from now on.
  deps.knownKeys.forgetKey(id.toLowerCase());
  await publishControl(deps, { type: 'api_key.deleted', workspace_id: ctx.workspaceId, api_key_id: id.toLowerCase() });
}

/**
 * An API key secret → its context. Unknown, deleted or expired keys give null. A key seen in
 * the last half minute is not read again (known-keys.ts says why that still revokes at once).
 */
export function apiKeyResolver(deps: Deps): CredentialResolver['apiKey'] {
  const known = deps.knownKeys;
  return async (secret, ip) => {
    if (!/^svc_live_[A-Za-z0-9_-]{43}$/.test(secret)) return null;
    const keyHash = hashSecret(secret);
    let k = known.get(keyHash);
    if (!k) {
      const generation = known.begin();
      const row = await deps.database.db
        .selectFrom('api_keys')
        .select(['workspace_id', 'id', 'scopes', 'created_by', 'expires_at', 'last_used_at'])
        .where('key_hash', '=', keyHash)
        .executeTakeFirst();
      if (!row) return null;
      k = {
        workspaceId: row.workspace_id,
        id: row.id,
        scopes: row.scopes,
        createdBy: row.created_by,
        expiresAt: row.expires_at,
        lastUsedAt: row.last_used_at,
      };
      known.remember(keyHash, k, generation);
    }
    const now = Date.now();
    if (k.expiresAt && k.expiresAt.getTime() <= now) return null;
    if (!k.lastUsedAt || now - k.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Recorded to the minute, off the request's path.
      k.lastUsedAt = new Date(now);
      deps.database.db
        .updateTable('api_keys')
        .set({ last_used_at: k.lastUsedAt })
        .where('workspace_id', '=', k.workspaceId)
        .where('id', '=', k.id)
        .execute()
        .catch(() => {});
    }
    return {
      workspaceId: k.workspaceId,
      actor: { kind: 'api_key', apiKeyId: k.id, createdBy: k.createdBy },
      role: null,
      scopes: k.scopes as Scope[],
      teams: [],
      ip,
    };
  };
}
