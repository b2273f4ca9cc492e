// The one way a feature calls a language model (docs/ai.md "The path of an AI call"):
//   1. the workspace's provider: its own key when it has an active one (cost 0), else the
//      instance's (AI_PROVIDER, AI_BASE_URL, AI_API_KEY); none → 404 ai_disabled;
//   2. the model of the call's tier (the workspace's choice, else AI_MODEL / AI_FAST_MODEL);
//   3. the estimate, and the question "may this workspace spend it?" (spend.ts; billing answers
//      it on the hosted offering by holding the estimate: 402 ai_balance_empty, and the model is
//      not called);
//   4. the call (streamed when the feature passes onDelta; stopped by `signal`);
//   5. one row of ai_usage whatever happened: ok (charged), cancelled (charged for what was
//      generated), failed (costs nothing), and the hold settled with that cost; an own key the provider refused is turned off and
//      the workspace's admins are notified with ai_key_failed.
// Provider failures reach the client as 502 ai_unavailable (detail without key or prompt); a model
// or server that cannot use tools, on a call offering them, as 501 ai_unsupported.
import type { Deps } from '../../deps.js';
import type { AiFeatureKey } from '../../platform/db/tables-ai.js';
import { ApiError } from '../../platform/http/errors.js';
import { costOf, type Outcome, recordUsage } from './metering.js';
import { failOwnKey } from './own-key.js';
import {
  type ChatResult,
  type ChatTurn,
  type JsonOutput,
  ProviderError,
  type ToolSpec,
  type Usage,
} from './providers/types.js';
import { priceFor, type ReadyAi, requireAi, type Target } from './service.js';
import { estimateUsd, markupOf, maySpend, settleSpend } from './spend.js';

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
  /** Functions the model may call (the assistant); its calls come back in the result's `toolCalls`. */
  tools?: ToolSpec[];
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

const NO_USAGE: Usage = { input_tokens: 0, output_tokens: 0, estimated: false };

/**
 * Calls the workspace's model for a feature (the path in this file's header). Throws 404
 * ai_disabled (no provider, or AI off in the workspace), 402 ai_balance_empty (spend.ts), 502
 * ai_unavailable (the provider failed, refused the key, or timed out), or the ProviderError
 * `aborted` itself when `call.signal` stopped it (the route closes quietly; the call is metered
 * as cancelled, charged for what was generated).
 *
 * `ready`: the workspace's AI as the feature already read it with requireAi (its settings shape
 * the prompt), so the call does not read the same row again; read here when not given.
 */
export async function runAi(deps: Deps, caller: AiCaller, call: AiCall, ready?: ReadyAi): Promise<AiCallResult> {
  const ws = ready ?? (await requireAi(deps, caller.workspaceId));
  const { target } = ws;
  const model = ws.tiers[call.tier]!;
  const markup = markupOf(deps);
  const estimate = estimateUsd({ ...call, source: target.source, price: priceFor(target, model), markup });
  const provider = deps.ai.providers.get(target.kind, target.apiKey, target.baseUrl);
  // Hosted: the estimate is held from the balance until the call is metered (402 ai_balance_empty
  // here, before anything is stored or the model is called).
  const reservation = await maySpend(deps, caller.workspaceId, estimate);
  const meter = async (outcome: Outcome, usage: Usage, answered: string) => {
    const price = priceFor(target, answered) ?? priceFor(target, model);
    const cost = costOf({ feature: call.feature, source: target.source, price, usage, outcome, markup });
    let usageId: string | null = null;
    try {
      usageId = await recordUsage(deps, {
        workspaceId: caller.workspaceId,
        feature: call.feature,
        model: answered,
        source: target.source,
        price,
        usage,
        outcome,
        userId: caller.userId,
        ticketId: call.ticketId ?? null,
        cost,
      });
    } finally {
      // Charged what the call cost (a failed call: nothing; the hold is released either way).
      await settleSpend(deps, reservation, cost, usageId);
    }
    return cost;
  };
  let result: ChatResult;
  try {
    result = await provider.chat({
      model,
      system: call.system,
      messages: call.messages,
      maxTokens: call.maxTokens,
      ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
      ...(call.json ? { json: call.json } : {}),
      ...(call.tools ? { tools: call.tools } : {}),
      ...(call.onDelta ? { onDelta: call.onDelta } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
    });
  } catch (err) {
    if (err instanceof ProviderError && err.failure === 'aborted') {
      await meter('cancelled', err.partial?.usage ?? NO_USAGE, model);
      throw err;
    }
    await meter('failed', err instanceof ProviderError ? (err.partial?.usage ?? NO_USAGE) : NO_USAGE, model);
    if (!(err instanceof ProviderError)) throw err;
    throw await unavailable(deps, caller, call, target, err);
  }
  const cost = await meter('ok', result.usage, result.model || model);
  return { ...result, cost_usd: cost, source: target.source };
}

/** A provider failure as the client sees it (502 ai_unavailable), after what it entails. */
async function unavailable(
  deps: Deps,
  caller: AiCaller,
  call: AiCall,
  target: Target,
  err: ProviderError,
): Promise<ApiError> {
  // The provider's message, with the key taken out should it ever carry it.
  const reason = target.apiKey ? err.message.split(target.apiKey).join('[key]') : err.message;
  const log = { workspace_id: caller.workspaceId, feature: call.feature, provider: target.kind, failure: err.failure };
  if (err.failure === 'auth' && target.key) {
    await failOwnKey(deps, caller.workspaceId, target.key.sealed, reason);
    deps.log.warn(log, "the workspace's own AI provider key was refused; it is turned off");
    return new ApiError(
      'ai_unavailable',
      `The provider (${target.kind}) refused the workspace's own key; it is turned off until an admin replaces it.`,
    );
  }
  if (err.failure === 'unsupported') {
    // The operator's choice of model or server flags (docs/ai.md "tool use"), not a passing failure.
    deps.log.warn(log, 'the AI model or server cannot use tools');
    return new ApiError('ai_unsupported', FAILURE_DETAIL.unsupported);
  }
  if (err.failure === 'auth') {
    deps.log.error(log, 'the AI provider refused the instance key (AI_API_KEY)');
    return new ApiError('ai_unavailable', "The AI provider refused the instance's key. Ask the operator to check it.");
  }
  deps.log.warn({ ...log, reason }, 'AI provider call failed');
  return new ApiError('ai_unavailable', FAILURE_DETAIL[err.failure]);
}

const FAILURE_DETAIL: Record<ProviderError['failure'], string> = {
  auth: 'The AI provider refused the key.',
  rate_limited: 'The AI provider is rate limiting requests; try again shortly.',
  unavailable: 'The AI provider is unavailable; try again shortly.',
  timeout: 'The AI provider did not answer in time.',
  bad_response: 'The AI provider sent an answer that could not be read.',
  aborted: 'The call was stopped.',
  refused: 'The AI provider refused the request (check the model and the request size).',
  unsupported: 'The model cannot use tools; choose another model.',
};
