// What turns text into vectors for semantic search: the instance's choice (AI_EMBEDDINGS), the
// same for every workspace so that their vectors and their queries' share one space:
// - `embedded` (the default): the model in the package (local-model.ts), no provider call;
// - `provider`: the OpenAI-compatible provider's /embeddings with AI_EMBEDDING_MODEL. Its
//   tokens are the instance's cost, not a workspace's charge: embeddings are not one of the
//   contract's metered features (docs/decisions.md "Semantic search").
// Every vector leaves here of unit length, so a dot product is the cosine.
import { availableParallelism } from 'node:os';
import type { Deps } from '../../../deps.js';
import { LOCAL_MODEL, LocalModel } from './local-model.js';

export interface Embedder {
  /** Stored with every vector: a different model embeds everything again. */
  readonly model: string;
  /** The least similarity a result found by meaning alone must have (docs/ai.md). */
  readonly floor: number;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  close(): Promise<void>;
}

export function unit(v: ArrayLike<number>): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  const out = new Float32Array(v.length);
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * s;
  return out;
}

/** The instance's embedder, or null (AI_EMBEDDINGS=off). */
export function embedderOf(deps: Pick<Deps, 'config' | 'ai'>): Embedder | null {
  const ai = deps.config.ai;
  if (ai.embeddings === 'off') return null;
  if (ai.embeddings === 'provider' && ai.provider === 'openai' && ai.embeddingModel) {
    const model = ai.embeddingModel;
    return {
      model: `openai:${model}`,
      floor: 0.3,
      async embed(texts, signal) {
        if (texts.length === 0) return [];
        const provider = deps.ai.providers.get('openai', ai.apiKey ?? '', ai.baseUrl);
        if (!provider.embed) throw new Error('the provider has no embeddings');
        const r = await provider.embed(
          texts.map((t) => t.slice(0, 8_000)),
          model,
          signal,
        );
        return r.vectors.map(unit);
      },
      async close() {},
    };
  }
  // One worker thread per core but one (at least one, at most four), as the picture pool: a
  // batch is shared between them. The model needs about 10 ms of a core per message.
  const threads = Math.min(4, Math.max(1, availableParallelism() - 1));
  const locals = Array.from({ length: threads }, () => new LocalModel());
  return {
    model: LOCAL_MODEL,
    floor: 0.35,
    async embed(texts) {
      const per = Math.ceil(texts.length / locals.length);
      const parts = await Promise.all(locals.map((m, i) => m.embed(texts.slice(i * per, (i + 1) * per))));
      return parts.flat().map(unit);
    },
    close: async () => {
      await Promise.all(locals.map((m) => m.close()));
    },
  };
}
