// Semantic search plugged into a process (runtime.ts): the instance's embedder, this process's
// vectors, and (with the workers) the embedding jobs. Kept beside Deps, by its `ai` seams, as
// the triage engines are (src/modules/triage/engine.ts).
import type { Deps } from '../../../deps.js';
import { embedderOf } from './embedder.js';
import { registerEmbeddingJobs } from './queue.js';
import { type Semantic, semanticOf } from './search.js';
import { VectorIndex } from './vectors.js';

const plugged = new WeakMap<Deps['ai'], Semantic>();

/** The process's semantic search, or null (AI_EMBEDDINGS=off). */
export const semanticFor = (deps: Deps): Semantic | null => plugged.get(deps.ai) ?? null;

/** Makes the process's embedder and vector index; returns what closes them. */
export function plugSemantic(deps: Deps): () => Promise<void> {
  const s = semanticOf(embedderOf(deps), new VectorIndex());
  if (!s) return async () => {};
  plugged.set(deps.ai, s);
  return () => s.embedder.close();
}

/** The embedding jobs (with the other workers). */
export async function registerSemanticJobs(deps: Deps, backfill: boolean): Promise<{ stop(): void }> {
  const s = semanticFor(deps);
  if (!s) return { stop() {} };
  return registerEmbeddingJobs(deps, s.embedder, backfill);
}
