// The setup of the help center's page tests (help-center.test.ts, help-center-views-search.test.ts):
// a service without job workers, help centers, and the helpers that get pages as a browser does
// and read them. Each test file calls helpCenterSuite() at its top level and gets its own service
// (the files share worker processes, so nothing here lives at module level).

import { randomUUID } from 'node:crypto';
import { DomUtils, parseDocument } from 'htmlparser2';
import { afterAll, beforeAll } from 'vitest';
import { newTenant, type ReqOpts, type Service, startService, type Tenant } from '../../support/helpers.js';

export const ORIGIN = 'https://help.example.test';
export const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

export interface Center {
  t: Tenant;
  slug: string;
  base: string;
}

export const doc = (html: string) => parseDocument(html);
export const all = (html: string, tag: string) => DomUtils.getElementsByTagName(tag, doc(html));
export const metaOf = (html: string, key: string) =>
  all(html, 'meta').find((m) => m.attribs.property === key || m.attribs.name === key)?.attribs.content;
export const textOf = (html: string, tag: string) => all(html, tag).map((e) => DomUtils.textContent(e).trim());

/** One file's service and the helpers that use it; registers the file's hooks. */
export function helpCenterSuite() {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ PUBLIC_URL: 'https://help.example.test' }, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  async function newCenter(settings: Record<string, unknown> = {}, name = 'Acme Support'): Promise<Center> {
    const t = await newTenant(svc.api, name);
    const r = await svc.api.patch('/v1/workspace', { settings: { help_center_enabled: true, ...settings } }, t.as);
    if (r.status !== 200) throw new Error(`settings: ${r.status} ${r.text}`);
    return { t, slug: r.body.slug, base: `/hc/${r.body.slug}` };
  }

  const post = async (as: ReqOpts, path: string, body: Record<string, unknown>) => {
    const r = await svc.api.post(path, body, as);
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.body;
  };

  /** What another process's write of the workspace tells this one: a workspace.updated on the bus. */
  const workspaceChanged = (workspaceId: string) =>
    svc.rt.deps.bus.publish([
      {
        id: randomUUID(),
        seq: 0,
        workspace_id: workspaceId,
        type: 'workspace.updated',
        visibility: 'agents',
        topics: [],
        data: {},
        occurred_at: new Date().toISOString(),
      },
    ]);

  /** A page as a browser asks for it. */
  const page = (path: string, headers: Record<string, string> = {}) =>
    fetch(svc.url + path, { headers: { 'user-agent': BROWSER, ...headers }, redirect: 'manual' }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      text: await r.text(),
    }));

  return {
    get svc() {
      return svc;
    },
    newCenter,
    post,
    workspaceChanged,
    page,
  };
}
