// The API keys a process has recently seen, so that a request with a key does not read
// `api_keys` before its own work (about a fifth of a list request's cost).
//
// Deleting a key still revokes it at once: the deleting request forgets it here before it
// answers, and every other process forgets it on the control notice `api_key.deleted`
// (NATS, which several processes need anyway for events; docs/operations.md). A lookup that was
// already reading the row when a notice arrived does not keep what it read. The notices are
// best effort (a process cut off from NATS misses them), so an entry is also read again after
// KEPT_MS. Unknown secrets are never kept: a new key works on its first request, and guessing
// cannot fill the cache.
import { LRUCache } from 'lru-cache';
import type { EventBus } from '../../platform/bus/types.js';

export interface KnownKey {
  workspaceId: string;
  id: string;
  scopes: string[];
  createdBy: string | null;
  expiresAt: Date | null;
  /** When last_used_at was last written (to the minute; see the resolver). */
  lastUsedAt: Date | null;
}

/** How long an entry is trusted without a notice (the backstop for a lost one). */
export const KEPT_MS = 30_000;

export class KnownKeys {
  readonly #byHash = new LRUCache<string, KnownKey>({ max: 10_000, ttl: KEPT_MS });
  /** Bumped by every forget: a lookup that began before it does not store its row. */
  #generation = 0;

  get(keyHash: string): KnownKey | undefined {
    return this.#byHash.get(keyHash);
  }

  /** The generation to pass to remember() when the lookup's row arrives. */
  begin(): number {
    return this.#generation;
  }

  remember(keyHash: string, key: KnownKey, generation: number): void {
    if (generation === this.#generation) this.#byHash.set(keyHash, key);
  }

  forgetKey(id: string): void {
    this.#forget((k) => k.id === id);
  }

  forgetWorkspace(workspaceId: string): void {
    this.#forget((k) => k.workspaceId === workspaceId);
  }

  #forget(match: (k: KnownKey) => boolean): void {
    this.#generation++;
    for (const [hash, k] of this.#byHash.entries()) if (match(k)) this.#byHash.delete(hash);
  }
}

/** The process's known keys (deps.knownKeys), forgetting what the bus's control notices name. */
export function followedKnownKeys(bus: EventBus): KnownKeys {
  const keys = new KnownKeys();
  bus.subscribeControl((m) => {
    if (m.type === 'api_key.deleted') keys.forgetKey(m.api_key_id);
    else if (m.type === 'workspace.deleted') keys.forgetWorkspace(m.workspace_id);
  });
  return keys;
}
