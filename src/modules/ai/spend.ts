// "May this workspace spend this much?": asked by run.ts before every call that would be charged,
// with the call's estimate. The one place the billing issue will answer (hosted offering: 402
// ai_balance_empty when the balance does not cover the estimate, and the model is not called;
// interface.md AI rule 8). For now every workspace may spend: there is no balance yet.
import type { Deps } from '../../deps.js';
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import { type Price, roundUsd, TYPICAL_CHARGE_USD, tokensUsd } from './catalog.js';
import type { ChatTurn } from './providers/types.js';

/** interface.md Limits "AI pricing": minimum estimate 0.01; output tokens counted up to 4,000. */
export const MIN_ESTIMATE_USD = 0.01;
export const MAX_ESTIMATED_OUTPUT_TOKENS = 4000;

/** About 4 characters a token: what the estimate counts a prompt as. */
export const promptTokens = (system: string, messages: readonly ChatTurn[]): number =>
  Math.ceil((system.length + messages.reduce((n, m) => n + m.content.length, 0)) / 4);

/**
 * A call's estimate: the prompt (≈ characters / 4) at the input price and maxTokens (up to 4,000)
 * at the output price, at least 0.01; the typical charge (at least 0.01) when the price is
 * unknown; 0 on the workspace's own key (its calls cost nothing here).
 */
export function estimateUsd(call: {
  feature: AiFeatureKey;
  source: 'instance' | 'own_key';
  price: Price | null;
  system: string;
  messages: readonly ChatTurn[];
  maxTokens: number;
}): number {
  if (call.source === 'own_key') return 0;
  if (!call.price) return Math.max(MIN_ESTIMATE_USD, TYPICAL_CHARGE_USD[call.feature]);
  const output = Math.min(Math.max(call.maxTokens, 0), MAX_ESTIMATED_OUTPUT_TOKENS);
  return roundUsd(Math.max(MIN_ESTIMATE_USD, tokensUsd(call.price, promptTokens(call.system, call.messages), output)));
}

/**
 * Resolves when the workspace may spend `estimateUsd`; throws 402 ai_balance_empty when it may
 * not (then the model is not called). Always allows for now: the billing issue fills this in.
 */
export async function maySpend(_deps: Deps, _workspaceId: string, _estimateUsd: number): Promise<void> {
  // Billing (hosted offering) answers here: throw new ApiError('ai_balance_empty', ...) when the
  // workspace's balance does not cover the estimate.
}
