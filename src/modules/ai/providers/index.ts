// The provider of a kind: the instance's (AI_PROVIDER, AI_BASE_URL, AI_API_KEY) or a workspace's
// own key; run.ts is the only caller.
import { createAnthropicProvider } from './anthropic.js';
import { createOpenAiProvider } from './openai.js';
import type { AiProvider, ProviderOptions } from './types.js';

export function createProvider(options: ProviderOptions): AiProvider {
  return options.kind === 'anthropic' ? createAnthropicProvider(options) : createOpenAiProvider(options);
}

export type { AiProvider, ChatRequest, ChatResult, EmbeddingResult, ProviderOptions, Usage } from './types.js';
export { ProviderError } from './types.js';
