// Which provider and models a workspace's AI calls use, and what GET /v1/ai/config and GET
// /v1/ai/models show of it (docs/ai.md). A provider is available when the workspace has an active
// own key, or the instance has one (AI_PROVIDER); `enabled` also needs features.enabled on.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import { ApiError } from '../../platform/http/errors.js';
import {
  type CatalogModel,
  catalogFor,
  FEATURE_KEYS,
  findModel,
  type Price,
  roundUsd,
  type Tier,
  TYPICAL_CALL,
  TYPICAL_CHARGE_USD,
  tokensUsd,
  typicalReplyUsd,
  VENDOR_DEFAULTS,
} from './catalog.js';
import { type OpenKey, openOwnKey, ownKeyView } from './own-key.js';
import type { ProviderKind } from './providers/types.js';
import type { AiConfig, AiModel, AiModels } from './schemas.js';
import { type AiRow, loadAiRow, loadFeatures, storedFeatures } from './settings.js';
import { markupOf } from './spend.js';

export const ASSISTANT_NAME = 'Ollie';

/** The provider a workspace's calls go to. */
export interface Target {
  source: 'instance' | 'own_key';
  kind: ProviderKind;
  apiKey: string;
  baseUrl: string | null;
  /** The own key (source own_key). */
  key: OpenKey | null;
}

/** Everything a call or the config needs to know about a workspace's AI, from one row. */
export interface WorkspaceAi {
  row: AiRow;
  /** Null: no provider available (no instance provider, no active own key). */
  target: Target | null;
  /** features.enabled (the workspace's switch). */
  switchedOn: boolean;
  /** The models the workspace may choose from (GET /v1/ai/models `data`). */
  models: CatalogModel[];
  /** The model of each tier: the workspace's choice, else the instance's, else the vendor's. */
  tiers: Record<Tier, string | null>;
}

function targetOf(deps: Deps, row: AiRow): Target | null {
  const key = openOwnKey(deps, row);
  if (key) return { source: 'own_key', kind: key.kind, apiKey: key.apiKey, baseUrl: key.baseUrl, key };
  const ai = deps.config.ai;
  if (!ai.provider) return null;
  return { source: 'instance', kind: ai.provider, apiKey: ai.apiKey ?? '', baseUrl: ai.baseUrl, key: null };
}

/** Catalog entries of the provider, plus AI_MODEL and AI_FAST_MODEL (unpriced) when not in it. */
function modelsOf(deps: Deps, target: Target): CatalogModel[] {
  const ai = deps.config.ai;
  if (target.source !== 'instance') return catalogFor(target.kind, target.baseUrl);
  const list = catalogFor(target.kind, target.baseUrl, [ai.model, ai.fastModel]);
  const extra: CatalogModel[] = [];
  for (const id of [ai.model, ai.fastModel]) {
    if (!id || list.some((m) => m.id === id) || extra.some((m) => m.id === id)) continue;
    const known = findModel(id);
    extra.push(
      known ? { ...known, id } : { id, name: id, vendor: target.kind, context_length: null, usd_per_mtok: null },
    );
  }
  return [...extra, ...list];
}

function tiersOf(deps: Deps, row: AiRow, target: Target | null, models: CatalogModel[]): WorkspaceAi['tiers'] {
  if (!target) return { default: null, fast: null, widget: null };
  const vendor = VENDOR_DEFAULTS[target.kind];
  const ai = deps.config.ai;
  const base =
    target.source === 'instance'
      ? { default: ai.model ?? vendor.default, fast: ai.fastModel ?? ai.model ?? vendor.fast }
      : vendor;
  // A choice made for another provider (the own key changed since) falls back to the default.
  const chosen = (id: string) => (id !== '' && models.some((m) => m.id === id) ? id : null);
  const model = chosen(row.model) ?? base.default;
  return { default: model, fast: chosen(row.fast_model) ?? base.fast, widget: chosen(row.widget_model) ?? model };
}

export async function resolveAi(deps: Deps, workspaceId: string): Promise<WorkspaceAi> {
  const row = await loadAiRow(deps.database.db, workspaceId);
  const target = targetOf(deps, row);
  const models = target ? modelsOf(deps, target) : [];
  return { row, target, switchedOn: storedFeatures(row).enabled, models, tiers: tiersOf(deps, row, target, models) };
}

/** A workspace whose AI calls may go ahead (requireAi's answer). */
export type ReadyAi = WorkspaceAi & { target: Target };

export const aiDisabled = () =>
  new ApiError(
    'ai_disabled',
    'AI is not available in this workspace: no AI provider is configured, or AI is turned off.',
  );

/**
 * The gate of every AI feature route: 404 ai_disabled without a provider, or with AI turned off in
 * the workspace. `evenWhenOff`: the settings routes, which must work while AI is switched off (to
 * switch it on again), need a provider only.
 */
export async function requireAi(
  deps: Deps,
  workspaceId: string,
  opts: { evenWhenOff?: boolean } = {},
): Promise<ReadyAi> {
  const ws = await resolveAi(deps, workspaceId);
  if (!ws.target || (!ws.switchedOn && !opts.evenWhenOff)) throw aiDisabled();
  return ws as ReadyAi;
}

/** The price a call on `model` is charged at: null on an own key, or when the catalog has none. */
export function priceFor(target: Target, model: string | null): Price | null {
  if (target.source === 'own_key' || !model) return null;
  return findModel(model)?.usd_per_mtok ?? null;
}

export function modelEntry(m: CatalogModel, priced: boolean): Static<typeof AiModel> {
  const price = priced ? m.usd_per_mtok : null;
  return {
    id: m.id,
    name: m.name,
    vendor: m.vendor,
    context_length: m.context_length,
    usd_per_mtok: price ? { ...price } : null,
    typical_reply_usd: typicalReplyUsd(price),
  };
}

export async function getModels(deps: Deps, workspaceId: string): Promise<Static<typeof AiModels>> {
  const ws = await requireAi(deps, workspaceId, { evenWhenOff: true });
  const priced = ws.target.source === 'instance';
  return { data: ws.models.map((m) => modelEntry(m, priced)), default: ws.tiers.default, fast: ws.tiers.fast };
}

/**
 * A typical call of each feature, as a member will be charged for it: at the model's price where
 * known (times the hosted offering's markup, 1.5: what the AI balance is charged; the list price
 * self-hosted), rule 1's charge where not (no markup), 0 on an own key. docs/billing.md.
 */
function costsOf(deps: Deps, ws: WorkspaceAi): Record<AiFeatureKey, number> {
  const costs = {} as Record<AiFeatureKey, number>;
  const markup = markupOf(deps);
  for (const feature of FEATURE_KEYS) {
    const typical = TYPICAL_CALL[feature];
    const price = ws.target ? priceFor(ws.target, ws.tiers[typical.tier]) : null;
    if (ws.target?.source === 'own_key') costs[feature] = 0;
    else
      costs[feature] = price
        ? roundUsd(tokensUsd(price, typical.input, typical.output) * markup)
        : TYPICAL_CHARGE_USD[feature];
  }
  return costs;
}

export async function getConfig(deps: Deps, workspaceId: string): Promise<Static<typeof AiConfig>> {
  const ws = await resolveAi(deps, workspaceId);
  const features = await loadFeatures(deps, ws.row);
  return {
    enabled: ws.target !== null && features.enabled,
    provider: ws.target?.kind ?? null,
    models: { default: ws.tiers.default, fast: ws.tiers.fast },
    embeddings: ws.target !== null && deps.config.ai.embeddings !== 'off',
    features,
    costs: costsOf(deps, ws),
    metered: ws.target?.source === 'instance',
    assistant_name: ASSISTANT_NAME,
    decisions: await deps.ai.triageEngine(deps, workspaceId),
    own_key: ownKeyView(ws.row),
  };
}
