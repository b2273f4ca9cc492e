// Article views of the help center: counted by the server when it serves an article page (no
// beacon, no cookie). A visitor is a keyed hash (HMAC-SHA-256, key derived from SECRET_KEY with
// HKDF) of the client's address and user agent, so the table never holds an address; the same
// visitor counts once per article per 30 minutes (a mark per article and visitor, moved to now
// when a view counts; views wait a quarter of a second in memory, see ArticleViews). Crawlers and link previews, told by their user agent, do not count.
// No event is emitted per view (docs/decisions.md "Help center").
import { createHmac, hkdfSync } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../platform/db/index.js';
import { unscoped } from '../../platform/db/scope.js';

/** A visitor's views of one article within this window count once. */
export const VIEW_WINDOW_MINUTES = 30;

const keys = new WeakMap<Config, Buffer>();

function visitorKey(config: Config): Buffer {
  let k = keys.get(config);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', config.secretKey, 'svc-help-center-visitor', 'help center visitor key v1', 32));
    keys.set(config, k);
  }
  return k;
}

/** The visitor of a request: 128 bits of HMAC over address and user agent, base64url. */
export function visitorOf(config: Config, address: string, userAgent: string): string {
  return createHmac('sha256', visitorKey(config))
    .update(`${address}\n${userAgent}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

// Crawlers, link previews and HTTP libraries name themselves; an empty user agent is no browser.
const NOT_A_READER =
  /bot\b|bot\/|crawl|spider|slurp|preview|facebookexternalhit|embedly|headless|curl\/|wget\/|python-|go-http-client|^$/i;

export const isReader = (userAgent: string): boolean => !NOT_A_READER.test(userAgent.trim());

/** One view to count: the visitor's mark decides whether it does. */
interface View {
  workspaceId: string;
  articleId: string;
  visitor: string;
}

/**
 * Counts views away from the page's answer: a page is sent (from the page cache, usually) and its
 * view waits in memory; every quarter of a second one statement counts the views waiting (and
 * when the process stops). The marks in kb_article_views decide, across processes, whether a view
 * counts; this process also remembers the visitors it counted within the window, so that a reader
 * reloading a page costs no statement at all. A process that dies loses at most its last quarter
 * second of views (statistics, not records).
 */
export class ArticleViews {
  /**
   * `article address user-agent` → when this process last counted it (ms), oldest first. Kept
   * in memory only, and keyed by the request's own values: the keyed hash is made for the views
   * that go to the database, not for every page served.
   */
  readonly #seen = new Map<string, number>();
  #pending: View[] = [];
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  /** The clock of the remembered visitors (tests move it past the window). */
  now: () => number = Date.now;

  constructor(
    private readonly database: Database,
    private readonly log: { warn(obj: object, msg: string): void },
    private readonly flushMs = 250,
    private readonly maxSeen = 50_000,
  ) {}

  /** A view of the article by the client at `address` with `userAgent` (once the page is sent). */
  record(workspaceId: string, articleId: string, address: string, userAgent: string, visitor: () => string): void {
    const key = `${articleId} ${address} ${userAgent}`;
    const now = this.now();
    const last = this.#seen.get(key);
    if (last !== undefined && now - last < VIEW_WINDOW_MINUTES * 60_000) return;
    this.#seen.delete(key);
    this.#seen.set(key, now);
    // Oldest first: forget what is past the window, and the oldest when there are too many.
    for (const [k, at] of this.#seen) {
      if (this.#seen.size <= this.maxSeen && now - at < VIEW_WINDOW_MINUTES * 60_000) break;
      this.#seen.delete(k);
    }
    this.#pending.push({ workspaceId, articleId, visitor: visitor() });
    if (!this.#timer) {
      // Out of any workspace scope: the flush counts every workspace's views.
      this.#timer = unscoped(() =>
        setTimeout(() => {
          this.#timer = null;
          void this.flush();
        }, this.flushMs),
      );
      this.#timer.unref();
    }
  }

  /** Counts the views waiting (flushes run one after another). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const views = this.#pending;
    this.#pending = [];
    if (views.length === 0) return;
    try {
      await countViews(this.database, views);
    } catch (err) {
      this.log.warn({ error: { message: String((err as Error).message).slice(0, 200) } }, 'article views not counted');
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.flush();
  }
}

/**
 * Counts each view unless its visitor's last counted view of the article is less than the window
 * old, in one statement: the marks are inserted or moved (concurrent flushes of several processes
 * count a visitor once), then each article's views grow by the marks that moved. Views of
 * articles deleted meanwhile are dropped. Returns how many counted.
 */
export async function countViews(database: Database, views: readonly View[]): Promise<number> {
  // One row per (article, visitor): ON CONFLICT may not touch a row twice in one statement.
  const unique = new Map(views.map((v) => [`${v.workspaceId} ${v.articleId} ${v.visitor}`, v]));
  const list = [...unique.values()].sort((a, b) =>
    a.articleId < b.articleId ? -1 : a.articleId > b.articleId ? 1 : a.visitor < b.visitor ? -1 : 1,
  );
  const r = await sql<{ n: number }>`
    WITH input AS (
      SELECT t.workspace_id, t.article_id, t.visitor
        FROM unnest(${list.map((v) => v.workspaceId)}::uuid[], ${list.map((v) => v.articleId)}::uuid[],
                    ${list.map((v) => v.visitor)}::text[]) AS t (workspace_id, article_id, visitor)
        JOIN kb_articles a ON a.workspace_id = t.workspace_id AND a.id = t.article_id
    ), mark AS (
      INSERT INTO kb_article_views AS v (workspace_id, article_id, visitor, viewed_at)
      SELECT workspace_id, article_id, visitor, now() FROM input
      ON CONFLICT (workspace_id, article_id, visitor) DO UPDATE SET viewed_at = now()
        WHERE v.viewed_at <= now() - make_interval(mins => ${VIEW_WINDOW_MINUTES})
      RETURNING v.workspace_id, v.article_id
    ), counted AS (
      SELECT workspace_id, article_id, count(*)::int AS n FROM mark GROUP BY workspace_id, article_id
    ), bumped AS (
      UPDATE kb_articles a SET views = a.views + c.n
        FROM counted c
       WHERE a.workspace_id = c.workspace_id AND a.id = c.article_id
      RETURNING c.n
    )
    SELECT coalesce(sum(n), 0)::int AS n FROM bumped`.execute(database.db);
  return Number(r.rows[0]?.n ?? 0);
}

/** The hourly maintenance job: marks past the window can no longer hold a view back. */
export async function pruneArticleViews(database: Database): Promise<number> {
  const r = await database.db
    .deleteFrom('kb_article_views')
    .where('viewed_at', '<', sql<Date>`now() - make_interval(mins => ${VIEW_WINDOW_MINUTES})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows ?? 0);
}
