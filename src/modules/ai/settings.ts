// A workspace's AI settings (ai_settings, one row per workspace, made on first write): the
// `features` of GET /v1/ai/config, the models of each tier, the widget's monthly cap, and the
// own provider key (own-key.ts). Two features are settings another module owns, shown and
// changed here as one value with them: `assistant` is the workspace setting `ai.assistant`, and
// `auto_triage` is GET /v1/triage `auto_triage` (docs/decisions.md "AI settings").
import type { Static } from '@sinclair/typebox';
import type { Kysely, Selectable } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { lockSettingsRow } from '../../platform/db/settings-row.js';
import type { AiSettingsTable } from '../../platform/db/tables-ai.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { loadTriageSettings, updateTriage } from '../triage/service.js';
import { updateWorkspace, workspaceSettings } from '../workspace/service.js';
import type { AiFeatures, AiSettings, PatchAiSettingsBody } from './schemas.js';

export type FeaturesView = Static<typeof AiFeatures>;
export type SettingsView = Static<typeof AiSettings>;
export type PatchSettings = Static<typeof PatchAiSettingsBody>;
export type AiRow = Selectable<AiSettingsTable>;

/** The features kept in ai_settings.features (assistant and auto_triage live with their owners). */
export interface StoredFeatures {
  enabled: boolean;
  auto_summarize: boolean;
  widget_answers: boolean;
  tone: string;
  reply_language: string;
  instructions: string;
}

export const DEFAULT_FEATURES: StoredFeatures = {
  enabled: true,
  auto_summarize: false,
  widget_answers: false,
  tone: 'friendly',
  reply_language: 'auto',
  instructions: '',
};

/** The row as stored, or the defaults of a workspace that never changed anything. */
export async function loadAiRow(db: Kysely<DB>, workspaceId: string): Promise<AiRow> {
  const row = await db.selectFrom('ai_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  return (
    row ?? {
      workspace_id: workspaceId,
      features: {},
      model: '',
      fast_model: '',
      widget_model: '',
      widget_monthly_cap_usd: '0',
      own_key_provider: null,
      own_key_sealed: null,
      own_key_base_url: null,
      own_key_last4: null,
      own_key_status: null,
      own_key_error: null,
      updated_at: new Date(0),
    }
  );
}

export function storedFeatures(row: AiRow): StoredFeatures {
  const raw = (typeof row.features === 'string' ? JSON.parse(row.features) : row.features) as Record<string, unknown>;
  const out = { ...DEFAULT_FEATURES };
  for (const key of Object.keys(DEFAULT_FEATURES) as Array<keyof StoredFeatures>) {
    if (typeof raw[key] === typeof DEFAULT_FEATURES[key]) (out as Record<string, unknown>)[key] = raw[key];
  }
  return out;
}

/** Every feature, the two mirrored ones read from their owners. */
export async function loadFeatures(deps: Deps, row: AiRow): Promise<FeaturesView> {
  const [ws, triage] = await Promise.all([
    workspaceSettings(deps, row.workspace_id),
    loadTriageSettings(deps.database.db, row.workspace_id),
  ]);
  const f = storedFeatures(row);
  return {
    enabled: f.enabled,
    auto_triage: triage.auto_triage,
    auto_summarize: f.auto_summarize,
    widget_answers: f.widget_answers,
    assistant: ws?.ai.assistant ?? false,
    tone: f.tone,
    reply_language: f.reply_language,
    instructions: f.instructions,
  };
}

export async function presentSettings(deps: Deps, row: AiRow): Promise<SettingsView> {
  return {
    features: await loadFeatures(deps, row),
    model: row.model,
    fast_model: row.fast_model,
    widget_model: row.widget_model,
    widget_monthly_cap_usd: Number(row.widget_monthly_cap_usd),
  };
}

/** `auto` or a well-formed BCP 47 tag, in its canonical case (en-us → en-US). */
export function canonicalLanguage(tag: string): string | null {
  if (tag === 'auto') return tag;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

const MODEL_FIELDS = ['model', 'fast_model', 'widget_model'] as const;
const STORED_KEYS = ['enabled', 'auto_summarize', 'widget_answers', 'tone', 'reply_language', 'instructions'] as const;

/**
 * PATCH /v1/ai/settings: any subset, each value checked before anything is written (422 with its
 * location, nothing changed). `modelIds`: the ids the workspace may choose (GET /v1/ai/models).
 */
export async function updateSettings(
  deps: Deps,
  ctx: RequestContext,
  input: PatchSettings,
  modelIds: ReadonlySet<string>,
): Promise<SettingsView> {
  const patch = checkPatch(input, modelIds);
  // The mirrored features first, through their owners (each audits and publishes its change).
  if (input.assistant !== undefined)
    await updateWorkspace(deps, ctx, { settings: { ai: { assistant: input.assistant } } });
  if (input.auto_triage !== undefined) await updateTriage(deps, ctx, { auto_triage: input.auto_triage });
  const row = await deps.writer.run(ctx.workspaceId, async (u) => {
    await lockSettingsRow(u, 'ai_settings');
    const before = await loadAiRow(u.trx, ctx.workspaceId);
    const features = { ...storedFeatures(before), ...patch.features };
    const after = {
      features,
      model: patch.model ?? before.model,
      fast_model: patch.fast_model ?? before.fast_model,
      widget_model: patch.widget_model ?? before.widget_model,
      widget_monthly_cap_usd: patch.cap ?? Number(before.widget_monthly_cap_usd),
    };
    const changes = changedKeys(before, after);
    if (changes.length === 0) return before;
    const updated = await u.trx
      .updateTable('ai_settings')
      .set({ ...after, features: JSON.stringify(features), updated_at: new Date() })
      .where('workspace_id', '=', ctx.workspaceId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(u.trx, ctx, {
      action: 'ai_settings.updated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: { changes },
    });
    return updated;
  });
  return presentSettings(deps, row);
}

interface CheckedPatch {
  features: Partial<StoredFeatures>;
  model?: string;
  fast_model?: string;
  widget_model?: string;
  cap?: number;
}

function checkPatch(input: PatchSettings, modelIds: ReadonlySet<string>): CheckedPatch {
  const out: CheckedPatch = { features: {} };
  for (const key of STORED_KEYS) {
    if (input[key] !== undefined) (out.features as Record<string, unknown>)[key] = input[key];
  }
  if (input.tone !== undefined) {
    const tone = input.tone.trim();
    if (tone === '') throw invalid('body.tone', 'must not be blank');
    out.features.tone = tone;
  }
  if (input.reply_language !== undefined) {
    const tag = canonicalLanguage(input.reply_language);
    if (!tag) throw invalid('body.reply_language', 'must be auto or a BCP 47 language tag such as en or pt-BR');
    out.features.reply_language = tag;
  }
  for (const field of MODEL_FIELDS) {
    const id = input[field];
    if (id === undefined) continue;
    if (id !== '' && !modelIds.has(id)) {
      throw invalid(`body.${field}`, 'must be "" (the instance default) or a model id from GET /v1/ai/models');
    }
    out[field] = id;
  }
  if (input.widget_monthly_cap_usd !== undefined) out.cap = Math.round(input.widget_monthly_cap_usd * 100) / 100;
  return out;
}

/** The names of what a PATCH changed (features by their own key), for the audit entry. */
function changedKeys(
  before: AiRow,
  after: {
    features: StoredFeatures;
    model: string;
    fast_model: string;
    widget_model: string;
    widget_monthly_cap_usd: number;
  },
): string[] {
  const was = storedFeatures(before);
  const changed: string[] = STORED_KEYS.filter((k) => was[k] !== after.features[k]);
  for (const field of MODEL_FIELDS) if (before[field] !== after[field]) changed.push(field);
  if (Number(before.widget_monthly_cap_usd) !== after.widget_monthly_cap_usd) changed.push('widget_monthly_cap_usd');
  return changed;
}
