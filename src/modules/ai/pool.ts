// The language model providers this process holds (deps.ai.providers): one per (kind, key, base
// URL), made on first use and kept, so each keeps its HTTP connections warm. The key is held by
// the provider's SDK client only; the pool's index is a hash of it.
import { createHash } from 'node:crypto';
import type { AiProvider, ProviderKind, ProviderOptions } from './providers/types.js';

/** Timeouts and retries of every provider call (tests shorten them through createRuntime's `ai`). */
export interface AiOptions {
  /** Per attempt, ms. */
  timeoutMs: number;
  /** Retries on 408, 409, 429 (honouring retry-after) and 5xx, with backoff and jitter. */
  maxRetries: number;
}

export const DEFAULT_AI_OPTIONS: AiOptions = { timeoutMs: 60_000, maxRetries: 2 };

/** Beyond this many providers (own keys of many workspaces), the least recently used is dropped. */
const MAX_PROVIDERS = 500;

export class ProviderPool {
  private readonly providers = new Map<string, AiProvider>();

  constructor(
    readonly options: AiOptions,
    private readonly create: (options: ProviderOptions) => AiProvider,
  ) {}

  get(kind: ProviderKind, apiKey: string, baseUrl: string | null): AiProvider {
    const id = createHash('sha256')
      .update(`${kind}\0${baseUrl ?? ''}\0${apiKey}`)
      .digest('base64url');
    const held = this.providers.get(id);
    if (held) {
      // Most recently used last: Map keeps insertion order.
      this.providers.delete(id);
      this.providers.set(id, held);
      return held;
    }
    const made = this.create({ kind, apiKey, baseUrl, ...this.options });
    this.providers.set(id, made);
    if (this.providers.size > MAX_PROVIDERS) this.providers.delete(this.providers.keys().next().value!);
    return made;
  }
}
