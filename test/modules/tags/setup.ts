// The setup of the /v1/tags tests (tags.test.ts, tags-apply.test.ts, tags-merge-order.test.ts):
// a service without job workers and the helpers that make labels, groups and records. Each test
// file calls tagsSuite() at its top level and gets its own service (the files share worker
// processes, so nothing here lives at module level).

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TagEntity } from '../../../src/modules/tags/kinds.js';
import { applyTags, tagRefsOf } from '../../../src/modules/tags/records.js';
import type { RequestContext, Role, Scope } from '../../../src/platform/http/context.js';
import { ApiError } from '../../../src/platform/http/errors.js';
import { makeCompany, makeContact, makeTicket } from '../../support/builders.js';
import { isErrorBody, type Service, startService, type Tenant } from '../../support/helpers.js';

export const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A request context as a route would build it. */
export function ctxOf(t: Tenant, role: Role | null = 'owner', scopes: Scope[] | null = null): RequestContext {
  return {
    workspaceId: t.workspaceId,
    actor:
      role === null
        ? { kind: 'api_key' as const, apiKeyId: randomUUID(), createdBy: null }
        : { kind: 'member' as const, userId: t.owner.userId, sessionId: randomUUID() },
    role,
    scopes: role === null ? (scopes ?? []) : null,
    teams: [],
    ip: '127.0.0.1',
  };
}

export type Input = { tags?: string[]; add_tags?: string[]; remove_tags?: string[] };

export async function refused(work: Promise<unknown>, status: number, code: string, location?: string) {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected an ApiError').toBeInstanceOf(ApiError);
  const e = err as ApiError;
  expect(e.status).toBe(status);
  expect(e.code).toBe(code);
  if (location !== undefined) expect(e.errors?.[0]?.location).toBe(location);
  return e;
}

export const expect422 = (r: { status: number; body: any }, location: string, code = 'validation_failed') => {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(isErrorBody(r.body, 422, code)).toBe(true);
  expect(r.body.errors?.[0]?.location).toBe(location);
};

/** One file's service and the helpers that use it; registers the file's hooks. */
export function tagsSuite() {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  const db = () => svc.rt.deps.database.db;

  async function tag(t: Tenant, body: Record<string, unknown>) {
    const r = await svc.api.post('/v1/tags', body, t.as);
    if (r.status !== 201) throw new Error(`tag: ${r.status} ${r.text}`);
    return r.body;
  }
  async function group(t: Tenant, body: Record<string, unknown>) {
    const r = await svc.api.post('/v1/tag-groups', body, t.as);
    if (r.status !== 201) throw new Error(`group: ${r.status} ${r.text}`);
    return r.body;
  }
  async function ticket(t: Tenant): Promise<string> {
    return (await makeTicket(svc.api, t, { subject: 'Hello', body_html: '<p>hi</p>' })).id;
  }
  async function contact(t: Tenant): Promise<string> {
    return (await makeContact(svc.api, t, { name: 'Cora' })).id;
  }
  async function company(t: Tenant): Promise<string> {
    return (await makeCompany(svc.api, t)).id;
  }

  const apply = (t: Tenant, entity: TagEntity, id: string, input: Input, ctx = ctxOf(t)) =>
    svc.rt.deps.writer.run(t.workspaceId, (u) => applyTags(u, ctx, { entity, id }, input));

  /** The names on a record, by name. */
  async function namesOn(t: Tenant, entity: TagEntity, id: string): Promise<string[]> {
    return ((await tagRefsOf(db(), t.workspaceId, entity, [id])).get(id) ?? []).map((r) => r.name);
  }

  async function auditOf(t: Tenant, action: string) {
    return db()
      .selectFrom('audit_logs')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('action', '=', action)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  return {
    get svc() {
      return svc;
    },
    db,
    tag,
    group,
    ticket,
    contact,
    company,
    apply,
    namesOn,
    auditOf,
  };
}
