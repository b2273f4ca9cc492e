// The usage of every AI call (ai_usage, append only): one row per call, whatever its outcome.
// What a call costs (docs/ai.md "Costs"):
//   - on the workspace's own key: 0 (its provider bills the workspace);
//   - failed: 0 (interface.md AI rule 8);
//   - the model's catalog price known: input and output tokens at that price, to 0.000001, times
//     the hosted offering's markup 1.5 (Billing rule 4; 1 self-hosted): what the balance is charged;
//   - unknown (an open model, a model missing from models.json): the feature's typical charge
//     (rule 1); a cancelled call is charged it only when something was generated.
// A cancelled call (the client went away) is charged for what was generated: the tokens the
// provider reported, or estimated from the text when it did not.
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import { type Price, roundUsd, TYPICAL_CHARGE_USD, tokensUsd } from './catalog.js';
import type { Usage } from './providers/types.js';

export type Outcome = 'ok' | 'cancelled' | 'failed';

export interface Charge {
  feature: AiFeatureKey;
  source: 'instance' | 'own_key';
  price: Price | null;
  usage: Pick<Usage, 'input_tokens' | 'output_tokens'>;
  outcome: Outcome;
  /** The hosted offering's markup on a priced call (spend.ts markupOf; 1 when not given). */
  markup?: number;
}

export function costOf(c: Charge): number {
  if (c.source === 'own_key' || c.outcome === 'failed') return 0;
  if (c.price) return roundUsd(tokensUsd(c.price, c.usage.input_tokens, c.usage.output_tokens) * (c.markup ?? 1));
  if (c.outcome === 'cancelled' && c.usage.output_tokens === 0) return 0;
  return roundUsd(TYPICAL_CHARGE_USD[c.feature]);
}

export interface UsageRecord extends Charge {
  workspaceId: string;
  model: string;
  userId: string | null;
  ticketId: string | null;
  cost: number;
}

const tokens = (n: number) => (Number.isFinite(n) && n > 0 ? Math.min(Math.round(n), 2_147_483_647) : 0);

/** Appends the call's row (outside any request transaction: the call happened whatever follows); its id. */
export async function recordUsage(deps: Deps, r: UsageRecord): Promise<string> {
  const id = newId();
  await deps.database.db
    .insertInto('ai_usage')
    .values({
      workspace_id: r.workspaceId,
      id,
      feature: r.feature,
      model: r.model.slice(0, 200),
      source: r.source,
      input_tokens: tokens(r.usage.input_tokens),
      output_tokens: tokens(r.usage.output_tokens),
      cost_usd: r.cost,
      user_id: r.userId,
      outcome: r.outcome,
      ticket_id: r.ticketId,
    })
    .execute();
  return id;
}
