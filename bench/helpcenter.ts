// The help-center part of npm run bench (issue 23): the article page and the search page.
//
// Article (hc.article, hc.article.views): a workspace of its own with the help center on, one
// collection and one typical published article (ARTICLE_HTML: headings, paragraphs, lists, a
// table, a code block; about 5 KB of HTML), written through the service's own API. bench/run.ts
// captures the served page and serves the same bytes with the same headers from
// bench/static-server.mjs: the reference of the pair.
//
// Search (hc.search, hc.search_rare): another workspace with the help center on and
// SEARCH_ARTICLES published English articles (default 5,000) seeded directly in SQL (the stored
// search vector is a generated column, so PostgreSQL computes it as the service's own writes
// would), then VACUUM ANALYZE. Bodies are 200 to 500 words drawn from a Zipf-like distribution
// (s = 1) over a vocabulary of 20,000 made-up words plus English function words, in 3 to 6
// paragraphs; titles 4 to 8 words. Two query words are placed on purpose: Q_HC_COMMON in 15 % of
// the articles (in a third of those also in the title), Q_HC_RARE in 5. The content is the same
// every run (a seeded generator).
import type pg from 'pg';
import { prng } from '../src/modules/triage/dedicated/linear.js';

export const Q_HC_COMMON = 'invoice';
export const Q_HC_RARE = 'kerberos';
const COMMON_SHARE = 0.15;
const RARE_COUNT = 5;
const VOCABULARY = 20_000;

/** A typical help-center article: about 5 KB of HTML. */
export const ARTICLE_TITLE = 'How to change the billing address on your invoices';
export const ARTICLE_HTML = [
  '<p>Your billing address appears on every invoice we send. If your company moved, changed its legal name or needs a different address for tax reasons, you can change it yourself at any time. The change applies to the next invoice; invoices already issued keep the address they were issued with.</p>',
  '<h2>Before you start</h2>',
  '<ul><li>You need the <strong>Owner</strong> or <strong>Billing admin</strong> role.</li><li>Have your VAT or tax number at hand if your company has one: some countries require it on the invoice.</li><li>If you pay by bank transfer, tell your bank about the new reference only after the next invoice arrives.</li></ul>',
  '<h2>Change the address</h2>',
  '<ol><li>Open <em>Settings</em> and choose <em>Billing</em>.</li><li>Under <em>Billing details</em>, select <em>Edit</em>.</li><li>Enter the new street address, postal code, city and country. Use the address exactly as it is registered with your tax authority.</li><li>If your company has a VAT number, enter it in <em>Tax ID</em>. We check it against the official register; a number that cannot be verified is saved but marked as unverified.</li><li>Select <em>Save</em>. A confirmation email goes to every billing admin.</li></ol>',
  '<p>The new address is used from the next invoice on. If you need the change on an invoice that is already issued, see <a href="https://example.com/hc/acme/articles/request-a-corrected-invoice">Request a corrected invoice</a>.</p>',
  '<h2>What changes on the invoice</h2>',
  '<table><thead><tr><th>Field</th><th>Where it comes from</th><th>Can you change it?</th></tr></thead><tbody><tr><td>Company name</td><td>Billing details</td><td>Yes</td></tr><tr><td>Address</td><td>Billing details</td><td>Yes</td></tr><tr><td>Tax ID</td><td>Billing details</td><td>Yes, verified</td></tr><tr><td>Invoice number</td><td>Assigned by us</td><td>No</td></tr><tr><td>Currency</td><td>Your plan</td><td>Contact us</td></tr></tbody></table>',
  '<h2>Using the API</h2>',
  '<p>Integrations can read and update the billing details with an API key that has the <code>billing:write</code> scope:</p>',
  '<pre><code>curl -X PATCH https://api.example.com/v1/billing/details \\\n  -H "Authorization: Bearer $KEY" \\\n  -H "Content-Type: application/json" \\\n  -d \'{"address": {"line1": "12 Harbour Street", "postal_code": "1011", "city": "Amsterdam", "country": "NL"}}\'</code></pre>',
  '<p>The answer holds the saved details, with <code>tax_id_status</code> set to <code>verified</code>, <code>unverified</code> or <code>pending</code>.</p>',
  '<h2>Frequently asked questions</h2>',
  '<h3>Can I have a different address on each invoice?</h3>',
  '<p>No: an account has one billing address at a time. If different departments need their own invoices, create one account per department and move the users that belong to it.</p>',
  '<h3>Why does my invoice still show the old address?</h3>',
  '<p>Invoices are documents with legal meaning and are never changed after they are issued. The new address shows on the next invoice; for an issued one, ask for a corrected invoice, which cancels and replaces the original.</p>',
  '<h3>Does changing the country change my prices?</h3>',
  '<p>Prices stay the same, but the tax on them may change: value added tax depends on the country in the billing address and on whether a valid tax ID is present. The next invoice shows the tax that applies.</p>',
  '<blockquote><p>Tip: download a copy of the last invoice before you change the address if your accounting needs the old one for reference.</p></blockquote>',
].join('\n');

// English function words, frequent in any help text; the stemmer drops most of them (stop words).
const FUNCTION_WORDS = (
  'the of and to a in is you that it for on with as your be this are or can by if an from at ' +
  'not have will when all which more one use they their there each then also only other new any'
).split(' ');

const CONSONANTS = ['b', 'c', 'd', 'f', 'g', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'st', 'tr', 'pl'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];

/** Made-up, pronounceable, distinct words (2 to 4 syllables), none of them a query word. */
function vocabulary(n: number, rand: () => number): string[] {
  const seen = new Set<string>([Q_HC_COMMON, Q_HC_RARE, ...FUNCTION_WORDS]);
  const out: string[] = [];
  while (out.length < n) {
    const syllables = 2 + Math.floor(rand() * 3);
    let w = '';
    for (let i = 0; i < syllables; i++)
      w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)]! + VOWELS[Math.floor(rand() * VOWELS.length)]!;
    if (rand() < 0.3) w += CONSONANTS[Math.floor(rand() * 12)]!;
    if (!seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  return out;
}

/** Zipf (s = 1) sampler over 0..n-1 through the cumulative weights. */
function zipf(n: number, rand: () => number): () => number {
  const cum = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / (i + 1);
    cum[i] = sum;
  }
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface HcSeedResult {
  articles: number;
  words_avg: number;
  body_bytes_avg: number;
  q_counts: Record<string, number>;
  ms: number;
}

/**
 * Seeds `n` published English articles in `workspaceId` (which must exist, with `collectionId` one
 * of its collections), in one transaction on `db`, then VACUUM ANALYZE kb_articles.
 */
export async function seedHelpCenterArticles(
  db: pg.Client,
  workspaceId: string,
  collectionId: string,
  n: number,
): Promise<HcSeedResult> {
  const t0 = performance.now();
  const rand = prng(23); // seeded: every run seeds the same articles
  const vocab = vocabulary(VOCABULARY, rand);
  const pickWord = zipf(VOCABULARY, rand);
  const word = () => (rand() < 0.35 ? FUNCTION_WORDS[Math.floor(rand() * FUNCTION_WORDS.length)]! : vocab[pickWord()]!);
  // Which articles hold the query words: every 1/COMMON_SHARE-th (spread), and RARE_COUNT spread ones.
  const rare = new Set(Array.from({ length: RARE_COUNT }, (_, i) => Math.floor(((i + 0.5) * n) / RARE_COUNT)));
  let words = 0;
  let bytes = 0;
  const batch = 500;
  await db.query('BEGIN');
  try {
    for (let start = 0; start < n; start += batch) {
      const titles: string[] = [];
      const slugs: string[] = [];
      const htmls: string[] = [];
      const texts: string[] = [];
      const ages: number[] = [];
      for (let i = start; i < Math.min(n, start + batch); i++) {
        const common = rand() < COMMON_SHARE;
        const title = Array.from({ length: 4 + Math.floor(rand() * 5) }, () => vocab[pickWord()]!);
        if (common && rand() < 1 / 3) title[Math.floor(rand() * title.length)] = Q_HC_COMMON;
        title[0] = title[0]!.charAt(0).toUpperCase() + title[0]!.slice(1);
        const total = 200 + Math.floor(rand() * 301);
        const body = Array.from({ length: total }, word);
        if (common) body[Math.floor(rand() * total)] = Q_HC_COMMON;
        if (rare.has(i)) body[Math.floor(rand() * total)] = Q_HC_RARE;
        const paragraphs: string[][] = [];
        const cuts = 3 + Math.floor(rand() * 4);
        for (let p = 0; p < cuts; p++)
          paragraphs.push(body.slice(Math.floor((p * total) / cuts), Math.floor(((p + 1) * total) / cuts)));
        const sentences = (ws: string[]) => {
          const s = ws.join(' ');
          return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
        };
        const html = paragraphs.map((ws) => `<p>${sentences(ws)}</p>`).join('\n');
        words += total;
        bytes += html.length;
        titles.push(title.join(' '));
        slugs.push(`${title.join('-').toLowerCase()}-${i + 1}`);
        htmls.push(html);
        texts.push(paragraphs.map(sentences).join('\n\n'));
        ages.push(n - i);
      }
      await db.query(
        `INSERT INTO kb_articles (workspace_id, id, collection_id, title, slug, body_html, body_text, status, language,
                                  published_at, created_at, updated_at)
         SELECT $1::uuid, gen_random_uuid(), $2::uuid, t.title, t.slug, t.html, t.text, 'published', 'en',
                now() - make_interval(hours => t.age), now() - make_interval(hours => t.age),
                now() - make_interval(hours => t.age)
           FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[]) AS t(title, slug, html, text, age)`,
        [workspaceId, collectionId, titles, slugs, htmls, texts, ages],
      );
    }
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
  await db.query('VACUUM ANALYZE kb_articles');
  const q_counts: Record<string, number> = {};
  for (const q of [Q_HC_COMMON, Q_HC_RARE]) {
    const r = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM kb_articles
        WHERE workspace_id = $1 AND search @@ websearch_to_tsquery('english', $2)`,
      [workspaceId, q],
    );
    q_counts[q] = r.rows[0]!.n;
  }
  return {
    articles: n,
    words_avg: Math.round(words / n),
    body_bytes_avg: Math.round(bytes / n),
    q_counts,
    ms: Math.round(performance.now() - t0),
  };
}
