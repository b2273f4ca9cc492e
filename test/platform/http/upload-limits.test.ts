// Over-limit bodies answer a 413 the client can read: the service answers as soon as it knows,
// then reads the rest of the body and throws it away (bounded) instead of closing a connection
// the client is still sending on, which reset it and made Node's fetch fail with EPIPE
// (src/platform/http/drain.ts). Every upload kind: pictures, attachments, widget files, the
// portal's form, and JSON bodies; an endless sender is cut off; a drained connection serves the
// next request. Browsers: test/modules/help-center/help-center.browser.test.ts uploads from a page in Chromium.
import { connect } from 'node:net';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Drains } from '../../../src/platform/http/drain.js';
import { isErrorBody, newTenant, type Service, signUp, startService, type Tenant } from '../../support/helpers.js';

let svc: Service;
let t: Tenant;
beforeAll(async () => {
  // Attachments limited to 1 MB to keep the bodies small.
  svc = await startService({ ATTACHMENT_MAX_MB: '1' }, { jobs: false });
  t = await newTenant(svc.api);
});
afterAll(async () => svc?.stop());

interface Sent {
  method: string;
  headers?: Record<string, string>;
  /** A multipart body: these text fields, then a file of `fileBytes` zero bytes in field `file`. */
  fields?: Record<string, string>;
  fileBytes?: number;
  /** A JSON body: {"name": "xxx…"} of about this many bytes. */
  jsonBytes?: number;
}
type Got = { status: number; type: string; text: string } | { error: string };

// fetch() run in a worker thread: the client has an event loop of its own, as a client in another
// process or machine has. Sharing the service's thread, the reset that lost the answer did not
// show.
const CLIENT = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  let body;
  if (w.fileBytes !== undefined) {
    body = new FormData();
    for (const [k, v] of Object.entries(w.fields ?? {})) body.append(k, v);
    body.append('file', new Blob([new Uint8Array(w.fileBytes)]), 'big.png');
  } else if (w.jsonBytes !== undefined) {
    body = JSON.stringify({ name: 'x'.repeat(w.jsonBytes) });
  }
  try {
    const r = await fetch(w.url, { method: w.method, headers: w.headers, body });
    parentPort.postMessage({ status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() });
  } catch (e) {
    parentPort.postMessage({ error: String(e.cause?.code ?? e.cause?.message ?? e.message) });
  }
})();
`;

function fetchFromWorker(path: string, sent: Sent): Promise<Got> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CLIENT, { eval: true, workerData: { url: svc.url + path, ...sent } });
    worker.once('message', (m: Got) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

const MB = 1024 * 1024;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function expect413(got: Got) {
  expect('error' in got ? got.error : got.status, JSON.stringify(got).slice(0, 300)).toBe(413);
  return got as Exclude<Got, { error: string }>;
}

describe('an over-limit body answers a 413 that fetch reads', () => {
  it('a 6 MB picture: 413 too_large, and the avatar is unchanged', async () => {
    const p = await signUp(svc.api);
    for (let i = 0; i < 2; i++) {
      const got = expect413(
        await fetchFromWorker('/v1/me/avatar', { method: 'PUT', headers: bearer(p.token), fileBytes: 6 * MB }),
      );
      expect(isErrorBody(JSON.parse(got.text), 413, 'too_large')).toBe(true);
    }
    expect((await svc.api.get('/v1/me', { token: p.token })).body.avatar_url).toBeNull();
  });

  it('an attachment and a widget file over ATTACHMENT_MAX_MB: 413 too_large', async () => {
    const got = expect413(
      await fetchFromWorker('/v1/attachments', {
        method: 'POST',
        headers: { ...bearer(t.owner.token), 'svc-workspace': t.workspaceId },
        fileBytes: 8 * MB,
      }),
    );
    expect(isErrorBody(JSON.parse(got.text), 413, 'too_large')).toBe(true);

    const key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key;
    const visitor = (await svc.api.post('/v1/widget/session', { key })).body.visitor_token as string;
    const widget = expect413(
      await fetchFromWorker('/v1/widget/attachments', {
        method: 'POST',
        headers: { authorization: `Visitor ${visitor}` },
        fileBytes: 8 * MB,
      }),
    );
    expect(isErrorBody(JSON.parse(widget.text), 413, 'too_large')).toBe(true);
  });

  it("a JSON body over 1 MiB and the portal's contact form over its files' limit", async () => {
    const json = expect413(
      await fetchFromWorker('/v1/workspace', {
        method: 'PATCH',
        headers: { ...bearer(t.owner.token), 'svc-workspace': t.workspaceId, 'content-type': 'application/json' },
        jsonBytes: 6 * MB,
      }),
    );
    expect(isErrorBody(JSON.parse(json.text), 413, 'too_large')).toBe(true);

    const r = await svc.api.patch('/v1/workspace', { settings: { help_center_enabled: true } }, t.as);
    expect(r.status).toBe(200);
    // Five files of 1 MB and a megabyte of fields at most: 8 MB is refused from its length.
    const form = expect413(
      await fetchFromWorker(`/hc/${r.body.slug}/new`, {
        method: 'POST',
        fields: { name: 'Ann', email: 'ann@example.com', subject: 'Big', message: 'Files' },
        fileBytes: 8 * MB,
      }),
    );
    expect(form.type).toMatch(/^text\/html/);
    expect(form.text).toContain('Too large');
  });
});

/**
 * One raw HTTP/1.1 connection: writes `head`, then the chunks until there are no more (then ends
 * the connection when `end`) or it is cut off; `after` is sent on it once the first answer is read.
 */
function rawUpload(head: string, chunks: () => Buffer | null, o: { end?: boolean; after?: string } = {}) {
  const after = o.after;
  const { hostname, port } = new URL(svc.url);
  return new Promise<{ sent: number; answer: string; cut: boolean }>((resolve) => {
    const socket = connect(Number(port), hostname);
    let sent = 0;
    let answer = '';
    let stopped = false;
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      // The first answer read in full: ask the same connection for the next request.
      if (after && !stopped && /\r\n\r\n\{[\s\S]*\}$/.test(answer)) {
        stopped = true;
        socket.write(after);
      } else if (after && stopped && answer.split('HTTP/1.1 ').length > 2 && answer.endsWith('}')) {
        socket.end();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ sent, answer, cut: !socket.writableEnded }));
    socket.write(head);
    const pump = () => {
      for (;;) {
        const c = chunks();
        if (c === null) {
          if (o.end) socket.end();
          return;
        }
        sent += c.length;
        if (socket.destroyed || !socket.write(c)) return;
      }
    };
    socket.on('drain', pump);
    pump();
  });
}

const chunked = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe('draining is bounded', () => {
  it('cuts off a client that sends without end, after answering 413 (JSON and multipart)', async () => {
    const p = await signUp(svc.api);
    const MiB = Buffer.alloc(MB, 0x78);
    // Far past the drain's bound (64 MiB here): reaching it means the service never cut the client off.
    const CAP = 512 * MB;
    for (const [route, type, first] of [
      ['PATCH /v1/me', 'application/json', '{"name":"'],
      [
        'PUT /v1/me/avatar',
        'multipart/form-data; boundary=xyz',
        '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n',
      ],
    ] as const) {
      let sent = 0;
      const r = await rawUpload(
        `${route} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.token}\r\nContent-Type: ${type}\r\n` +
          `Transfer-Encoding: chunked\r\n\r\n${chunked(Buffer.from(first)).toString('latin1')}`,
        () => {
          if (sent >= CAP) return null;
          sent += MB;
          return chunked(MiB);
        },
        { end: true },
      );
      expect(statusOf(r.answer), route).toBe(413);
      expect(r.cut, route).toBe(true);
      expect(r.sent, route).toBeLessThan(CAP);
    }
  });

  it('a drained connection serves the next request; a declared length past the bound is closed at once', async () => {
    const p = await signUp(svc.api);
    const body = Buffer.alloc(6 * MB, 0x78);
    let left = 1;
    const r = await rawUpload(
      `PUT /v1/me/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.token}\r\n` +
        `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${body.length}\r\n\r\n`,
      () => (left-- > 0 ? body : null),
      { after: `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.token}\r\n\r\n` },
    );
    const answers = r.answer.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map(statusOf)).toEqual([413, 200]);
    expect(answers[1]).toContain(p.email);

    let once = 1;
    const huge = await rawUpload(
      `PUT /v1/me/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.token}\r\n` +
        `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${1024 * MB}\r\n\r\n`,
      () => (once-- > 0 ? Buffer.from('--xyz\r\n') : null),
    );
    expect(statusOf(huge.answer)).toBe(413);
    expect(huge.answer.toLowerCase()).toContain('connection: close');
  });
});

describe('the time bound', () => {
  it('closes a connection that trickles its body past the bound, having answered first', async () => {
    // A bare app with the service's drain and a short time bound: the service's own is 30 s.
    const app = Fastify();
    const drains = new Drains({ factor: 4, minBytes: 1024 * 1024, maxMs: 300 });
    app.addHook('onSend', async (req, reply, payload) => {
      drains.start(req, reply);
      return payload;
    });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    app.post('/upload', async (_req, reply) => reply.code(413).send({ status: 413 }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = new URL(url);
      const r = await new Promise<{ answer: string; ticks: number }>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        let answer = '';
        let ticks = 0;
        // One byte every 50 ms, for as long as the connection stays open.
        const drip = setInterval(() => {
          ticks++;
          if (!socket.destroyed) socket.write('1\r\nx\r\n');
        }, 50);
        socket.on('data', (d) => {
          answer += d;
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ answer, ticks });
        });
        socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      });
      expect(statusOf(r.answer)).toBe(413);
      expect(r.ticks).toBeGreaterThan(0);
    } finally {
      drains.cutAll();
      await app.close();
    }
  });
});
