// Pictures, part 2 (part 1, uploads and owners: images.test.ts, shared setup in setup.ts):
// removal, a deleted workspace's pictures, PATCH /v1/me avatar_url, and the automatic sources.
import { createHmac } from 'node:crypto';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { widgetPicture } from '../../../src/modules/images/sources.js';
import { imageKey, removeRetiredPictures } from '../../../src/modules/images/store.js';
import { makeCompany, makeContact } from '../../support/builders.js';
import { isErrorBody, newTenant, type Service, unique } from '../../support/helpers.js';
import { fixture, html, ID_RE, idOf, png, put, redirect, served, until } from '../../support/pictures.js';
import { imagesSuite } from './setup.js';

const suite = imagesSuite();
const { routes, asked } = suite;
let base: string;
let svc: Service;
let strict: Service;
beforeAll(() => {
  ({ base, svc, strict } = suite);
});

describe('removal', () => {
  it('keeps a replaced picture servable until the horizon, then removes its bytes and row', async () => {
    const t = await newTenant(svc.api, 'Removal Co');
    const first = await put(svc, '/v1/me/avatar', t.as, fixture('photo.webp'), 'a.webp', 'image/webp');
    const second = await put(svc, '/v1/me/avatar', t.as, fixture('png-named.jpg'), 'b.jpg', 'image/jpeg');
    expect(second.body.avatar_url).not.toBe(first.body.avatar_url);
    expect((await served(svc, first.body.avatar_url)).status).toBe(200);
    const deps = svc.rt.deps;
    // Within the horizon nothing in use or recently retired goes.
    await removeRetiredPictures(deps);
    expect((await served(svc, first.body.avatar_url)).status).toBe(200);
    // Past it (a day from now, with no horizon): the retired one goes, the one in use stays.
    const removed = await removeRetiredPictures(deps, { horizonMs: 0, now: new Date(Date.now() + 1000) });
    expect(removed).toBeGreaterThanOrEqual(1);
    const oldId = idOf(first.body.avatar_url);
    expect(await deps.storage.open(imageKey(oldId, 256))).toBeNull();
    expect(await deps.database.db.selectFrom('images').select('id').where('id', '=', oldId).execute()).toEqual([]);
    expect((await served(svc, first.body.avatar_url)).status).toBe(404);
    expect((await served(svc, second.body.avatar_url)).status).toBe(200);
  });
});

describe('a deleted workspace', () => {
  it("retires its logo and its contacts' pictures (gone after the horizon); its owner's own picture stays", async () => {
    const t = await newTenant(svc.api, 'Gone Soon');
    const contact = await makeContact(svc.api, t);
    const pic = await put(
      svc,
      `/v1/contacts/${contact.id}/avatar`,
      t.as,
      fixture('photo.webp'),
      'c.webp',
      'image/webp',
    );
    expect(pic.status, pic.text).toBe(200);
    const me = await put(svc, '/v1/me/avatar', t.as, fixture('photo.webp'), 'me.webp', 'image/webp');
    expect(me.status, me.text).toBe(200);
    const deps = svc.rt.deps;
    await deps.database.db.updateTable('users').set({ mfa_enabled: true }).where('id', '=', t.owner.userId).execute();
    const r = await svc.api.req('DELETE', '/v1/workspace', { ...t.as, body: { confirm_name: 'Gone Soon' } });
    expect(r.status, r.text).toBe(204);
    await removeRetiredPictures(deps, { horizonMs: 0, now: new Date(Date.now() + 1000) });
    expect((await served(svc, pic.body.avatar_url)).status).toBe(404);
    expect(await deps.storage.open(imageKey(idOf(pic.body.avatar_url), 256))).toBeNull();
    expect((await served(svc, me.body.avatar_url)).status).toBe(200);
  });
});

// ---- avatar_url: fetched server-side under the webhooks' address rules -------------------------------

describe('PATCH /v1/me avatar_url', () => {
  it('copies a picture from a URL: fetched, processed, served from here', async () => {
    const t = await newTenant(svc.api, 'Url Co');
    routes.set('/me.png', png(fixture('png-named.jpg')));
    const r = await svc.api.patch('/v1/me', { avatar_url: `${base}/me.png`, name: 'Renamed Owner' }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ name: 'Renamed Owner', avatar_source: 'upload' });
    expect(r.body.avatar_url).toMatch(ID_RE);
    expect(r.body.avatar_url).not.toContain(base);
    const got = await served(svc, r.body.avatar_url);
    expect(await sharp(got.bytes).metadata()).toMatchObject({ format: 'png', width: 256 });
    // null removes it.
    expect((await svc.api.patch('/v1/me', { avatar_url: null }, t.as)).body.avatar_url).toBeNull();
  });

  it('refuses what it fetches when it is not an acceptable picture', async () => {
    const t = await newTenant(svc.api, 'Url Bad Co');
    routes.set('/evil.svg', (res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(fixture('script.svg'));
    });
    routes.set('/big.jpg', png(fixture('six-mb.jpg')));
    const svg = await svc.api.patch('/v1/me', { avatar_url: `${base}/evil.svg` }, t.as);
    expect(svg.status).toBe(422);
    expect(svg.body.code).toBe('unsupported_image');
    const big = await svc.api.patch('/v1/me', { avatar_url: `${base}/big.jpg` }, t.as);
    expect(big.status).toBe(422);
    expect(big.body.errors[0]).toMatchObject({ location: 'body.avatar_url' });
    expect(big.body.detail).toContain('larger than 5 MB');
    const missing = await svc.api.patch('/v1/me', { avatar_url: `${base}/nothing.png` }, t.as);
    expect(missing.status).toBe(422);
    expect((await svc.api.get('/v1/me', t.as)).body.avatar_url).toBeNull();
  });

  it('refuses a redirect to a private address, to a name resolving to one, and to a local name', async () => {
    const t = await newTenant(svc.api, 'Redirect Co');
    routes.set('/to-ten-name', redirect('http://ten.test/a.png'));
    routes.set('/to-ten-ip', redirect('http://10.0.0.1/a.png'));
    routes.set('/to-localhost', redirect('http://localhost/a.png'));
    routes.set('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/'));
    for (const path of ['/to-ten-name', '/to-ten-ip', '/to-localhost', '/to-metadata']) {
      const r = await svc.api.patch('/v1/me', { avatar_url: `${base}${path}` }, t.as);
      expect(r.status, path).toBe(422);
      expect(r.body.errors[0].location).toBe('body.avatar_url');
      expect(r.body.detail).toMatch(/refused/);
    }
    // A redirect to an acceptable place is followed.
    routes.set('/pic.png', png(fixture('photo.webp')));
    routes.set('/moved', redirect('/pic.png'));
    const ok = await svc.api.patch('/v1/me', { avatar_url: `${base}/moved` }, t.as);
    expect(ok.status, ok.text).toBe(200);
  });

  it('with the production rules: refuses http://, 127.0.0.1 and a name resolving to 10.0.0.1 (422)', async () => {
    const t = await newTenant(strict.api, 'Strict Co');
    const cases = [
      'http://pics.example.com/strict.png',
      'https://127.0.0.1/strict.png',
      'https://ten.test/strict.png',
      'https://localhost/strict.png',
      'https://[::1]/strict.png',
    ];
    for (const url of cases) {
      const r = await strict.api.patch('/v1/me', { avatar_url: url }, t.as);
      expect(r.status, url).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location).toBe('body.avatar_url');
    }
    expect(asked.some((p) => p.startsWith('/strict.png'))).toBe(false);
    expect((await strict.api.get('/v1/me', t.as)).body.avatar_url).toBeNull();
  });
});

// ---- automatic sources ---------------------------------------------------------------------------

describe('automatic sources', () => {
  it('gravatar: off by default; on, a new contact with an email gets its gravatar (by SHA-256)', async () => {
    const t = await newTenant(svc.api, 'Gravatar Co');
    const email = `${unique('g')}@example.com`;
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(email).digest('hex');
    routes.set(`/avatar/${hash}`, png(fixture('photo.webp')));
    const off = await makeContact(svc.api, t, { email });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await svc.api.get(`/v1/contacts/${off.id}`, t.as)).body.avatar_url).toBeNull();
    expect(asked).not.toContain(`/avatar/${hash}`);

    await svc.api.patch('/v1/workspace', { settings: { gravatar: true } }, t.as);
    const refresh = await svc.api.post(`/v1/contacts/${off.id}/avatar/refresh`, undefined, t.as);
    expect(refresh.status).toBe(202);
    const got = await until(
      async () => (await svc.api.get(`/v1/contacts/${off.id}`, t.as)).body,
      (c) => c.avatar_url !== null,
    );
    expect(got.avatar_source).toBe('gravatar');
    expect(got.avatar_url).toMatch(ID_RE);

    // A new contact: looked up on its own.
    const email2 = `${unique('g2')}@example.com`;
    routes.set(`/avatar/${createHash('sha256').update(email2).digest('hex')}`, png(fixture('png-named.jpg')));
    const fresh = await makeContact(svc.api, t, { email: email2 });
    const seen = await until(
      async () => (await svc.api.get(`/v1/contacts/${fresh.id}`, t.as)).body,
      (c) => c.avatar_url !== null,
    );
    expect(seen.avatar_source).toBe('gravatar');

    // No gravatar (404): the picture stays null, quietly.
    const none = await makeContact(svc.api, t, { email: `${unique('none')}@example.com` });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await svc.api.get(`/v1/contacts/${none.id}`, t.as)).body.avatar_url).toBeNull();
  });

  it('an uploaded picture is never replaced by a lookup', async () => {
    const t = await newTenant(svc.api, 'Keep Co');
    await svc.api.patch('/v1/workspace', { settings: { gravatar: true } }, t.as);
    const email = `${unique('k')}@example.com`;
    const { createHash } = await import('node:crypto');
    routes.set(`/avatar/${createHash('sha256').update(email).digest('hex')}`, png(fixture('photo.webp')));
    const c = await makeContact(svc.api, t, {});
    const up = await put(svc, `/v1/contacts/${c.id}/avatar`, t.as, fixture('png-named.jpg'), 'u.png', 'image/png');
    await svc.api.patch(`/v1/contacts/${c.id}`, { email }, t.as);
    await svc.api.post(`/v1/contacts/${c.id}/avatar/refresh`, undefined, t.as);
    await new Promise((r) => setTimeout(r, 1500));
    const now = (await svc.api.get(`/v1/contacts/${c.id}`, t.as)).body;
    expect(now.avatar_url).toBe(up.body.avatar_url);
    expect(now.avatar_source).toBe('upload');
  });

  it("domain logos (on by default): the icon the domain's page names, else the PNG inside favicon.ico", async () => {
    const t = await newTenant(svc.api, 'Domains Co');
    routes.set(
      '/site/icons.test/',
      html(
        '<html><head><link rel="icon" type="image/svg+xml" href="/i.svg"><link rel="icon" sizes="32x32" href="/i32.png">' +
          '<link rel="apple-touch-icon" sizes="180x180" href="/touch.png"></head></html>',
      ),
    );
    routes.set('/touch.png', png(fixture('wide-logo.png')));
    const a = await makeCompany(svc.api, t, { name: 'Icons', domain: 'icons.test' });
    const withIcon = await until(
      async () => (await svc.api.get(`/v1/companies/${a.id}`, t.as)).body,
      (c) => c.avatar_url !== null,
    );
    expect(withIcon.avatar_source).toBe('domain');
    expect(asked).not.toContain('/i.svg');

    routes.set('/site/ico.test/', html('<html><head><title>no icons</title></head></html>'));
    routes.set('/favicon.ico', (res) => {
      res.writeHead(200, { 'content-type': 'image/x-icon' });
      res.end(fixture('favicon.ico'));
    });
    const b = await makeCompany(svc.api, t, { name: 'Ico', domain: 'ico.test' });
    const withIco = await until(
      async () => (await svc.api.get(`/v1/companies/${b.id}`, t.as)).body,
      (c) => c.avatar_url !== null,
    );
    expect(withIco.avatar_source).toBe('domain');

    // A domain with nothing to find: null, quietly; and with domain_logos off, not even asked.
    // (Every stand-in domain has the same origin: its favicon.ico goes.)
    routes.delete('/favicon.ico');
    const c = await makeCompany(svc.api, t, { name: 'Nothing', domain: 'nothing.test' });
    await svc.api.patch('/v1/workspace', { settings: { domain_logos: false } }, t.as);
    const d = await makeCompany(svc.api, t, { name: 'Off', domain: 'off.test' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await svc.api.get(`/v1/companies/${c.id}`, t.as)).body.avatar_url).toBeNull();
    expect((await svc.api.get(`/v1/companies/${d.id}`, t.as)).body.avatar_url).toBeNull();
    expect(asked).not.toContain('/site/off.test/');
    expect((await svc.api.post(`/v1/companies/${d.id}/avatar/refresh`, undefined, t.as)).status).toBe(202);
  });

  it("a verified widget identity's picture (source widget), given to POST /v1/widget/session", async () => {
    const t = await newTenant(svc.api, 'Widget Co');
    const key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key as string;
    const secret = (await svc.api.post('/v1/workspace/widget-secret/rotate', undefined, t.as)).body.widget_secret;
    const hash = createHmac('sha256', secret).update('user-7').digest('hex');
    routes.set('/widget-me.png', png(fixture('png-named.jpg')));
    // Without a verified identity, or not a URL: 422 and no visitor.
    for (const body of [
      { key, avatar_url: `${base}/widget-me.png` },
      { key, user_id: 'user-7', user_hash: hash, avatar_url: 'ftp://example.com/me.png' },
      { key, user_id: 'user-7', user_hash: hash, avatar_url: 'not a url' },
    ]) {
      const r = await svc.api.post('/v1/widget/session', body);
      expect(isErrorBody(r.body, 422, 'validation_failed'), r.text).toBe(true);
      expect(r.body.errors[0].location).toBe('body.avatar_url');
    }
    const s = await svc.api.post('/v1/widget/session', {
      key,
      user_id: 'user-7',
      user_hash: hash,
      name: 'Vera',
      avatar_url: `${base}/widget-me.png`,
    });
    expect(s.status, s.text).toBe(200);
    const got = await until(
      async () => (await svc.api.get(`/v1/contacts/${s.body.contact.id}`, t.as)).body,
      (x) => x.avatar_url !== null,
    );
    expect(got.avatar_source).toBe('widget');
    // The next session of the same person brings the picture along.
    const again = await svc.api.post('/v1/widget/session', { key, user_id: 'user-7', user_hash: hash });
    expect(again.body.contact.avatar_url).toBe(got.avatar_url);
    // A direct call (the job's entry) for another contact works the same way.
    const c = await makeContact(svc.api, t, { name: 'Wes' });
    await widgetPicture(svc.rt.deps, t.workspaceId, c.id, `${base}/widget-me.png`);
    const other = await until(
      async () => (await svc.api.get(`/v1/contacts/${c.id}`, t.as)).body,
      (x) => x.avatar_url !== null,
    );
    expect(other.avatar_source).toBe('widget');
  });
});
