// The setup of the chat widget's HTTP route tests (widget.test.ts, widget-conversations.test.ts): a
// service without job workers that trusts X-Forwarded-For, and the helpers that make sites,
// visitor sessions and conversations. Each test file calls widgetSuite() at its top level and
// gets its own service (the files share worker processes, so nothing here lives at module level).

import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Api, newTenant, type ReqOpts, type Service, startService, type Tenant } from '../../support/helpers.js';

export const SITE = 'https://shop.example.com';

export interface Site {
  t: Tenant;
  key: string;
}

export const as = (visitorToken: string, headers: Record<string, string> = {}): ReqOpts => ({
  headers: { authorization: `Visitor ${visitorToken}`, ...headers },
});

export const hmac = (secret: string, userId: string) => createHmac('sha256', secret).update(userId).digest('hex');

/** One file's service and the helpers that use it; registers the file's hooks. */
export function widgetSuite() {
  let svc: Service;
  let api: Api;
  beforeAll(async () => {
    // TRUST_PROXY: a test says which address a request comes from (X-Forwarded-For), for the
    // per-address bound of new visitors.
    svc = await startService({ TRUST_PROXY: 'true' }, { jobs: false });
    api = svc.api;
  });
  afterAll(async () => svc?.stop());

  async function site(name = 'Acme Support'): Promise<Site> {
    const t = await newTenant(api, name);
    const key = (await api.get('/v1/workspace', t.as)).body.widget_key as string;
    return { t, key };
  }

  async function session(key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const r = await api.post('/v1/widget/session', { key, ...body }, { headers });
    expect(r.status, r.text).toBe(200);
    return r.body as {
      visitor_token: string;
      contact: { id: string; email: string | null; name: string | null };
      ws_token: string;
      gateway_url: string;
    };
  }

  async function converse(token: string, body = 'Hello, my order is late') {
    const r = await api.post('/v1/widget/conversations', { body }, as(token));
    expect(r.status, r.text).toBe(201);
    return r.body as { id: string; number: number; subject: string; status: string };
  }

  const settings = (s: Site, patch: Record<string, unknown>) => api.patch('/v1/widget/settings', patch, s.t.as);

  async function rotateSecret(s: Site): Promise<string> {
    const r = await api.post('/v1/workspace/widget-secret/rotate', undefined, s.t.as);
    expect(r.status, r.text).toBe(200);
    return r.body.widget_secret;
  }

  async function upload(token: string, data: Buffer, filename = 'receipt.pdf') {
    const form = new FormData();
    form.append('file', new Blob([data]), filename);
    const r = await fetch(`${svc.url}/v1/widget/attachments`, {
      method: 'POST',
      headers: { authorization: `Visitor ${token}` },
      body: form,
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  }

  return {
    get svc() {
      return svc;
    },
    get api() {
      return api;
    },
    site,
    session,
    converse,
    settings,
    rotateSecret,
    upload,
  };
}
