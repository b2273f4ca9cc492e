// The knowledge base's routes, part 2 (part 1: kb.test.ts, shared setup in setup.ts): lists
// and search, events and audit entries, bad input.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  type Tenant,
} from '../../support/helpers.js';
import { kbSuite, SLUG } from './setup.js';

const suite = kbSuite();
const { newArticle, newCollection } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('lists and search', () => {
  let t: Tenant;
  let help: any;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await newTenant(svc.api);
    help = await newCollection(t.as, { name: 'Help' });
    const make = async (key: string, body: Record<string, unknown>) => {
      ids[key] = (await newArticle(t.as, body)).id;
    };
    await make('de', {
      title: 'Zahlung per Überweisung',
      language: 'de',
      status: 'published',
      collection_id: help.id,
      body_html: '<p>Sie können jede Rechnung per Überweisung bezahlen. Die Rechnung finden Sie im Kundenkonto.</p>',
    });
    await make('en', {
      title: 'Paying invoices',
      body_html: '<p>Invoices are paid by card. Every invoice lists its <script>x</script>due date &amp; amount.</p>',
      collection_id: help.id,
    });
    await make('ru', { title: 'Оплата счетов', language: 'ru', body_html: '<p>Счета оплачиваются картой.</p>' });
    await make('other', { title: 'Unrelated', body_html: '<p>Nothing to see here.</p>', status: 'published' });
  });

  it('filters by collection and status, newest first, in pages', async () => {
    const all = await svc.api.get('/v1/kb/articles', t.as);
    expect(all.body.data.map((a: any) => a.id)).toEqual([ids.other, ids.ru, ids.en, ids.de]);
    expect(all.body.data[0].snippet).toBeUndefined();
    const inHelp = await svc.api.get(`/v1/kb/articles?collection_id=${help.id}`, t.as);
    expect(inHelp.body.data.map((a: any) => a.id)).toEqual([ids.en, ids.de]);
    const published = await svc.api.get('/v1/kb/articles?status=published', t.as);
    expect(published.body.data.map((a: any) => a.id)).toEqual([ids.other, ids.de]);
    const both = await svc.api.get(`/v1/kb/articles?status=draft&collection_id=${help.id}`, t.as);
    expect(both.body.data.map((a: any) => a.id)).toEqual([ids.en]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await svc.api.get(`/v1/kb/articles?limit=3${cursor ? `&cursor=${cursor}` : ''}`, t.as);
      seen.push(...r.body.data.map((a: any) => a.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([ids.other, ids.ru, ids.en, ids.de]);
    const bad = await svc.api.get('/v1/kb/articles?collection_id=nope', t.as);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('query.collection_id');
    expect((await svc.api.get('/v1/kb/articles?status=archived', t.as)).status).toBe(422);
    expect((await svc.api.get('/v1/kb/articles?sort=title', t.as)).status).toBe(422);
    expect((await svc.api.get('/v1/kb/articles?cursor=abc.def', t.as)).status).toBe(422);
  });

  it('q finds German articles by their stems, ranked, with a highlighted snippet', async () => {
    const r = await svc.api.get(`/v1/kb/articles?q=${encodeURIComponent('Rechnungen bezahle')}`, t.as);
    expect(r.status).toBe(200);
    expect(r.body.data.map((a: any) => a.id)).toEqual([ids.de]);
    expect(r.body.data[0].snippet).toContain('<mark>Rechnung</mark>');
    expect(r.body.data[0].snippet).toContain('<mark>bezahlen</mark>');
    // Russian and English stems too; each article only in its own language.
    const ru = await svc.api.get(`/v1/kb/articles?q=${encodeURIComponent('счет')}`, t.as);
    expect(ru.body.data.map((a: any) => a.id)).toEqual([ids.ru]);
    const en = await svc.api.get('/v1/kb/articles?q=invoice', t.as);
    expect(en.body.data.map((a: any) => a.id)).toEqual([ids.en]);
    // The snippet is escaped text: the body's & stays an entity, no tags but <mark>.
    expect(en.body.data[0].snippet).toContain('&amp;');
    expect(en.body.data[0].snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    // Filters apply to q too; nothing found is an empty page.
    expect((await svc.api.get('/v1/kb/articles?q=invoice&status=published', t.as)).body.data).toEqual([]);
    expect((await svc.api.get('/v1/kb/articles?q=zebra', t.as)).body).toEqual({ data: [], next_cursor: null });
    // Words that are no words (stop words, punctuation, query syntax) find nothing, never a 500.
    for (const q of ['the', '!!!', "'", 'a:*', '"unclosed', '-', 'or or', '<mark>']) {
      const r2 = await svc.api.get(`/v1/kb/articles?q=${encodeURIComponent(q)}`, t.as);
      expect(r2.status, q).toBe(200);
      expect(r2.body.data, q).toEqual([]);
    }
  });

  it('q ranks title matches first and pages through the ranking', async () => {
    const s = await newTenant(svc.api);
    await newArticle(s.as, { title: 'Other topic', body_html: '<p>Mentions refunds once.</p>' });
    const best = await newArticle(s.as, { title: 'Refunds', body_html: '<p>How refunds work: refunds take days.</p>' });
    await newArticle(s.as, { title: 'Third', body_html: '<p>A refund, maybe.</p>' });
    const r1 = await svc.api.get('/v1/kb/articles?q=refund&limit=1', s.as);
    expect(r1.body.data.map((a: any) => a.id)).toEqual([best.id]);
    const rest: string[] = [];
    let cursor = r1.body.next_cursor;
    while (cursor) {
      const r = await svc.api.get(`/v1/kb/articles?q=refund&limit=1&cursor=${cursor}`, s.as);
      rest.push(...r.body.data.map((a: any) => a.id));
      cursor = r.body.next_cursor;
    }
    expect(rest).toHaveLength(2);
    expect(rest).not.toContain(best.id);
  });

  it('GET /v1/search lists articles (drafts too) for those who may read the knowledge base', async () => {
    const r = await svc.api.get(`/v1/search?q=${encodeURIComponent('Rechnungen')}`, t.as);
    expect(r.status).toBe(200);
    expect(r.body.articles).toEqual([
      {
        id: ids.de,
        title: 'Zahlung per Überweisung',
        slug: 'zahlung-per-ueberweisung',
        excerpt: expect.stringContaining('Rechnung'),
        status: 'published',
        snippet: expect.stringContaining('<mark>Rechnung</mark>'),
      },
    ]);
    expect((await svc.api.get('/v1/search?q=invoices', t.as)).body.articles.map((a: any) => a.id)).toEqual([ids.en]);
    const kbKey = { token: (await newApiKey(svc.api, t, ['kb:read'])).key };
    const kb = await svc.api.get('/v1/search?q=invoice', kbKey);
    expect(kb.status).toBe(200);
    expect(kb.body).toMatchObject({ tickets: [], contacts: [], articles: [{ id: ids.en }] });
    const ticketsKey = { token: (await newApiKey(svc.api, t, ['tickets:read'])).key };
    expect((await svc.api.get('/v1/search?q=invoice', ticketsKey)).body.articles).toEqual([]);
  });
});

describe('events and audit', () => {
  it('kb_collection.* and kb_article.* carry the records (ids on delete); each change is audit-logged', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const c = await newCollection(t.as, { name: 'Events' });
    const a = await newArticle(t.as, { title: 'Evented', collection_id: c.id });
    const changed = (await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'published' }, t.as)).body;
    const cChanged = (await svc.api.patch(`/v1/kb/collections/${c.id}`, { name: 'Events!' }, t.as)).body;
    // A PATCH that changes nothing emits nothing.
    await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'published' }, t.as);
    await svc.api.delete(`/v1/kb/articles/${a.id}`, t.as);
    await svc.api.delete(`/v1/kb/collections/${c.id}`, t.as);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.visibility])).toEqual([
      ['kb_collection.created', 'agents'],
      ['kb_article.created', 'agents'],
      ['kb_article.updated', 'agents'],
      ['kb_collection.updated', 'agents'],
      ['kb_article.deleted', 'agents'],
      ['kb_collection.deleted', 'agents'],
    ]);
    expect(events[0].data).toEqual({ kb_collection: c });
    expect(events[1].data).toEqual({ kb_article: a });
    expect(events[2].data).toEqual({ kb_article: changed });
    expect(events[3].data).toEqual({ kb_collection: cChanged });
    expect(events[4].data).toEqual({ kb_article_id: a.id });
    expect(events[5].data).toEqual({ kb_collection_id: c.id });

    // A key with kb:read replays them; one without sees stand-ins.
    const kbKey = { token: (await newApiKey(svc.api, t, ['kb:read'])).key };
    const replay = await svc.api.get(`/v1/events?since=${seq}`, kbKey);
    expect(replay.body.data.map((e: any) => e.type).filter((x: string) => x.startsWith('kb_'))).toHaveLength(6);

    const audit = await svc.api.get('/v1/audit-logs?entity_type=kb_article', t.as);
    expect(audit.body.data.map((e: any) => e.action)).toEqual([
      'kb_article.deleted',
      'kb_article.updated',
      'kb_article.created',
    ]);
    expect(audit.body.data[1]).toMatchObject({
      entity_id: a.id,
      actor: { type: 'user', user: { id: t.owner.userId } },
      data: { status: { from: 'draft', to: 'published' } },
    });
    const cAudit = await svc.api.get('/v1/audit-logs?entity_type=kb_collection', t.as);
    expect(cAudit.body.data.map((e: any) => e.action)).toEqual([
      'kb_collection.deleted',
      'kb_collection.updated',
      'kb_collection.created',
    ]);
  });
});

describe('bad input', () => {
  it('422 with locations for bad and unknown fields; titles are kept as text', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[string, unknown, string]> = [
      ['/v1/kb/articles', {}, 'body.title'],
      ['/v1/kb/articles', { title: '' }, 'body.title'],
      ['/v1/kb/articles', { title: '   ' }, 'body.title'],
      ['/v1/kb/articles', { title: 'x'.repeat(201) }, 'body.title'],
      ['/v1/kb/articles', { title: 'x', status: 'archived' }, 'body.status'],
      ['/v1/kb/articles', { title: 'x', language: 'xx' }, 'body.language'],
      ['/v1/kb/articles', { title: 'x', views: 5 }, 'body.views'],
      ['/v1/kb/articles', { title: 'x', collection_id: 'nope' }, 'body.collection_id'],
      ['/v1/kb/articles', { title: 'x', collection_id: randomUUID() }, 'body.collection_id'],
      ['/v1/kb/articles', { title: 'x', excerpt: 'e'.repeat(501) }, 'body.excerpt'],
      ['/v1/kb/articles', { title: 'x', slug: 'Not A Slug' }, 'body.slug'],
      ['/v1/kb/collections', {}, 'body.name'],
      ['/v1/kb/collections', { name: 'x', article_count: 3 }, 'body.article_count'],
      ['/v1/kb/collections', { name: 'x', position: -1 }, 'body.position'],
    ];
    for (const [path, body, location] of cases) {
      const r = await svc.api.post(path, body, t.as);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors.map((e: any) => e.location)).toContain(location);
    }
    const a = await newArticle(t.as, { title: '<img src=x onerror=alert(1)> & "quotes"' });
    expect(a.title).toBe('<img src=x onerror=alert(1)> & "quotes"');
    expect(a.slug).toMatch(SLUG);
    expect((await svc.api.patch(`/v1/kb/articles/${a.id}`, { author: null }, t.as)).status).toBe(422);
  });

  it('sanitizes body_html before storing it (OWASP vectors)', async () => {
    const t = await newTenant(svc.api);
    const vectors = [
      '<script>alert(1)</script><p>safe</p>',
      '<img src=x onerror="alert(1)">',
      '<a href="javascript:alert(1)">x</a>',
      '<a href="jav&#x09;ascript:alert(1)">x</a>',
      '<svg/onload=alert(1)>',
      '<iframe src="javascript:alert(1)"></iframe>',
      '<div style="background:url(javascript:alert(1))">x</div>',
      '<body onload=alert(1)>',
      '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    ];
    for (const html of vectors) {
      const a = await newArticle(t.as, { title: 'XSS', body_html: `<p>ok</p>${html}` });
      expect(a.body_html, html).not.toMatch(/<script|onerror|onload|javascript:|<iframe|<svg/i);
      const row = await svc.rt.deps.database.db
        .selectFrom('kb_articles')
        .select('body_html')
        .where('id', '=', a.id)
        .executeTakeFirstOrThrow();
      expect(row.body_html).toBe(a.body_html);
    }
  });
});
