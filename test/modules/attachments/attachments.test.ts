// /v1/attachments: multipart upload (one `file` field, size limit, content type sniffed from the
// bytes, clean file names), download by url token or by credential (headers that keep a file
// from running as a page, 404 for tampered, expired and foreign tokens and other workspaces),
// who may upload and read, S3-compatible storage on a loopback S3 server (s3rver), claiming
// attachments for a message, and the purge of unattached uploads.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageKeyOf } from '../../../src/modules/attachments/service.js';
import { AttachmentUrls } from '../../../src/modules/attachments/urls.js';
import type { LocalStorage } from '../../../src/platform/storage/local.js';
import {
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  type Service,
  startService,
  TEST_SECRET_KEY,
  unique,
} from '../../support/helpers.js';
import type { OwnDatabase } from '../../support/own-database.js';
import {
  attachmentsSuite,
  download,
  filesUnder,
  HTML,
  headersOf,
  local,
  opaque,
  type Part,
  PNG,
  postForm,
  rowsOf,
  sha256,
  upload,
} from './setup.js';

const suite = attachmentsSuite();
let svc: Service;
let own: OwnDatabase;
beforeAll(() => {
  ({ svc, own } = suite);
});

describe('uploading and downloading', () => {
  it('stores the bytes and answers 201 with the Attachment; the url gives the same bytes back without credentials', async () => {
    const t = await newTenant(svc.api);
    const bytes = opaque(2 * 1024 * 1024 + 123);
    const a = await upload(svc, t.as, bytes, 'report.bin', 'application/pdf');
    expect(a).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      filename: 'report.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      inline: false,
      url: expect.stringMatching(/\/v1\/attachments\/[0-9a-f-]{36}\?token=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
    });
    expect(a.url.startsWith(`${svc.rt.deps.config.publicUrl}/v1/attachments/${a.id}?token=`)).toBe(true);

    const [row] = await rowsOf(svc, t.workspaceId);
    expect(row).toMatchObject({
      id: a.id,
      message_id: null,
      sha256: sha256(bytes),
      size_bytes: bytes.length,
      uploaded_by_user_id: t.owner.userId,
      uploaded_by_api_key_id: null,
      storage_key: storageKeyOf(t.workspaceId, a.id),
    });
    const onDisk = (svc.rt.deps.storage as LocalStorage).pathOf(row!.storage_key);
    expect(onDisk.startsWith(join(svc.rt.deps.config.dataDir, 'attachments'))).toBe(true);
    expect(readFileSync(onDisk).equals(bytes)).toBe(true);

    // By token alone (an <img> tag sends no credential).
    const d = await download(local(svc, a.url));
    expect(d.status).toBe(200);
    expect(d.bytes.equals(bytes)).toBe(true);
    expect(d.headers.get('content-type')).toBe('application/octet-stream');
    expect(d.headers.get('content-length')).toBe(String(bytes.length));
    expect(d.headers.get('content-disposition')).toBe(`attachment; filename="report.bin"; filename*=UTF-8''report.bin`);
    expect(d.headers.get('x-content-type-options')).toBe('nosniff');
    expect(d.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");

    // By credential, without a token.
    const byMember = await download(`${svc.url}/v1/attachments/${a.id}`, { headers: headersOf(t.as) });
    expect(byMember.status).toBe(200);
    expect(byMember.bytes.equals(bytes)).toBe(true);

    // Without either: 401.
    const none = await svc.api.get(`/v1/attachments/${a.id}`);
    expect(isErrorBody(none.body, 401)).toBe(true);
    // Tokens never reach the logs.
    expect(svc.logs.join('\n')).not.toContain('token=');
  });

  it('sniffs the type from the bytes: a PNG named .txt declared text/plain is image/png, shown inline', async () => {
    const t = await newTenant(svc.api);
    const a = await upload(svc, t.as, PNG, 'notes.txt', 'text/plain');
    expect(a.content_type).toBe('image/png');
    const d = await download(local(svc, a.url));
    expect(d.status).toBe(200);
    expect(d.bytes.equals(PNG)).toBe(true);
    expect(d.headers.get('content-type')).toBe('image/png');
    expect(d.headers.get('content-disposition')).toBe(`inline; filename="notes.txt"; filename*=UTF-8''notes.txt`);
    expect(d.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves HTML, SVG and XML as application/octet-stream attachments with nosniff and a sandbox', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[string, string, string]> = [
      [HTML, 'page.html', 'text/html'],
      ['\ufeff  <html><p>hi</p></html>', 'bom.htm', 'text/html'],
      ['<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'x.svg', 'image/svg+xml'],
      ['<?xml version="1.0"?><note>hi</note>', 'x.xml', 'application/xml'],
    ];
    for (const [content, name, sniffed] of cases) {
      const a = await upload(svc, t.as, content, name, 'image/png');
      expect(a.content_type, name).toBe(sniffed);
      const d = await download(local(svc, a.url));
      expect(d.status).toBe(200);
      expect(d.bytes.toString(), name).toBe(content);
      expect(d.headers.get('content-type'), name).toBe('application/octet-stream');
      expect(d.headers.get('content-disposition'), name).toMatch(/^attachment; /);
      expect(d.headers.get('x-content-type-options')).toBe('nosniff');
      expect(d.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    }
  });

  it('calls UTF-8 without NUL text/plain, anything else application/octet-stream', async () => {
    const t = await newTenant(svc.api);
    const text = await upload(svc, t.as, 'héllo wörld ✓\nsecond line\n', 'a.dat', 'application/x-whatever');
    expect(text.content_type).toBe('text/plain');
    const d = await download(local(svc, text.url));
    expect(d.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(d.headers.get('content-disposition')).toMatch(/^attachment; /);
    for (const bytes of [Buffer.from('abc\u0000def'), Buffer.from([0x61, 0xff, 0xfe, 0x62]), Buffer.alloc(0)]) {
      const a = await upload(svc, t.as, bytes, 'b.txt', 'text/plain');
      expect(a.content_type).toBe('application/octet-stream');
      expect(a.size_bytes).toBe(bytes.length);
    }
  });

  it('keeps only the file name: no path, no control or direction characters, at most 255 characters, "file" by default', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[string, string]> = [
      ['C:\\Users\\ann\\report.pdf', 'report.pdf'],
      ['../../etc/passwd', 'passwd'],
      ['in\u0007voice\u202egpj.exe', 'invoicegpj.exe'],
      ['résumé – final.txt', 'résumé – final.txt'],
      ['..', 'file'],
      ['', 'file'],
      [`${'n'.repeat(300)}.jpeg`, `${'n'.repeat(250)}.jpeg`],
    ];
    for (const [given, kept] of cases) {
      const a = await upload(svc, t.as, 'x', given);
      expect(a.filename, JSON.stringify(given)).toBe(kept);
    }
    // Browsers write `"` as %22 in filename=; the RFC 8187 form (filename*) carries any name.
    const raw = await svc.api.req('POST', '/v1/attachments', {
      ...t.as,
      raw:
        '--xyz\r\nContent-Disposition: form-data; name="file"; ' +
        `filename*=UTF-8''r%C3%A9sum%C3%A9%2050%25%20%22final%22.txt\r\n\r\nx\r\n--xyz--\r\n`,
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    expect(raw.status, raw.text).toBe(201);
    expect(raw.body.filename).toBe('résumé 50% "final".txt');
    const d = await download(local(svc, raw.body.url));
    expect(d.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ 50_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%2050%25%20%22final%22.txt`,
    );
  });

  it('does not apply Idempotency-Key to multipart uploads (each upload is its own)', async () => {
    const t = await newTenant(svc.api);
    const as = { ...t.as, headers: { 'idempotency-key': unique('idem') } };
    const one = await postForm(svc, as, [{ name: 'file', data: 'one', filename: 'a.txt' }]);
    const two = await postForm(svc, as, [{ name: 'file', data: 'two', filename: 'b.txt' }]);
    expect(one.status).toBe(201);
    expect(two.status).toBe(201);
    expect(two.body.id).not.toBe(one.body.id);
    expect(two.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('refused uploads', () => {
  it('answers 422 at body.file for no file, another field, two files or a file under another name; stores nothing', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[string, Part[]]> = [
      ['an empty form', []],
      ['a text field only', [{ name: 'file', data: 'not a file' }]],
      ['a file under another name', [{ name: 'upload', data: 'x', filename: 'a.txt' }]],
      [
        'two files',
        [
          { name: 'file', data: 'one', filename: 'a.txt' },
          { name: 'file', data: 'two', filename: 'b.txt' },
        ],
      ],
      [
        'a file and a field',
        [
          { name: 'file', data: 'one', filename: 'a.txt' },
          { name: 'note', data: 'hello' },
        ],
      ],
      [
        'a field, then the file',
        [
          { name: 'note', data: 'hello' },
          { name: 'file', data: 'one', filename: 'a.txt' },
        ],
      ],
    ];
    for (const [label, parts] of cases) {
      const r = await postForm(svc, t.as, parts);
      expect(r.status, label).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed'), label).toBe(true);
      expect(r.body.errors[0].location, label).toBe('body.file');
    }
    expect(await rowsOf(svc, t.workspaceId)).toEqual([]);
    expect(filesUnder(join(svc.rt.deps.config.dataDir, 'attachments', t.workspaceId))).toEqual([]);
  });

  it('answers 415 to bodies that are not multipart, and 400 to broken multipart', async () => {
    const t = await newTenant(svc.api);
    const json = await svc.api.post('/v1/attachments', { file: 'x' }, t.as);
    expect(isErrorBody(json.body, 415, 'unsupported_media_type')).toBe(true);
    const plain = await svc.api.req('POST', '/v1/attachments', {
      ...t.as,
      raw: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(isErrorBody(plain.body, 415, 'unsupported_media_type')).toBe(true);
    const none = await svc.api.req('POST', '/v1/attachments', t.as);
    expect(isErrorBody(none.body, 415, 'unsupported_media_type')).toBe(true);
    const broken = await svc.api.req('POST', '/v1/attachments', {
      ...t.as,
      raw: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    expect(isErrorBody(broken.body, 400, 'bad_request'), broken.text).toBe(true);
    // Other routes do not take multipart at all.
    const form = new FormData();
    form.append('name', 'x');
    const elsewhere = await fetch(`${svc.url}/v1/contacts`, { method: 'POST', headers: headersOf(t.as), body: form });
    expect(elsewhere.status).toBe(415);
    expect(await rowsOf(svc, t.workspaceId)).toEqual([]);
  });

  describe('over ATTACHMENT_MAX_MB', () => {
    let small: Service;
    beforeAll(async () => {
      small = await startService({ ...own.env, ATTACHMENT_MAX_MB: '1' }, { jobs: false });
    });
    afterAll(async () => small?.stop());

    it('answers 413 too_large for 1 MB + 1 byte and leaves nothing behind; exactly 1 MB is fine', async () => {
      const t = await newTenant(small.api);
      const over = await postForm(small, t.as, [
        { name: 'file', data: randomBytes(1024 * 1024 + 1), filename: 'big.bin' },
      ]);
      expect(over.status, over.text).toBe(413);
      expect(isErrorBody(over.body, 413, 'too_large')).toBe(true);
      expect(await rowsOf(small, t.workspaceId)).toEqual([]);
      const dataDir = small.rt.deps.config.dataDir;
      expect(filesUnder(join(dataDir, 'attachments'))).toEqual([]);
      expect(filesUnder(join(dataDir, 'tmp'))).toEqual([]);

      // A declared length far over the limit is refused before the body is read.
      const early = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${small.url}/v1/attachments`, {
          method: 'POST',
          headers: {
            ...headersOf(t.as),
            'content-type': 'multipart/form-data; boundary=xyz',
            'content-length': String(50 * 1024 * 1024),
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (c) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write('--xyz\r\n'); // and nothing more: the answer must not wait for 50 MB
      });
      expect(early.status).toBe(413);
      expect(isErrorBody(JSON.parse(early.body), 413, 'too_large')).toBe(true);

      const exact = randomBytes(1024 * 1024);
      const ok = await upload(small, t.as, exact, 'exact.bin');
      expect(ok.size_bytes).toBe(exact.length);
      const d = await download(local(small, ok.url));
      expect(d.bytes.equals(exact)).toBe(true);
      expect(filesUnder(join(dataDir, 'tmp'))).toEqual([]);
    });
  });
});

describe('url tokens', () => {
  it('404 for a tampered, moved, foreign-workspace or expired token, exactly like a missing attachment', async () => {
    const t = await newTenant(svc.api);
    const a = await upload(svc, t.as, PNG, 'a.png');
    const b = await upload(svc, t.as, PNG, 'b.png');
    const token = new URL(a.url).searchParams.get('token')!;
    const [head, mac] = token.split('.') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const missing = await svc.api.get(`/v1/attachments/${randomUUID()}?token=${token}`);
    expect(isErrorBody(missing.body, 404, 'not_found')).toBe(true);

    const urls = new AttachmentUrls(TEST_SECRET_KEY, svc.rt.deps.config.publicUrl);
    const other = await newTenant(svc.api);
    const bad: Array<[string, string]> = [
      ['MAC changed', `/v1/attachments/${a.id}?token=${head}.${flip(mac, 3)}`],
      ['workspace or expiry changed', `/v1/attachments/${a.id}?token=${flip(head, 5)}.${mac}`],
      ['token of another attachment', `/v1/attachments/${b.id}?token=${token}`],
      ['signed for another workspace', `/v1/attachments/${a.id}?token=${urls.token(other.workspaceId, a.id)}`],
      ['expired', `/v1/attachments/${a.id}?token=${urls.token(t.workspaceId, a.id, Date.now() - 3601_000)}`],
      [
        'signed with another key',
        `/v1/attachments/${a.id}?token=${new AttachmentUrls('x'.repeat(40), '').token(t.workspaceId, a.id)}`,
      ],
    ];
    for (const [label, path] of bad) {
      const r = await svc.api.get(path);
      expect(r.status, label).toBe(404);
      expect(r.body, label).toEqual(missing.body);
      // A valid credential does not rescue a bad token.
      expect((await svc.api.get(path, t.as)).status, label).toBe(404);
    }
    // Still valid just before the hour is up.
    const fresh = await svc.api.get(
      `/v1/attachments/${a.id}?token=${urls.token(t.workspaceId, a.id, Date.now() - 3590_000)}`,
    );
    expect(fresh.status).toBe(200);
    // A value that is not shaped like a token is a validation error.
    const malformed = await svc.api.get(`/v1/attachments/${a.id}?token=abc`, t.as);
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors[0].location).toBe('query.token');
  });
});

describe('who may upload and read', () => {
  it('members read (viewer too); agents and keys with tickets:write upload; viewers and tickets:read keys may not (403)', async () => {
    const t = await newTenant(svc.api);
    const a = await upload(svc, t.as, 'hello', 'hello.txt');
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const reader = await newApiKey(svc.api, t, ['tickets:read']);
    const writer = await newApiKey(svc.api, t, ['tickets:write']);
    const contactsOnly = await newApiKey(svc.api, t, ['contacts:read', 'contacts:write']);

    for (const as of [viewer.as, agent.as, { token: reader.key }, { token: writer.key }]) {
      const d = await download(`${svc.url}/v1/attachments/${a.id}`, { headers: headersOf(as) });
      expect(d.status).toBe(200);
      expect(d.bytes.toString()).toBe('hello');
    }
    expect((await svc.api.get(`/v1/attachments/${a.id}`, { token: contactsOnly.key })).status).toBe(403);

    for (const as of [viewer.as, { token: reader.key }, { token: contactsOnly.key }]) {
      const r = await postForm(svc, as, [{ name: 'file', data: 'x', filename: 'x.txt' }]);
      expect(r.status).toBe(403);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    await upload(svc, agent.as, 'by agent', 'agent.txt');
    const byKey = await upload(svc, { token: writer.key }, 'by key', 'key.txt');
    const row = (await rowsOf(svc, t.workspaceId)).find((r) => r.id === byKey.id)!;
    expect(row.uploaded_by_api_key_id).toBe(writer.id);
    expect(row.uploaded_by_user_id).toBeNull();
    expect((await rowsOf(svc, t.workspaceId)).length).toBe(3);
  });

  it("answers another workspace's attachment with 404, exactly like a missing one", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const att = await upload(svc, a.as, PNG, 'a.png');
    const keyB = await newApiKey(svc.api, b, ['tickets:read', 'tickets:write']);
    for (const as of [b.as, { token: keyB.key }]) {
      const foreign = await svc.api.get(`/v1/attachments/${att.id}`, as);
      const missing = await svc.api.get(`/v1/attachments/${randomUUID()}`, as);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(missing.body);
    }
  });
});
