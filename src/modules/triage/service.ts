// Triage settings: stored here, read by the AI issue's triage (which fields it may set on its
// own, the confidence threshold, whether to assign afterwards). `engine` and `available`
// describe the decision engine this instance has: the AI issue registers its own resolver.
// Until then a configured language model provider shows as the `llm` engine, configured but not
// connected (nothing here has ever reached it), so triage is not available.
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { lockSettingsRow } from '../../platform/db/settings-row.js';
import type { RequestContext } from '../../platform/http/context.js';
import { recordAudit } from '../audit/service.js';
import type { PatchTriageBody, TriageEngine, TriageField, TriageSettings } from './schemas.js';

export type TriageSettingsView = Static<typeof TriageSettings>;
export type TriageEngineView = Static<typeof TriageEngine>;
type Field = Static<typeof TriageField>;

export const DEFAULT_TRIAGE = {
  auto_triage: false,
  fields: ['priority', 'severity', 'labels'] as Field[],
  assign_after_triage: false,
  threshold: 0.7,
};

const FIELD_ORDER: Field[] = ['priority', 'severity', 'labels', 'team'];

/**
 * The engine from the configuration alone: a language model provider, or none. `connected` says
 * that this instance has reached the engine, and nothing here contacts it yet (docs/decisions.md
 * "Triage engine"): false until the AI issue's resolver verifies it.
 */
export function configuredEngine(deps: Deps): TriageEngineView {
  const ai = deps.config.ai;
  if (ai.provider) return { provider: 'llm', model: ai.fastModel ?? ai.model ?? '', connected: false };
  return { provider: 'none', model: '', connected: false };
}

export interface StoredTriage {
  auto_triage: boolean;
  fields: Field[];
  assign_after_triage: boolean;
  threshold: number;
}

/** The stored settings (defaults when never changed). */
export async function loadTriageSettings(db: Kysely<DB>, workspaceId: string): Promise<StoredTriage> {
  const row = await db
    .selectFrom('triage_settings')
    .select(['auto_triage', 'fields', 'assign_after_triage', 'threshold'])
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (!row) return { ...DEFAULT_TRIAGE, fields: [...DEFAULT_TRIAGE.fields] };
  const fields = (typeof row.fields === 'string' ? JSON.parse(row.fields) : row.fields) as Field[];
  return {
    auto_triage: row.auto_triage,
    fields,
    assign_after_triage: row.assign_after_triage,
    threshold: Number(row.threshold),
  };
}

/**
 * The onboarding step setup_triage (registered in runtime.ts): triage is configured when automatic
 * triage is on, or the workspace's settings differ from the defaults (fields, threshold or
 * assign_after_triage changed). Read live, so settings put back to the defaults undo it.
 */
export async function triageConfigured(db: Kysely<DB>, workspaceId: string): Promise<boolean> {
  const s = await loadTriageSettings(db, workspaceId);
  return (
    s.auto_triage ||
    s.assign_after_triage !== DEFAULT_TRIAGE.assign_after_triage ||
    s.threshold !== DEFAULT_TRIAGE.threshold ||
    s.fields.join() !== DEFAULT_TRIAGE.fields.join()
  );
}

async function present(deps: Deps, workspaceId: string, s: StoredTriage): Promise<TriageSettingsView> {
  const engine = await deps.ai.triageEngine(deps, workspaceId);
  return { ...s, engine, available: engine.provider !== 'none' && engine.connected };
}

export async function getTriage(deps: Deps, ctx: RequestContext): Promise<TriageSettingsView> {
  return present(deps, ctx.workspaceId, await loadTriageSettings(deps.database.db, ctx.workspaceId));
}

/** PATCH /v1/triage: any subset. Audit: triage.updated with what changed. */
export async function updateTriage(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof PatchTriageBody>,
): Promise<TriageSettingsView> {
  // The engine is read after the commit: the embedded database runs one transaction at a time.
  const stored = await deps.writer.run(ctx.workspaceId, async (u) => {
    await lockSettingsRow(u, 'triage_settings');
    const before = await loadTriageSettings(u.trx, ctx.workspaceId);
    const after: StoredTriage = {
      auto_triage: input.auto_triage ?? before.auto_triage,
      // Stored in a fixed order, so the same set reads back the same.
      fields: input.fields === undefined ? before.fields : FIELD_ORDER.filter((f) => input.fields!.includes(f)),
      assign_after_triage: input.assign_after_triage ?? before.assign_after_triage,
      threshold: input.threshold ?? before.threshold,
    };
    const changed = (Object.keys(after) as Array<keyof StoredTriage>).filter(
      (k) => JSON.stringify(after[k]) !== JSON.stringify(before[k]),
    );
    if (changed.length === 0) return before;
    await u.trx
      .updateTable('triage_settings')
      .set({ ...after, fields: JSON.stringify(after.fields), updated_at: new Date() })
      .where('workspace_id', '=', ctx.workspaceId)
      .execute();
    await recordAudit(u.trx, ctx, {
      action: 'triage.updated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: {
        changes: changed,
        from: Object.fromEntries(changed.map((k) => [k, before[k]])),
        to: Object.fromEntries(changed.map((k) => [k, after[k]])),
      },
    });
    return after;
  });
  return present(deps, ctx.workspaceId, stored);
}
