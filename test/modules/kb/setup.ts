// The setup of the knowledge base route tests (kb.test.ts, kb-lists-events.test.ts): a service
// without job workers and the helpers that make collections and articles. Each test file calls
// kbSuite() at its top level and gets its own service (the files share worker processes, so
// nothing here lives at module level).

import { afterAll, beforeAll } from 'vitest';
import { type ReqOpts, type Service, startService } from '../../support/helpers.js';

export const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** One file's service and the helpers that use it; registers the file's hooks. */
export function kbSuite() {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  const newArticle = async (as: ReqOpts, body: Record<string, unknown>) => {
    const r = await svc.api.post('/v1/kb/articles', body, as);
    if (r.status !== 201) throw new Error(`article: ${r.status} ${r.text}`);
    return r.body;
  };
  const newCollection = async (as: ReqOpts, body: Record<string, unknown>) => {
    const r = await svc.api.post('/v1/kb/collections', body, as);
    if (r.status !== 201) throw new Error(`collection: ${r.status} ${r.text}`);
    return r.body;
  };

  return {
    get svc() {
      return svc;
    },
    newArticle,
    newCollection,
  };
}
