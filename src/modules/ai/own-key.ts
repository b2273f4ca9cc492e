// A workspace's own provider key (PUT/DELETE /v1/ai/key): sealed with the secret box under the
// context `ai-key:<workspace id>` (a sealed value copied to another workspace does not open),
// shown by its last 4 characters only, never returned or logged. Its calls cost 0. A key the
// provider refuses is turned off (status failed, with the reason) and the workspace's owners and
// admins get one ai_key_failed notice; calls then use the instance's provider when it has one
// (docs/decisions.md "AI own key").
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { lockSettingsRow } from '../../platform/db/settings-row.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { resolvedProblem } from '../../platform/net/http.js';
import { recordAudit } from '../audit/service.js';
import { notify } from '../notifications/service.js';
import type { ProviderKind } from './providers/types.js';
import type { AiOwnKey, PutAiKeyBody } from './schemas.js';
import type { AiRow } from './settings.js';

export type OwnKeyView = Static<typeof AiOwnKey>;

/** What a call needs of an active own key. */
export interface OpenKey {
  kind: ProviderKind;
  apiKey: string;
  baseUrl: string | null;
  /** The stored value: a refusal turns off this key, not one put in its place meanwhile. */
  sealed: string;
}

const sealContext = (workspaceId: string) => `ai-key:${workspaceId}`;

export function ownKeyView(row: AiRow): OwnKeyView | null {
  if (!row.own_key_provider || !row.own_key_status) return null;
  return {
    provider: row.own_key_provider,
    base_url: row.own_key_base_url,
    last4: row.own_key_last4 ?? '',
    status: row.own_key_status,
    error: row.own_key_error,
  };
}

/** The active own key, opened; null when there is none, it failed, or it does not open. */
export function openOwnKey(deps: Deps, row: AiRow): OpenKey | null {
  if (row.own_key_status !== 'active' || !row.own_key_provider || !row.own_key_sealed) return null;
  const apiKey = deps.secrets.open(row.own_key_sealed, sealContext(row.workspace_id));
  if (!apiKey) return null;
  return { kind: row.own_key_provider, apiKey, baseUrl: row.own_key_base_url, sealed: row.own_key_sealed };
}

/**
 * An http(s) URL without credentials; a loopback or private address only where the instance
 * allows private targets (WEBHOOK_ALLOW_PRIVATE: self-hosting, tests), as for webhooks.
 */
async function checkBaseUrl(deps: Deps, raw: string): Promise<string> {
  const url = raw.trim();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('body.base_url', 'is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalid('body.base_url', 'must be an http or https URL');
  // The address rules of an https URL, whatever the scheme given.
  const problem = await resolvedProblem(
    `https://${url.slice(parsed.protocol.length + 2)}`,
    deps.config.webhookAllowPrivate,
    deps.webhookOptions.resolve,
  );
  if (problem) throw invalid('body.base_url', problem);
  return url.replace(/\/+$/, '');
}

/** PUT /v1/ai/key: stores (or replaces) the key, active. Audit ai_key.updated (provider, last 4). */
export async function putOwnKey(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof PutAiKeyBody>,
): Promise<OwnKeyView> {
  const apiKey = input.api_key.trim();
  if (apiKey.length < 8) throw invalid('body.api_key', 'must be at least 8 characters');
  if (/\s/.test(apiKey)) throw invalid('body.api_key', 'must not contain spaces or line breaks');
  const baseUrl = input.base_url ? await checkBaseUrl(deps, input.base_url) : null;
  // The last 4 characters, not UTF-16 units: half a surrogate pair is not valid JSON (audit data).
  const last4 = Array.from(apiKey).slice(-4).join('');
  return deps.writer.run(ctx.workspaceId, async (u) => {
    await lockSettingsRow(u, 'ai_settings');
    await u.trx
      .updateTable('ai_settings')
      .set({
        own_key_provider: input.provider,
        own_key_sealed: deps.secrets.seal(apiKey, sealContext(ctx.workspaceId)),
        own_key_base_url: baseUrl,
        own_key_last4: last4,
        own_key_status: 'active',
        own_key_error: null,
        updated_at: new Date(),
      })
      .where('workspace_id', '=', ctx.workspaceId)
      .execute();
    await recordAudit(u.trx, ctx, {
      action: 'ai_key.updated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: { provider: input.provider, base_url: baseUrl, last4 },
    });
    return { provider: input.provider, base_url: baseUrl, last4, status: 'active' as const, error: null };
  });
}

/** DELETE /v1/ai/key: forgets the key (idempotent). Audit ai_key.deleted when there was one. */
export async function deleteOwnKey(deps: Deps, ctx: RequestContext): Promise<void> {
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .updateTable('ai_settings')
      .set({
        own_key_provider: null,
        own_key_sealed: null,
        own_key_base_url: null,
        own_key_last4: null,
        own_key_status: null,
        own_key_error: null,
        updated_at: new Date(),
      })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('own_key_sealed', 'is not', null)
      .returning('own_key_provider')
      .executeTakeFirst();
    if (!gone) return;
    await recordAudit(u.trx, ctx, {
      action: 'ai_key.deleted',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: { provider: gone.own_key_provider },
    });
  });
}

/**
 * The provider refused the key: status failed with the reason, and one ai_key_failed notice to
 * each owner and admin. Only the call that turns an active key off notifies (a key replaced
 * meanwhile, or already failed, is left alone): concurrent refusals notify once.
 */
export async function failOwnKey(deps: Deps, workspaceId: string, sealed: string, reason: string): Promise<void> {
  const why = reason.slice(0, 500);
  await deps.writer.run(workspaceId, async (u) => {
    const turned = await u.trx
      .updateTable('ai_settings')
      .set({ own_key_status: 'failed', own_key_error: why, updated_at: new Date() })
      .where('workspace_id', '=', workspaceId)
      .where('own_key_status', '=', 'active')
      .where('own_key_sealed', '=', sealed)
      .returning('own_key_provider')
      .executeTakeFirst();
    if (!turned) return;
    const admins = await u.trx
      .selectFrom('members')
      .select('user_id')
      .where('workspace_id', '=', workspaceId)
      .where('role', 'in', ['owner', 'admin'])
      .execute();
    for (const a of admins) {
      await notify(u, {
        userId: a.user_id,
        type: 'ai_key_failed',
        ticket: null,
        data: { provider: turned.own_key_provider, reason: why },
      });
    }
  });
}
