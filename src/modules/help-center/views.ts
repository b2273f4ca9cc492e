// Article views of the help center: counted by the server when it serves an article page (no
// beacon, no cookie). A visitor is a keyed hash (HMAC-SHA-256, key derived from SECRET_KEY with
// HKDF) of the client's address and user agent, so the table never holds an address; the same
// visitor counts once per article per 30 minutes (a mark per article and visitor, moved to now
// when a view counts). Crawlers and link previews, told by their user agent, do not count.
// No event is emitted per view (docs/decisions.md "Help center").
import { createHmac, hkdfSync } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../platform/db/index.js';

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

/**
 * Counts a view of the article by the visitor unless the visitor's last counted view of it is
 * less than the window old: one statement, so concurrent views of one visitor count once.
 * Returns whether it counted.
 */
export async function countView(
  database: Database,
  workspaceId: string,
  articleId: string,
  visitor: string,
): Promise<boolean> {
  const r = await sql<{ counted: number }>`
    WITH mark AS (
      INSERT INTO kb_article_views AS v (workspace_id, article_id, visitor, viewed_at)
      VALUES (${workspaceId}, ${articleId}, ${visitor}, now())
      ON CONFLICT (workspace_id, article_id, visitor) DO UPDATE SET viewed_at = now()
        WHERE v.viewed_at <= now() - make_interval(mins => ${VIEW_WINDOW_MINUTES})
      RETURNING 1
    )
    UPDATE kb_articles SET views = views + 1
     WHERE workspace_id = ${workspaceId} AND id = ${articleId} AND EXISTS (SELECT 1 FROM mark)
    RETURNING 1 AS counted`.execute(database.db);
  return r.rows.length > 0;
}

/** The hourly maintenance job: marks past the window can no longer hold a view back. */
export async function pruneArticleViews(database: Database): Promise<number> {
  const r = await database.db
    .deleteFrom('kb_article_views')
    .where('viewed_at', '<', sql<Date>`now() - make_interval(mins => ${VIEW_WINDOW_MINUTES})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows ?? 0);
}
