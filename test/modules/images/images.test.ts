import { request as httpRequest } from 'node:http';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeCompany, makeContact } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newTenant,
  type Service,
  type Tenant,
  unique,
} from '../../support/helpers.js';
import { fixture, headersOf, ID_RE, put, served } from '../../support/pictures.js';
import { imagesSuite } from './setup.js';

const suite = imagesSuite();
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

const auditActions = async (s: Service, t: Tenant) =>
  ((await s.api.get('/v1/audit-logs?limit=100', t.as)).body.data as Array<{ action: string; entity_id: string }>).map(
    (e) => e.action,
  );

describe('uploads', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant(svc.api, 'Pictures Inc');
  });

  it('accepts a PNG named .jpg by its content, serves 256 and 64 px PNGs with the spec headers', async () => {
    const r = await put(svc, '/v1/me/avatar', t.as, fixture('png-named.jpg'), 'me.jpg', 'image/jpeg');
    expect(r.status, r.text).toBe(200);
    expect(r.body.avatar_source).toBe('upload');
    expect(r.body.avatar_url).toMatch(ID_RE);
    const big = await served(svc, r.body.avatar_url);
    expect(big.status).toBe(200);
    expect(big.headers.get('content-type')).toBe('image/png');
    expect(big.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(big.headers.get('x-content-type-options')).toBe('nosniff');
    expect(big.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(Number(big.headers.get('content-length'))).toBe(big.bytes.length);
    expect(await sharp(big.bytes).metadata()).toMatchObject({ format: 'png', width: 256, height: 256 });
    const small = await served(svc, r.body.avatar_url, 64);
    expect(await sharp(small.bytes).metadata()).toMatchObject({ format: 'png', width: 64, height: 64 });
    // ETag: the same answer is not sent twice.
    const etag = big.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f-]{36}-256"$/);
    const again = await served(svc, r.body.avatar_url, 256, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(again.bytes.length).toBe(0);
    expect((await served(svc, r.body.avatar_url, 64, { 'if-none-match': etag })).status).toBe(200);
  });

  it('refuses an SVG with a script, whatever its name and type say (422 unsupported_image)', async () => {
    for (const [name, type] of [
      ['evil.svg', 'image/svg+xml'],
      ['evil.png', 'image/png'],
    ]) {
      const r = await put(svc, '/v1/me/avatar', t.as, fixture('script.svg'), name!, type!);
      expect(r.status, r.text).toBe(422);
      expect(isErrorBody(r.body, 422, 'unsupported_image')).toBe(true);
    }
  });

  it('refuses a 1x1 PNG (422 image_too_large: under 16 px)', async () => {
    const r = await put(svc, '/v1/me/avatar', t.as, fixture('one-pixel.png'), 'dot.png', 'image/png');
    expect(r.status, r.text).toBe(422);
    expect(isErrorBody(r.body, 422, 'image_too_large')).toBe(true);
  });

  it('refuses a 20,000 x 20,000 PNG header from the header alone, before any pixel is decoded', async () => {
    const started = performance.now();
    const r = await put(svc, '/v1/me/avatar', t.as, fixture('huge-header.png'), 'huge.png', 'image/png');
    expect(r.status, r.text).toBe(422);
    expect(isErrorBody(r.body, 422, 'image_too_large')).toBe(true);
    expect(r.body.detail).toContain('20000 x 20000');
    // Decoding 400 megapixels would take seconds and 1.6 GB.
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('applies the 4,096 px side limit and the 16-megapixel limit each on its own, up to the limit included', async () => {
    // A plain colour compresses to a few kilobytes, whatever its size.
    const plain = (width: number, height: number) =>
      sharp({ create: { width, height, channels: 3, background: '#3b82f6' } })
        .png()
        .toBuffer();
    const avatarNow = async () => (await svc.api.get('/v1/me', { token: t.owner.token })).body.avatar_url;
    const before = await avatarNow();
    for (const [width, height, why] of [
      // 100,000 pixels: only the side is over.
      [5000, 20, 'side'],
      [20, 5000, 'side'],
      // 4,096 a side at most, 16,388,096 pixels: only the pixel count is over.
      [4096, 4001, 'megapixels'],
    ] as const) {
      const r = await put(svc, '/v1/me/avatar', t.as, await plain(width, height), 'big.png', 'image/png');
      expect(r.status, `${width} x ${height} (${why})`).toBe(422);
      expect(isErrorBody(r.body, 422, 'image_too_large')).toBe(true);
      expect(r.body.detail).toContain(`${width} x ${height}`);
    }
    expect(await avatarNow()).toBe(before);
    // Exactly at each limit: accepted and stored (4,000 x 4,000 is 16,000,000 pixels).
    for (const [width, height] of [
      [4096, 20],
      [4000, 4000],
    ] as const) {
      const r = await put(svc, '/v1/me/avatar', t.as, await plain(width, height), 'ok.png', 'image/png');
      expect(r.status, `${width} x ${height}: ${r.text}`).toBe(200);
      expect(r.body.avatar_url).toMatch(/\/v1\/images\//);
      expect(r.body.avatar_url).not.toBe(before);
    }
  });

  it('refuses a truncated JPEG (422 unsupported_image)', async () => {
    const r = await put(svc, '/v1/me/avatar', t.as, fixture('truncated.jpg'), 'half.jpg', 'image/jpeg');
    expect(r.status, r.text).toBe(422);
    expect(isErrorBody(r.body, 422, 'unsupported_image')).toBe(true);
  });

  it('refuses a 6 MB file with 413 too_large, also when streamed without a length', async () => {
    const six = fixture('six-mb.jpg');
    const r = await put(svc, '/v1/me/avatar', t.as, six, 'big.jpg', 'image/jpeg');
    expect(r.status, r.text).toBe(413);
    expect(isErrorBody(r.body, 413, 'too_large')).toBe(true);
    // Chunked: no Content-Length to refuse early; the upload stops at 5 MB while it streams.
    const streamed = await new Promise<{ status: number; body: string; sent: number }>((done, fail) => {
      const req = httpRequest(`${svc.url}/v1/me/avatar`, {
        method: 'PUT',
        headers: { ...headersOf(t.as), 'content-type': 'multipart/form-data; boundary=xyz' },
      });
      let sent = 0;
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body, sent }));
      });
      req.on('error', fail);
      req.write('--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.jpg"\r\n\r\n');
      const step = 256 * 1024;
      const pump = () => {
        while (sent < six.length) {
          const piece = six.subarray(sent, sent + step);
          sent += piece.length;
          if (!req.write(piece)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end('\r\n--xyz--\r\n');
      };
      pump();
    });
    expect(streamed.status).toBe(413);
    expect(isErrorBody(JSON.parse(streamed.body), 413, 'too_large')).toBe(true);
  });

  it('serves a GIF/JavaScript polyglot only as the re-encoded PNG', async () => {
    const poly = fixture('polyglot.gif');
    expect(poly.toString('latin1')).toContain('alert(document.domain)');
    const r = await put(svc, '/v1/me/avatar', t.as, poly, 'cat.gif', 'image/gif');
    expect(r.status, r.text).toBe(200);
    for (const size of [256, 64] as const) {
      const got = await served(svc, r.body.avatar_url, size);
      expect(got.headers.get('content-type')).toBe('image/png');
      expect(got.bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(got.bytes.toString('latin1')).not.toContain('alert');
      expect(got.bytes.toString('latin1')).not.toContain('GIF89a');
    }
  });

  it('serves a JPEG with GPS EXIF without it (no metadata at all)', async () => {
    const gps = fixture('gps.jpg');
    expect(gps.toString('latin1')).toContain('GPS-FIXTURE-SECRET-LOCATION');
    expect((await sharp(gps).metadata()).exif).toBeDefined();
    const r = await put(svc, '/v1/me/avatar', t.as, gps, 'holiday.jpg', 'image/jpeg');
    expect(r.status, r.text).toBe(200);
    for (const size of [256, 64] as const) {
      const got = await served(svc, r.body.avatar_url, size);
      const meta = await sharp(got.bytes).metadata();
      expect(meta.exif).toBeUndefined();
      expect(meta.xmp).toBeUndefined();
      expect(meta.icc).toBeUndefined();
      expect(got.bytes.toString('latin1')).not.toContain('GPS-FIXTURE');
      expect(got.bytes.toString('latin1')).not.toContain('Exif');
    }
  });

  it('applies EXIF orientation before the centred square crop', async () => {
    // Stored 120 x 60, red left and blue right, orientation 6: shown 60 x 120, red on top.
    const r = await put(svc, '/v1/me/avatar', t.as, fixture('rotated.jpg'), 'turned.jpg', 'image/jpeg');
    expect(r.status, r.text).toBe(200);
    const got = await served(svc, r.body.avatar_url);
    const { data, info } = await sharp(got.bytes).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => Array.from(data.subarray((y * info.width + x) * info.channels).subarray(0, 3));
    const [tr, , tb] = at(128, 20);
    const [br, , bb] = at(128, 236);
    expect(tr).toBeGreaterThan(200);
    expect(tb).toBeLessThan(60);
    expect(br).toBeLessThan(60);
    expect(bb).toBeGreaterThan(200);
  });

  it('accepts WebP', async () => {
    const r = await put(svc, '/v1/me/avatar', t.as, fixture('photo.webp'), 'p.webp', 'image/webp');
    expect(r.status, r.text).toBe(200);
  });

  it('wants one part named file, as multipart', async () => {
    const form = new FormData();
    form.append('picture', new Blob([fixture('photo.webp')]), 'p.webp');
    const wrong = await fetch(`${svc.url}/v1/me/avatar`, { method: 'PUT', headers: headersOf(t.as), body: form });
    expect(wrong.status).toBe(422);
    const json = await svc.api.req('PUT', '/v1/me/avatar', { ...t.as, body: { file: 'x' } });
    expect(json.status).toBe(415);
  });

  it('answers 404 for pictures that do not exist, 422 for ids that cannot be one', async () => {
    const none = '5b0c1f0e-8d1a-4c52-9a53-0d6f2d7e9b11';
    expect((await fetch(`${svc.url}/v1/images/${none}`)).status).toBe(404);
    expect((await fetch(`${svc.url}/v1/images/../../etc/passwd`)).status).toBe(404);
    expect((await fetch(`${svc.url}/v1/images/abc`)).status).toBe(422);
    expect((await fetch(`${svc.url}/v1/images/${none}?s=128`)).status).toBe(422);
  });
});

// ---- owners: me, contacts, companies, the workspace ----------------------------------------------

describe('owners', () => {
  it("a person's picture: member.updated and user.avatar_updated in each workspace, upload_photo done", async () => {
    const a = await newTenant(svc.api, 'First Co');
    const b = await newTenant(svc.api, 'Second Co');
    await addMember(svc, b, 'agent', a.owner);
    const before = (await svc.api.get('/v1/onboarding', a.as)).body.steps.find((s: any) => s.id === 'upload_photo');
    expect(before.done).toBe(false);
    const [seqA, seqB] = [await latestSeqOf(svc, a), await latestSeqOf(svc, b)];
    const r = await put(svc, '/v1/me/avatar', a.as, fixture('png-named.jpg'), 'me.png', 'image/png');
    expect(r.status, r.text).toBe(200);
    for (const [t, seq] of [
      [a, seqA],
      [b, seqB],
    ] as const) {
      const events = await eventsAfterOf(svc, t, seq);
      const updated = events.find((e) => e.type === 'member.updated');
      expect(updated?.data.member.user).toMatchObject({ id: a.owner.userId, avatar_url: r.body.avatar_url });
      expect(updated?.data.member.user.avatar_source).toBe('upload');
      expect(await auditActions(svc, t)).toContain('user.avatar_updated');
    }
    const after = (await svc.api.get('/v1/onboarding', a.as)).body.steps.find((s: any) => s.id === 'upload_photo');
    expect(after.done).toBe(true);
    const members = (await svc.api.get('/v1/members', b.as)).body.data;
    expect(members.find((m: any) => m.user.id === a.owner.userId).user.avatar_url).toBe(r.body.avatar_url);

    const removed = await svc.api.delete('/v1/me/avatar', a.as);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ avatar_url: null, avatar_source: null });
    expect(await auditActions(svc, b)).toContain('user.avatar_removed');
    // API keys have no picture of their own.
    const key = (await svc.api.post('/v1/api-keys', { name: unique('k'), scopes: ['contacts:write'] }, a.as)).body.key;
    const byKey = await put(svc, '/v1/me/avatar', { token: key }, fixture('photo.webp'), 'p.webp', 'image/webp');
    expect(byKey.status).toBe(403);
  });

  it("a contact's picture: contact.updated, audit entries, removal; other workspaces' contacts are 404", async () => {
    const t = await newTenant(svc.api, 'Contacts Co');
    const other = await newTenant(svc.api, 'Other Co');
    const contact = await makeContact(svc.api, t, { name: 'Carla' });
    const seq = await latestSeqOf(svc, t);
    const r = await put(svc, `/v1/contacts/${contact.id}/avatar`, t.as, fixture('wide-logo.png'), 'c.png', 'image/png');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: contact.id, name: 'Carla', avatar_source: 'upload' });
    // A person's picture is cropped: the corner is the picture's, not transparent.
    const got = await served(svc, r.body.avatar_url);
    const corner = await sharp(got.bytes).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer();
    expect(corner[3]).toBe(255);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.find((e) => e.type === 'contact.updated')?.data.contact.avatar_url).toBe(r.body.avatar_url);
    expect(await auditActions(svc, t)).toContain('contact.avatar_updated');
    expect((await svc.api.get(`/v1/contacts/${contact.id}`, t.as)).body.avatar_url).toBe(r.body.avatar_url);

    // Another workspace: 404 for every picture route, and nothing changes.
    const foreign = await put(svc, `/v1/contacts/${contact.id}/avatar`, other.as, fixture('photo.webp'), 'x.webp', 'x');
    expect(foreign.status).toBe(404);
    expect((await svc.api.delete(`/v1/contacts/${contact.id}/avatar`, other.as)).status).toBe(404);
    expect((await svc.api.post(`/v1/contacts/${contact.id}/avatar/refresh`, undefined, other.as)).status).toBe(404);
    expect((await svc.api.get(`/v1/contacts/${contact.id}`, t.as)).body.avatar_url).toBe(r.body.avatar_url);
    // A viewer may not change it.
    const viewer = await addMember(svc, t, 'viewer');
    expect(
      (await put(svc, `/v1/contacts/${contact.id}/avatar`, viewer.as, fixture('photo.webp'), 'v.webp', 'image/webp'))
        .status,
    ).toBe(403);

    const removed = await svc.api.delete(`/v1/contacts/${contact.id}/avatar`, t.as);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ avatar_url: null, avatar_source: null });
    expect(await auditActions(svc, t)).toContain('contact.avatar_removed');
  });

  it("a company's logo is fitted, not cropped; company.updated; other workspaces' companies are 404", async () => {
    const t = await newTenant(svc.api, 'Logos Co');
    const other = await newTenant(svc.api, 'Elsewhere Co');
    const company = await makeCompany(svc.api, t, { name: 'Wide Ltd' });
    const seq = await latestSeqOf(svc, t);
    const r = await put(
      svc,
      `/v1/companies/${company.id}/avatar`,
      t.as,
      fixture('wide-logo.png'),
      'l.png',
      'image/png',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: company.id, avatar_source: 'upload' });
    const got = await served(svc, r.body.avatar_url);
    const corner = await sharp(got.bytes).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer();
    expect(corner[3]).toBe(0); // above the 3:1 logo: transparent
    const centre = await sharp(got.bytes).extract({ left: 10, top: 128, width: 1, height: 1 }).raw().toBuffer();
    expect(centre[3]).toBe(255);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.find((e) => e.type === 'company.updated')?.data.company.avatar_url).toBe(r.body.avatar_url);
    expect(await auditActions(svc, t)).toContain('company.avatar_updated');
    const foreign = await put(svc, `/v1/companies/${company.id}/avatar`, other.as, fixture('photo.webp'), 'x', 'x');
    expect(foreign.status).toBe(404);
    expect((await svc.api.delete(`/v1/companies/${company.id}/avatar`, other.as)).status).toBe(404);
    expect((await svc.api.post(`/v1/companies/${company.id}/avatar/refresh`, undefined, other.as)).status).toBe(404);
    const removed = await svc.api.delete(`/v1/companies/${company.id}/avatar`, t.as);
    expect(removed.body.avatar_url).toBeNull();
    expect(await auditActions(svc, t)).toContain('company.avatar_removed');
  });

  it("the workspace's logo and images: admins only, workspace.updated, image_updated and image_removed", async () => {
    const t = await newTenant(svc.api, 'Brand Co');
    const agent = await addMember(svc, t, 'agent');
    const seq = await latestSeqOf(svc, t);
    const logo = await put(svc, '/v1/workspace/images/logo', t.as, fixture('wide-logo.png'), 'l.png', 'image/png');
    expect(logo.status, logo.text).toBe(200);
    expect(logo.body.avatar_url).toMatch(ID_RE);
    expect(logo.body.avatar_source).toBe('upload');
    const fav = await put(
      svc,
      '/v1/workspace/images/help_center_favicon',
      t.as,
      fixture('photo.webp'),
      'f.webp',
      'image/webp',
    );
    expect(fav.status, fav.text).toBe(200);
    expect(fav.body.images.help_center_favicon).toMatch(ID_RE);
    expect(fav.body.images.widget_avatar).toBeNull();
    expect(fav.body.avatar_url).toBe(logo.body.avatar_url);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.filter((e) => e.type === 'workspace.updated')).toHaveLength(2);
    expect(await auditActions(svc, t)).toContain('workspace.image_updated');
    const byAgent = await put(svc, '/v1/workspace/images/logo', agent.as, fixture('photo.webp'), 'a.webp', 'x');
    expect(byAgent.status).toBe(403);
    expect((await put(svc, '/v1/workspace/images/banner', t.as, fixture('photo.webp'), 'a', 'x')).status).toBe(422);
    const removed = await svc.api.delete('/v1/workspace/images/help_center_favicon', t.as);
    expect(removed.status).toBe(200);
    expect(removed.body.images.help_center_favicon).toBeNull();
    expect(removed.body.avatar_url).toBe(logo.body.avatar_url);
    expect(await auditActions(svc, t)).toContain('workspace.image_removed');
  });
});
