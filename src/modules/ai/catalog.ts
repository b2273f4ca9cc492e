// The model catalog (GET /v1/ai/models) and what a call costs.
//
// Prices: models.json, one data file, US dollars per million tokens at the vendors' list prices
// (standard tier, no batch, cache or long-prompt rates) as published on
// https://developers.openai.com/api/docs/pricing and
// https://platform.claude.com/docs/en/about-claude/pricing; `checked` in the file says when they
// were last copied (2026-11-28). Models in preview, retired or past their announced end of life
// (claude-sonnet-4-5: 2026-11-30) are left out. To update: edit models.json (add a model, change a price) and
// restart; nothing else names a model. Open models served by Ollama, vLLM or llama.cpp cost what
// the operator's hardware costs: their price is null, and a call on them is charged the typical
// charge of its feature (interface.md AI rule 1).
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import data from './models.json' with { type: 'json' };
import type { ProviderKind } from './providers/types.js';

export interface Price {
  input: number;
  output: number;
}

export interface CatalogModel {
  id: string;
  name: string;
  vendor: string;
  context_length: number | null;
  usd_per_mtok: Price | null;
}

/** Which model a call uses (run.ts ModelTier): default, fast or widget. */
export type Tier = 'default' | 'fast' | 'widget';

export const CATALOG: readonly CatalogModel[] = data.models;

/** The vendor's default and fast model, used when neither the workspace nor AI_MODEL names one. */
export const VENDOR_DEFAULTS: Record<ProviderKind, { default: string; fast: string }> = data.defaults;

/** Interface.md AI rule 1: the charge of a call whose real cost is unknown. */
export const TYPICAL_CHARGE_USD: Record<AiFeatureKey, number> = {
  draft_reply: 0.03,
  summarize: 0.01,
  copilot: 0.02,
  triage: 0.01,
  rewrite: 0.01,
  translate: 0.01,
  kb_draft: 0.05,
  decide: 0,
  answer_check: 0,
  answer: 0,
  answer_email: 0,
  playground: 0,
  // interface.md "Assistant": a model turn's typical charge.
  assistant: 0.02,
};

/**
 * A typical call of each feature (config `costs`): the tokens it sends and gets back, and the
 * model tier it runs on. Drafts and answers read a thread plus a few articles; rewrites and
 * translations a reply.
 */
export const TYPICAL_CALL: Record<AiFeatureKey, { input: number; output: number; tier: Tier }> = {
  draft_reply: { input: 4000, output: 500, tier: 'default' },
  summarize: { input: 3000, output: 300, tier: 'fast' },
  copilot: { input: 4000, output: 400, tier: 'default' },
  triage: { input: 2000, output: 200, tier: 'fast' },
  decide: { input: 1500, output: 100, tier: 'fast' },
  answer_check: { input: 2000, output: 100, tier: 'fast' },
  rewrite: { input: 800, output: 600, tier: 'fast' },
  translate: { input: 1000, output: 1000, tier: 'fast' },
  kb_draft: { input: 5000, output: 1200, tier: 'default' },
  answer: { input: 4000, output: 400, tier: 'widget' },
  answer_email: { input: 4000, output: 500, tier: 'widget' },
  playground: { input: 4000, output: 500, tier: 'widget' },
  assistant: { input: 6000, output: 600, tier: 'default' },
};

export const FEATURE_KEYS = Object.keys(TYPICAL_CHARGE_USD) as AiFeatureKey[];

const byId = new Map(CATALOG.map((m) => [m.id, m]));
/** A dated snapshot of a catalog model: gpt-4o-2024-08-06, claude-sonnet-4-5-20250929. */
const SNAPSHOT = /^(.+)-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

/** The catalog's entry for a model id, or for the model a dated snapshot id belongs to. */
export function findModel(id: string): CatalogModel | null {
  const exact = byId.get(id);
  if (exact) return exact;
  const m = SNAPSHOT.exec(id);
  return (m && byId.get(m[1]!)) ?? null;
}

/** Dollars, kept to 0.000001 (the ai_usage column). */
export const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

export function tokensUsd(price: Price, input: number, output: number): number {
  return roundUsd((input * price.input + output * price.output) / 1e6);
}

/** typical_reply_usd of a model entry: 4,000 input and 500 output tokens. */
export const typicalReplyUsd = (price: Price | null): number | null => (price ? tokensUsd(price, 4000, 500) : null);

/** Whether an OpenAI-compatible base URL is OpenAI's own (or Azure OpenAI's). */
function isOpenAiHost(baseUrl: string | null): boolean {
  if (!baseUrl) return true;
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'api.openai.com' || host.endsWith('.openai.azure.com');
  } catch {
    return false;
  }
}

const OPEN = (m: CatalogModel) => m.vendor !== 'openai' && m.vendor !== 'anthropic';

/**
 * The catalog's models a provider serves: Anthropic's for anthropic; for an OpenAI-compatible
 * server, OpenAI's on OpenAI (no base URL, or OpenAI's or Azure's); on another server (Ollama,
 * vLLM, llama.cpp, a gateway), the vendors of the models it is known to serve (`serves`: AI_MODEL
 * and AI_FAST_MODEL: gpt-4o through a gateway means OpenAI's models), else the open models.
 */
export function catalogFor(
  kind: ProviderKind,
  baseUrl: string | null,
  serves: ReadonlyArray<string | null> = [],
): CatalogModel[] {
  if (kind === 'anthropic') return CATALOG.filter((m) => m.vendor === 'anthropic');
  if (isOpenAiHost(baseUrl)) return CATALOG.filter((m) => m.vendor === 'openai');
  const vendors = new Set(serves.map((id) => (id ? findModel(id)?.vendor : undefined)).filter((v) => v !== undefined));
  if (vendors.size === 0) return CATALOG.filter(OPEN);
  const open = [...vendors].some((v) => v !== 'openai' && v !== 'anthropic');
  return CATALOG.filter((m) => vendors.has(m.vendor) || (open && OPEN(m)));
}
