// "May this workspace spend this much?": asked by run.ts before every call that would be charged,
// with the call's estimate, and answered by billing (src/modules/billing/ledger.ts): on the hosted
// offering the estimate is reserved from the AI balance (402 ai_balance_empty when it does not
// cover it, and the model is not called; interface.md AI rule 8) and settled with the real cost
// once the call is metered. Self-hosted instances and own keys are never refused.
import type { Deps } from '../../deps.js';
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import { MARKUP, type Reservation, reserve } from '../billing/ledger.js';
import { isHosted } from '../billing/provider.js';
import { settle } from '../billing/service.js';
import { type Price, roundUsd, TYPICAL_CHARGE_USD, tokensUsd } from './catalog.js';
import { chatChars } from './providers/common.js';
import type { ChatTurn, ToolSpec } from './providers/types.js';

/** interface.md Limits "AI pricing": minimum estimate 0.01; output tokens counted up to 4,000. */
export const MIN_ESTIMATE_USD = 0.01;
export const MAX_ESTIMATED_OUTPUT_TOKENS = 4000;

/**
 * About 4 characters a token: what the estimate counts a prompt as (the instructions, the turns
 * with the calls' arguments, and the tools offered: their names, descriptions and schemas are
 * prompt text the provider charges for).
 */
export const promptTokens = (system: string, messages: readonly ChatTurn[], tools?: readonly ToolSpec[]): number =>
  Math.ceil(chatChars(system, messages, tools) / 4);

/**
 * A call's estimate: the prompt (≈ characters / 4) at the input price and maxTokens (up to 4,000)
 * at the output price, at least 0.01; the typical charge (at least 0.01) when the price is
 * unknown; 0 on the workspace's own key (its calls cost nothing here). `markup` (markupOf: 1.5 on
 * the hosted offering) multiplies the priced estimate before its minimum (Billing rule 4).
 */
export function estimateUsd(call: {
  feature: AiFeatureKey;
  source: 'instance' | 'own_key';
  price: Price | null;
  system: string;
  messages: readonly ChatTurn[];
  tools?: readonly ToolSpec[];
  maxTokens: number;
  markup?: number;
}): number {
  if (call.source === 'own_key') return 0;
  if (!call.price) return Math.max(MIN_ESTIMATE_USD, TYPICAL_CHARGE_USD[call.feature]);
  const output = Math.min(Math.max(call.maxTokens, 0), MAX_ESTIMATED_OUTPUT_TOKENS);
  const raw = tokensUsd(call.price, promptTokens(call.system, call.messages, call.tools), output) * (call.markup ?? 1);
  return roundUsd(Math.max(MIN_ESTIMATE_USD, raw));
}

/**
 * The markup of the hosted offering on a call's provider cost at list price (interface.md Billing
 * rule 4): 1.5 with STRIPE_SECRET_KEY set, else 1 (a self-hosted instance shows the list price).
 */
export const markupOf = (deps: Deps): number => (isHosted(deps) ? MARKUP : 1);

/**
 * "May this workspace spend `estimateUsd`?" On the hosted offering: holds the estimate of the
 * balance (billing/ledger.ts reserve) and returns the reservation, which settleSpend ends with the
 * call's real cost; 402 ai_balance_empty when the balance, less what calls under way hold, does
 * not cover it (then nothing is stored and the model is not called). Self-hosted, and on the
 * workspace's own key (estimate 0): never refused, null.
 */
export async function maySpend(deps: Deps, workspaceId: string, estimateUsd: number): Promise<Reservation | null> {
  if (!isHosted(deps) || estimateUsd <= 0) return null;
  return reserve(deps, workspaceId, estimateUsd);
}

/**
 * Ends a reservation with the call's real cost (0 for a failed call: the hold is released and
 * nothing is charged): the ledger's charge, allowance first, at most what is left.
 */
export async function settleSpend(
  deps: Deps,
  reservation: Reservation | null,
  costUsd: number,
  usageId: string | null,
): Promise<void> {
  if (!reservation) return;
  await settle(deps, reservation, costUsd, usageId);
}
