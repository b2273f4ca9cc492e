// The setup of the /v1/attachments tests (attachments.test.ts, attachments-claims-storage.test.ts):
// a service without job workers on a database of its own, and the helpers that upload, download
// and look at the stored rows and files. Each test file calls attachmentsSuite() at its top level
// and gets its own service (the files share worker processes, so nothing here lives at module
// level).

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type ReqOpts, type Service, startService } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

/** A 1×1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
export const HTML = '<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>\n';
export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export interface Part {
  name: string;
  data: Buffer | string;
  /** Present: a file part. */
  filename?: string;
  type?: string;
}

export function headersOf(as: ReqOpts): Record<string, string> {
  const h: Record<string, string> = { ...(as.headers ?? {}) };
  if (as.token) h.authorization = `Bearer ${as.token}`;
  if (as.workspace) h['svc-workspace'] = as.workspace;
  return h;
}

export async function postForm(s: Service, as: ReqOpts, parts: Part[]) {
  const form = new FormData();
  for (const p of parts) {
    if (p.filename !== undefined) {
      form.append(p.name, new Blob([p.data], { type: p.type ?? 'application/octet-stream' }), p.filename);
    } else form.append(p.name, String(p.data));
  }
  const r = await fetch(`${s.url}/v1/attachments`, { method: 'POST', headers: headersOf(as), body: form });
  const text = await r.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: r.status, body, headers: r.headers, text };
}

export async function upload(s: Service, as: ReqOpts, data: Buffer | string, filename = 'file.bin', type?: string) {
  const r = await postForm(s, as, [{ name: 'file', data, filename, ...(type ? { type } : {}) }]);
  expect(r.status, r.text).toBe(201);
  return r.body as {
    id: string;
    filename: string;
    content_type: string;
    size_bytes: number;
    inline: boolean;
    url: string;
  };
}

/** The url's path and query on the test server (PUBLIC_URL is not where the test listens). */
export const local = (s: Service, url: string) => {
  const u = new URL(url);
  return `${s.url}${u.pathname}${u.search}`;
};

export async function download(url: string, init: RequestInit = {}) {
  const r = await fetch(url, { redirect: 'manual', ...init });
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
}

export const rowsOf = (s: Service, workspaceId: string) =>
  s.rt.deps.database.db.selectFrom('attachments').selectAll().where('workspace_id', '=', workspaceId).execute();

/**
 * Random bytes that no signature matches: bare random bytes look like an ARJ archive or an MPEG
 * audio frame about once in 2,000 tries, and the sniffed type then differs from the one expected.
 */
export const opaque = (n: number) =>
  Buffer.concat([Buffer.from('\0\0\0\0opaque test bytes\0', 'latin1'), randomBytes(n - 22)]);

export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** One file's service; registers the file's hooks. */
export function attachmentsSuite() {
  // The AWS SDK warns once per process that its 2027 releases will need Node 22.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  let svc: Service;
  let own: OwnDatabase;
  beforeAll(async () => {
    // A database of its own on PostgreSQL (for every service of this file): the hourly purge job,
    // run by whichever service of the database runs jobs, would remove the uploads dated 25 hours
    // back below before this file's purge does, deleting their bytes from its own storage, not
    // from this file's directory or bucket.
    own = await ownDatabase('attachments');
    svc = await startService(own.env, { jobs: false });
  });
  afterAll(async () => {
    await svc?.stop();
    await own?.drop();
  });

  return {
    get svc() {
      return svc;
    },
    get own() {
      return own;
    },
  };
}
