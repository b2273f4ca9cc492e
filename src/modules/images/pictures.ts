// What a process holds for pictures (deps.pictures): the worker pool that decodes them, the
// settings of the automatic lookups and of fetching a picture from a URL, and a small cache of
// served PNGs (their ids are immutable, so a cached copy is never stale).
import { LRUCache } from 'lru-cache';
import type { Resolve } from '../../platform/net/http.js';
import { PicturePool, type PicturePoolOptions } from './pool.js';

export interface PictureOptions {
  /** The decoding pool (workers: 0 decodes on the event loop's thread: the bench's comparison). */
  pool: PicturePoolOptions;
  /** Fetching a picture (avatar_url, gravatar, a domain's icon): every hop and the body. */
  fetchTimeoutMs: number;
  /** Gravatar's address for an email's SHA-256 (d=404: no picture is a 404, not a placeholder). */
  gravatarUrl: (hash: string) => string;
  /** The page of a company's domain whose icons are looked at. */
  domainUrl: (domain: string) => string;
  /** Name resolution for the address checks (tests inject one; DNS otherwise). */
  resolve?: Resolve;
  /** Tests only: which addresses are refused (see safeGet's `refuse`). */
  refuse?: (address: string) => string | null;
  /** Served PNGs kept in memory, in bytes. */
  cacheBytes: number;
}

export const DEFAULT_PICTURE_OPTIONS: PictureOptions = {
  pool: {},
  fetchTimeoutMs: 10_000,
  gravatarUrl: (hash) => `https://www.gravatar.com/avatar/${hash}?s=256&d=404`,
  domainUrl: (domain) => `https://${domain}/`,
  cacheBytes: 32 * 1024 * 1024,
};

export class Pictures {
  readonly pool: PicturePool;
  /** `<id>-<size>` → PNG bytes. */
  readonly served: LRUCache<string, Buffer>;

  constructor(readonly options: PictureOptions) {
    this.pool = new PicturePool(options.pool);
    this.served = new LRUCache<string, Buffer>({
      maxSize: Math.max(1, options.cacheBytes),
      sizeCalculation: (b) => Math.max(1, b.length),
      // Removed pictures stop being served from memory within the hour.
      ttl: 3600_000,
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
