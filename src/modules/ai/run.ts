// The one way a feature calls a language model (docs/ai.md "The path of an AI call"):
//   1. the workspace's provider: its own key when it has an active one (cost 0), else the
//      instance's (AI_PROVIDER, AI_BASE_URL, AI_API_KEY); none → 404 ai_disabled;
//   2. the model of the call's tier (the workspace's choice, else AI_MODEL / AI_FAST_MODEL);
//   3. the estimate, and the question "may this workspace spend it?" (spend.ts; the billing
//      issue answers it: 402 ai_balance_empty, and the model is not called);
//   4. the call (streamed when the feature passes onDelta; stopped by `signal`);
//   5. one row of ai_usage whatever happened: ok (charged), cancelled (charged for what was
//      generated), failed (costs nothing); an own key the provider refused is turned off and
//      the workspace's admins are notified with ai_key_failed.
// Provider failures reach the client as 502 ai_unavailable (detail without key or prompt).
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import type { ChatResult, ChatTurn, JsonOutput } from './providers/types.js';

/** Which model a call uses: default (drafts, answers), fast (rewrite, translate, summaries), widget. */
export type ModelTier = 'default' | 'fast' | 'widget';

export interface AiCall {
  feature: AiFeatureKey;
  tier: ModelTier;
  system: string;
  messages: ChatTurn[];
  maxTokens: number;
  temperature?: number;
  json?: JsonOutput;
  onDelta?: (text: string) => void;
  signal?: AbortSignal;
  /** The ticket the call is about, recorded with its usage. */
  ticketId?: string | null;
}

/** Who is calling: the member (null for automations and the AI agent) in a workspace. */
export interface AiCaller {
  workspaceId: string;
  userId: string | null;
}

export interface AiCallResult extends ChatResult {
  /** What the call was charged, in US dollars (0 on an own key). */
  cost_usd: number;
  source: 'instance' | 'own_key';
}
