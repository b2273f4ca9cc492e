// The help center's pages, kept per process once rendered: an article page is read far more
// often than it changes, and rendering it (two queries, the template, the ETag) cost about 2 ms
// of CPU, so a help center under a crowd (a link shared widely, an outage everyone searches for)
// was limited to a few hundred pages a second on a small machine. A kept page is sent without a
// query.
//
// What a page shows changes only through writes that emit events: kb_article.* and
// kb_collection.* (the workspace's pages) and workspace.updated or .deleted (the help center's
// title, colour, images, slug, on or off: every kept help center). The bus carries them to every
// process (src/platform/bus, NATS when scaled out), and each one moves a generation forward: a
// page kept under an older generation is not sent again. The generations a page is built under
// are read before its queries, so a write that commits while a page is being built makes that
// page stale at once. Anything else (a row changed in SQL behind the service's back, an event
// lost between processes before the outbox re-sends it) is bounded by the entries' age: a minute,
// as long as the pages' Cache-Control lets a browser or a CDN keep them anyway.
//
// Bounded in bytes, least recently read out first. Search results and 404s are not kept (the
// first are too many and too varied, the second would let anyone fill the cache).
import type { EventBus } from '../../platform/bus/index.js';
import type { StoredPage } from '../../platform/http/pages.js';
import type { HelpCenter } from './service.js';

export type { StoredPage } from '../../platform/http/pages.js';

/** The generations a page or a help center was read under (see above). */
export interface Stamp {
  workspaces: number;
  workspace: number;
}

interface PageEntry extends StoredPage {
  workspaceId: string;
  stamp: Stamp;
  at: number;
  bytes: number;
}

interface CenterEntry {
  hc: HelpCenter;
  workspaces: number;
  at: number;
}

export class PageCache {
  readonly #pages = new Map<string, PageEntry>();
  readonly #centers = new Map<string, CenterEntry>();
  /** Moves on any workspace.updated or .deleted: every kept help center and page is stale. */
  #workspaces = 0;
  /** Per workspace: moves on its kb_article.* and kb_collection.* events. */
  readonly #generation = new Map<string, number>();
  #bytes = 0;

  constructor(
    readonly maxBytes = 16 * 1024 * 1024,
    readonly ttlMs = 60_000,
    readonly maxCenters = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Follows the bus; returns the unsubscribe. */
  follow(bus: EventBus): () => void {
    return bus.subscribe((e) => {
      if (e.type.startsWith('kb_article.') || e.type.startsWith('kb_collection.')) this.invalidate(e.workspace_id);
      else if (e.type === 'workspace.updated' || e.type === 'workspace.deleted') this.invalidateAll();
    });
  }

  /** The workspace's pages are stale. */
  invalidate(workspaceId: string): void {
    this.#generation.set(workspaceId, (this.#generation.get(workspaceId) ?? 0) + 1);
  }

  /** Every help center and page is stale. */
  invalidateAll(): void {
    this.#workspaces++;
    this.#centers.clear();
  }

  /** The generations now: take it before reading what a page shows. */
  stamp(workspaceId: string, workspaces = this.#workspaces): Stamp {
    return { workspaces, workspace: this.#generation.get(workspaceId) ?? 0 };
  }

  get workspacesGeneration(): number {
    return this.#workspaces;
  }

  #fresh(e: { at: number }): boolean {
    return this.now() - e.at <= this.ttlMs;
  }

  /** A kept help center by its slug, with the generation it was read under. */
  center(slug: string): CenterEntry | undefined {
    const e = this.#centers.get(slug);
    if (!e) return undefined;
    if (e.workspaces !== this.#workspaces || !this.#fresh(e)) {
      this.#centers.delete(slug);
      return undefined;
    }
    return e;
  }

  /** Keeps a help center read under `workspaces` (the generation taken before the query). */
  keepCenter(slug: string, hc: HelpCenter, workspaces: number): void {
    if (workspaces !== this.#workspaces) return;
    if (this.#centers.size >= this.maxCenters) {
      const oldest = this.#centers.keys().next().value;
      if (oldest !== undefined) this.#centers.delete(oldest);
    }
    this.#centers.set(slug, { hc, workspaces, at: this.now() });
  }

  /** A kept page of the workspace, if still current. */
  page(workspaceId: string, key: string): StoredPage | undefined {
    const id = `${workspaceId} ${key}`;
    const e = this.#pages.get(id);
    if (!e) return undefined;
    if (
      e.stamp.workspaces !== this.#workspaces ||
      e.stamp.workspace !== (this.#generation.get(workspaceId) ?? 0) ||
      !this.#fresh(e)
    ) {
      this.#drop(id, e);
      return undefined;
    }
    // Most recently read last: the first entries are the first out.
    this.#pages.delete(id);
    this.#pages.set(id, e);
    return e;
  }

  /** Keeps a page built under `stamp`, unless a write has made it stale already. */
  keep(workspaceId: string, key: string, stamp: Stamp, page: StoredPage): void {
    if (stamp.workspaces !== this.#workspaces || stamp.workspace !== (this.#generation.get(workspaceId) ?? 0)) return;
    const bytes = page.body.length + key.length + 200;
    if (bytes > this.maxBytes / 8) return;
    const id = `${workspaceId} ${key}`;
    const old = this.#pages.get(id);
    if (old) this.#drop(id, old);
    this.#pages.set(id, { ...page, workspaceId, stamp, at: this.now(), bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#pages) {
      if (this.#bytes <= this.maxBytes) break;
      this.#drop(k, e);
    }
  }

  get size(): number {
    return this.#pages.size;
  }

  #drop(id: string, e: PageEntry): void {
    this.#pages.delete(id);
    this.#bytes -= e.bytes;
  }
}
