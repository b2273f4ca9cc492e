// /v1/kb/collections and /v1/kb/articles: the shapes, who may read and write, slugs (generated,
// transliterated, unique, editable, old ones kept), published_at, article_count under concurrent
// writes, filters and search in each article's language with snippets, /v1/search, events,
// audit entries, the onboarding step, tenant isolation and bad input.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { findArticleBySlug } from '../../../src/modules/kb/articles.js';
import { addMember, isErrorBody, newApiKey, newTenant, type Service } from '../../support/helpers.js';
import { ID, kbSuite, SLUG } from './setup.js';

const suite = kbSuite();
const { newArticle, newCollection } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('collections and articles: create, read, change, delete', () => {
  it('creates a collection and an article (201, Location) with the contract’s fields', async () => {
    const t = await newTenant(svc.api);
    const c = await svc.api.post('/v1/kb/collections', { name: '  Billing  ', description: 'Money matters' }, t.as);
    expect(c.status).toBe(201);
    expect(c.headers.get('location')).toBe(`/v1/kb/collections/${c.body.id}`);
    expect(c.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Billing',
      slug: 'billing',
      description: 'Money matters',
      position: 0,
      article_count: 0,
    });

    const a = await svc.api.post(
      '/v1/kb/articles',
      { collection_id: c.body.id, title: 'How to pay an invoice', body_html: '<p>Open <b>Billing</b>, then pay.</p>' },
      t.as,
    );
    expect(a.status).toBe(201);
    expect(a.headers.get('location')).toBe(`/v1/kb/articles/${a.body.id}`);
    expect(a.body).toEqual({
      id: expect.stringMatching(ID),
      collection_id: c.body.id,
      title: 'How to pay an invoice',
      slug: 'how-to-pay-an-invoice',
      excerpt: 'Open Billing, then pay.',
      body_html: '<p>Open <b>Billing</b>, then pay.</p>',
      status: 'draft',
      language: 'en',
      author: { id: t.owner.userId, name: 'Olivia Owner', email: t.owner.email, avatar_url: null },
      views: 0,
      published_at: null,
      updated_at: expect.stringMatching(/Z$/),
    });
    expect((await svc.api.get(`/v1/kb/articles/${a.body.id}`, t.as)).body).toEqual(a.body);
    expect((await svc.api.get(`/v1/kb/articles/${a.body.id.toUpperCase()}`, t.as)).body).toEqual(a.body);
    expect((await svc.api.get(`/v1/kb/collections/${c.body.id}`, t.as)).body).toMatchObject({ article_count: 1 });

    // Only the title is required.
    const bare = await newArticle(t.as, { title: 'Bare' });
    expect(bare).toMatchObject({ collection_id: null, excerpt: '', body_html: '', status: 'draft' });
  });

  it('a second collection goes after the last; PATCH changes fields; lists are in position order', async () => {
    const t = await newTenant(svc.api);
    const a = await newCollection(t.as, { name: 'Getting started' });
    const b = await newCollection(t.as, { name: 'Account' });
    expect([a.position, b.position]).toEqual([0, 1]);
    const p = await svc.api.patch(
      `/v1/kb/collections/${b.id}`,
      { position: 0, name: 'Your account', description: null },
      t.as,
    );
    expect(p.status).toBe(200);
    // The name changed, the slug stays until one is given.
    expect(p.body).toMatchObject({ name: 'Your account', slug: 'account', position: 0, description: null });
    await svc.api.patch(`/v1/kb/collections/${a.id}`, { position: 5, slug: 'start-here' }, t.as);
    const list = await svc.api.get('/v1/kb/collections', t.as);
    expect(list.body.data.map((c: any) => c.slug)).toEqual(['account', 'start-here']);
    expect(list.body.next_cursor).toBeNull();
    const page1 = await svc.api.get('/v1/kb/collections?limit=1', t.as);
    expect(page1.body.data.map((c: any) => c.slug)).toEqual(['account']);
    const page2 = await svc.api.get(`/v1/kb/collections?limit=1&cursor=${page1.body.next_cursor}`, t.as);
    expect(page2.body).toEqual({ data: [expect.objectContaining({ slug: 'start-here' })], next_cursor: null });
  });

  it('deleting: an article goes (204, then 404); a collection holding articles is a 409, empty it goes', async () => {
    const t = await newTenant(svc.api);
    const c = await newCollection(t.as, { name: 'Old stuff' });
    const a = await newArticle(t.as, { title: 'Gone soon', collection_id: c.id });
    const refused = await svc.api.delete(`/v1/kb/collections/${c.id}`, t.as);
    expect(refused.status).toBe(409);
    expect(isErrorBody(refused.body, 409, 'conflict')).toBe(true);
    expect((await svc.api.delete(`/v1/kb/articles/${a.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get(`/v1/kb/articles/${a.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/kb/articles/${a.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/kb/collections/${c.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get(`/v1/kb/collections/${c.id}`, t.as)).status).toBe(404);
  });

  it('excerpt: given, or the start of the body’s text (about 200 characters); null derives it again', async () => {
    const t = await newTenant(svc.api);
    const long = 'Lorem ipsum dolor sit amet. '.repeat(20);
    const a = await newArticle(t.as, { title: 'Long', body_html: `<h2>Intro</h2><p>${long}</p>` });
    expect(a.excerpt.startsWith('Intro Lorem ipsum')).toBe(true);
    expect([...a.excerpt].length).toBeLessThanOrEqual(200);
    expect(a.excerpt.endsWith('…')).toBe(true);
    const given = await svc.api.patch(`/v1/kb/articles/${a.id}`, { excerpt: '  A short summary.  ' }, t.as);
    expect(given.body.excerpt).toBe('A short summary.');
    const body = await svc.api.patch(`/v1/kb/articles/${a.id}`, { body_html: '<p>New body</p>' }, t.as);
    expect(body.body.excerpt).toBe('A short summary.');
    const derived = await svc.api.patch(`/v1/kb/articles/${a.id}`, { excerpt: null }, t.as);
    expect(derived.body.excerpt).toBe('New body');
  });
});

describe('who may read and write', () => {
  it('members: viewers read (drafts too), agents and up write; keys: kb:read reads, kb:write writes', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent', 'Alex Agent');
    const draft = await newArticle(t.as, { title: 'Draft only' });

    expect((await svc.api.get(`/v1/kb/articles/${draft.id}`, viewer.as)).status).toBe(200);
    expect((await svc.api.get('/v1/kb/articles', viewer.as)).body.data).toHaveLength(1);
    const denied = await svc.api.post('/v1/kb/articles', { title: 'Nope' }, viewer.as);
    expect(denied.status).toBe(403);
    expect(isErrorBody(denied.body, 403, 'forbidden')).toBe(true);
    expect((await svc.api.patch(`/v1/kb/articles/${draft.id}`, { title: 'x' }, viewer.as)).status).toBe(403);
    expect((await svc.api.post('/v1/kb/collections', { name: 'Nope' }, viewer.as)).status).toBe(403);

    const byAgent = await svc.api.post('/v1/kb/articles', { title: 'By an agent' }, agent.as);
    expect(byAgent.status).toBe(201);
    expect(byAgent.body.author).toMatchObject({ id: agent.userId, name: 'Alex Agent' });
    expect((await svc.api.post('/v1/kb/collections', { name: 'Agents too' }, agent.as)).status).toBe(201);

    const reader = { token: (await newApiKey(svc.api, t, ['kb:read'])).key };
    const writer = { token: (await newApiKey(svc.api, t, ['kb:write'])).key };
    const other = { token: (await newApiKey(svc.api, t, ['tickets:write', 'contacts:write', 'settings:write'])).key };
    expect((await svc.api.get('/v1/kb/articles', reader)).body.data).toHaveLength(2);
    expect((await svc.api.get('/v1/kb/collections', reader)).status).toBe(200);
    expect((await svc.api.post('/v1/kb/articles', { title: 'No' }, reader)).status).toBe(403);
    expect((await svc.api.get('/v1/kb/articles', other)).status).toBe(403);
    expect((await svc.api.post('/v1/kb/collections', { name: 'No' }, other)).status).toBe(403);
    const byKey = await svc.api.post('/v1/kb/articles', { title: 'By a key' }, writer);
    expect(byKey.status).toBe(201);
    expect(byKey.body.author).toBeNull();
    expect((await svc.api.get(`/v1/kb/articles/${byKey.body.id}`, writer)).status).toBe(200);
    expect((await svc.api.get('/v1/kb/articles', {})).status).toBe(401);
  });

  it('another workspace’s collections and articles answer 404, as do unknown ids', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const c = await newCollection(t.as, { name: 'Private' });
    const a = await newArticle(t.as, { title: 'Private article', collection_id: c.id });
    for (const path of [`/v1/kb/articles/${a.id}`, `/v1/kb/collections/${c.id}`]) {
      expect((await svc.api.get(path, other.as)).status).toBe(404);
      expect((await svc.api.patch(path, {}, other.as)).status).toBe(404);
      expect((await svc.api.delete(path, other.as)).status).toBe(404);
    }
    for (const id of [randomUUID(), 'not-an-id']) {
      expect((await svc.api.get(`/v1/kb/articles/${id}`, t.as)).status).toBe(404);
      expect((await svc.api.get(`/v1/kb/collections/${id}`, t.as)).status).toBe(404);
    }
    // Nor can an article be put into another workspace's collection.
    const foreign = await svc.api.post('/v1/kb/articles', { title: 'x', collection_id: c.id }, other.as);
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors[0].location).toBe('body.collection_id');
    expect((await svc.api.get('/v1/kb/articles', other.as)).body.data).toEqual([]);
    expect((await svc.api.get(`/v1/kb/articles?collection_id=${c.id}`, other.as)).body.data).toEqual([]);
    expect((await svc.api.get('/v1/kb/articles?q=private', other.as)).body.data).toEqual([]);
    expect((await svc.api.get('/v1/search?q=private', other.as)).body.articles).toEqual([]);
  });
});

describe('slugs', () => {
  it('are made of lower-case ASCII from accented, German and Cyrillic titles; empty ones fall back', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[string, string]> = [
      ['Ça va déjà? Résumé', 'ca-va-deja-resume'],
      ['Größe der Rechnungen für Österreich', 'groesse-der-rechnungen-fuer-oesterreich'],
      ['Как оплатить счёт', 'kak-oplatit-schyot'],
      ['日本語', 'article'],
    ];
    for (const [title, slug] of cases) {
      const a = await newArticle(t.as, { title });
      expect(a.slug).toBe(slug);
      expect(a.title).toBe(title);
    }
    const long = await newArticle(t.as, { title: 'word '.repeat(35) });
    expect(long.slug).toMatch(SLUG);
    expect(long.slug.length).toBeLessThanOrEqual(80);
    const c = await newCollection(t.as, { name: 'Über uns' });
    expect(c.slug).toBe('ueber-uns');
  });

  it('a generated slug that is taken gets -2, -3; a given one that is taken is a 409', async () => {
    const t = await newTenant(svc.api);
    const slugs = [];
    for (let i = 0; i < 3; i++) slugs.push((await newArticle(t.as, { title: 'Reset your password' })).slug);
    expect(slugs).toEqual(['reset-your-password', 'reset-your-password-2', 'reset-your-password-3']);
    const taken = await svc.api.post('/v1/kb/articles', { title: 'Other', slug: 'reset-your-password' }, t.as);
    expect(taken.status).toBe(409);
    expect(isErrorBody(taken.body, 409, 'conflict')).toBe(true);
    // Collections and articles have their own slugs; another workspace has its own too.
    expect((await newCollection(t.as, { name: 'Reset your password' })).slug).toBe('reset-your-password');
    expect((await newCollection(t.as, { name: 'Reset your password' })).slug).toBe('reset-your-password-2');
    const other = await newTenant(svc.api);
    expect((await newArticle(other.as, { title: 'Reset your password' })).slug).toBe('reset-your-password');
  });

  it("a collection never takes the address of one of the help center's own pages", async () => {
    const t = await newTenant(svc.api);
    // Generated: the next free suffix.
    expect((await newCollection(t.as, { name: 'Search' })).slug).toBe('search-2');
    expect((await newCollection(t.as, { name: 'Requests' })).slug).toBe('requests-2');
    // Given: refused, at the field, and nothing is created or changed.
    for (const slug of ['new', 'requests', 'search', 'articles', 'assets']) {
      const r = await svc.api.post('/v1/kb/collections', { name: 'Reserved', slug }, t.as);
      expect(r.status, slug).toBe(422);
      expect(r.body.errors[0].location).toBe('body.slug');
    }
    const c = await newCollection(t.as, { name: 'Billing' });
    const patched = await svc.api.patch(`/v1/kb/collections/${c.id}`, { slug: 'new' }, t.as);
    expect(patched.status).toBe(422);
    expect((await svc.api.get(`/v1/kb/collections/${c.id}`, t.as)).body.slug).toBe('billing');
    const names = (await svc.api.get('/v1/kb/collections', t.as)).body.data.map((x: any) => x.name);
    expect(names).toEqual(['Search', 'Requests', 'Billing']);
  });

  it('concurrent creates with one title all succeed with distinct slugs', async () => {
    const t = await newTenant(svc.api);
    const rs = await Promise.all(
      Array.from({ length: 12 }, () => svc.api.post('/v1/kb/articles', { title: 'Same title' }, t.as)),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(12).fill(201));
    const slugs = rs.map((r) => r.body.slug).sort();
    expect(new Set(slugs).size).toBe(12);
    expect(slugs).toContain('same-title');
    for (const s of slugs) expect(s).toMatch(/^same-title(-([2-9]|1[0-2]))?$/);
    const cs = await Promise.all(
      Array.from({ length: 6 }, () => svc.api.post('/v1/kb/collections', { name: 'Same name' }, t.as)),
    );
    expect(cs.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(new Set(cs.map((r) => r.body.slug)).size).toBe(6);
  });

  it('follow the title, can be edited (422 outside the alphabet), and old slugs still find the article', async () => {
    const t = await newTenant(svc.api);
    const a = await newArticle(t.as, { title: 'Shipping times' });
    const renamed = await svc.api.patch(`/v1/kb/articles/${a.id}`, { title: 'Delivery times' }, t.as);
    expect(renamed.body.slug).toBe('delivery-times');
    const edited = await svc.api.patch(`/v1/kb/articles/${a.id}`, { slug: 'when-will-it-arrive' }, t.as);
    expect(edited.status).toBe(200);
    expect(edited.body.slug).toBe('when-will-it-arrive');
    for (const bad of ['Upper', 'with space', 'ü', '-lead', 'trail-', 'dou--ble', '', 'a'.repeat(101)]) {
      const r = await svc.api.patch(`/v1/kb/articles/${a.id}`, { slug: bad }, t.as);
      expect(r.status).toBe(422);
      expect(r.body.errors[0].location).toBe('body.slug');
    }
    expect((await svc.api.patch(`/v1/kb/collections/${randomUUID()}`, { slug: 'Bad Slug' }, t.as)).status).toBe(422);

    const db = svc.rt.deps.database.db;
    for (const old of ['shipping-times', 'delivery-times']) {
      const found = await findArticleBySlug(svc.rt.deps, t.workspaceId, old);
      expect(found).toEqual({ article: expect.objectContaining({ id: a.id, slug: 'when-will-it-arrive' }), old: true });
    }
    expect(await findArticleBySlug(svc.rt.deps, t.workspaceId, 'when-will-it-arrive')).toMatchObject({ old: false });
    expect(await findArticleBySlug(svc.rt.deps, t.workspaceId, 'never-was')).toBeNull();
    const other = await newTenant(svc.api);
    expect(await findArticleBySlug(svc.rt.deps, other.workspaceId, 'shipping-times')).toBeNull();
    // A new article does not take an old slug (old links keep going to the first one) ...
    expect((await newArticle(t.as, { title: 'Shipping times' })).slug).toBe('shipping-times-2');
    // ... unless it is given: then the slug is that article's.
    const taker = await newArticle(t.as, { title: 'Anything', slug: 'delivery-times' });
    expect(await findArticleBySlug(svc.rt.deps, t.workspaceId, 'delivery-times')).toMatchObject({
      article: { id: taker.id },
      old: false,
    });
    expect(
      await db
        .selectFrom('kb_article_slugs')
        .select('slug')
        .where('workspace_id', '=', t.workspaceId)
        .orderBy('slug')
        .execute(),
    ).toEqual([{ slug: 'shipping-times' }]);
    // Back to a slug it had: current again, nothing left behind for it.
    await svc.api.patch(`/v1/kb/articles/${a.id}`, { slug: 'shipping-times' }, t.as);
    expect(await findArticleBySlug(svc.rt.deps, t.workspaceId, 'shipping-times')).toMatchObject({ old: false });
    expect(await findArticleBySlug(svc.rt.deps, t.workspaceId, 'when-will-it-arrive')).toMatchObject({
      article: { id: a.id },
      old: true,
    });
  });
});

describe('publishing', () => {
  it('published_at is set on the first publication only; unpublishing keeps it', async () => {
    const t = await newTenant(svc.api);
    const a = await newArticle(t.as, { title: 'Publish me' });
    expect(a.published_at).toBeNull();
    const pub = await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'published' }, t.as);
    expect(pub.body.status).toBe('published');
    const first = pub.body.published_at;
    expect(first).toMatch(/Z$/);
    const unpub = await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'draft' }, t.as);
    expect(unpub.body).toMatchObject({ status: 'draft', published_at: first });
    await new Promise((r) => setTimeout(r, 5));
    const again = await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'published' }, t.as);
    expect(again.body).toMatchObject({ status: 'published', published_at: first });
    const direct = await newArticle(t.as, { title: 'Straight out', status: 'published' });
    expect(direct.published_at).toMatch(/Z$/);
  });

  it('onboarding: publish_article turns done at the first publication', async () => {
    const t = await newTenant(svc.api);
    const done = async () =>
      (await svc.api.get('/v1/onboarding', t.as)).body.steps.find((s: any) => s.id === 'publish_article').done;
    expect(await done()).toBe(false);
    const a = await newArticle(t.as, { title: 'Draft' });
    expect(await done()).toBe(false);
    await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'published' }, t.as);
    expect(await done()).toBe(true);
  });
});

describe('article_count', () => {
  it('counts drafts and published articles, right under concurrent creates, moves and deletes', async () => {
    const t = await newTenant(svc.api);
    const a = await newCollection(t.as, { name: 'A' });
    const b = await newCollection(t.as, { name: 'B' });
    const created = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        svc.api.post(
          '/v1/kb/articles',
          { title: `Article ${i}`, collection_id: a.id, status: i % 2 ? 'published' : 'draft' },
          t.as,
        ),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(16).fill(201));
    const count = async (id: string) => (await svc.api.get(`/v1/kb/collections/${id}`, t.as)).body.article_count;
    expect(await count(a.id)).toBe(16);
    const ids = created.map((r) => r.body.id);
    const writes = await Promise.all([
      ...ids.slice(0, 6).map((id) => svc.api.patch(`/v1/kb/articles/${id}`, { collection_id: b.id }, t.as)),
      ...ids.slice(6, 10).map((id) => svc.api.delete(`/v1/kb/articles/${id}`, t.as)),
      ...ids.slice(10, 12).map((id) => svc.api.patch(`/v1/kb/articles/${id}`, { collection_id: null }, t.as)),
      ...Array.from({ length: 3 }, (_, i) =>
        svc.api.post('/v1/kb/articles', { title: `New ${i}`, collection_id: b.id }, t.as),
      ),
    ]);
    expect(writes.every((r) => r.status < 300)).toBe(true);
    expect(await count(a.id)).toBe(4);
    expect(await count(b.id)).toBe(9);
    const list = await svc.api.get('/v1/kb/collections', t.as);
    expect(list.body.data.map((c: any) => c.article_count)).toEqual([4, 9]);
    expect((await svc.api.get('/v1/kb/articles?collection_id=none', t.as)).body.data).toHaveLength(2);
  });
});
