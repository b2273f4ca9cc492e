// Companies: a name, a unique lower-case domain, notes and free-form custom data. Contacts
// point at a company; deleting a company leaves its contacts without one (the foreign key's
// ON DELETE SET NULL (company_id)), with no contact.updated event per contact.
// Labels come with the labels module: tags [] until then.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { likePattern, mergeCustom } from '../../platform/http/values.js';
import { type AuditContext, recordAudit } from '../audit/service.js';
import { contactCounts } from '../contacts/queries.js';
import { fieldFilterPredicates, fieldParams } from '../custom-fields/filters.js';
import { applyFieldValues } from '../custom-fields/values.js';
import { setRecordPicture } from '../images/owners.js';
import { type PictureChange, swapPictures } from '../images/store.js';
import { applyTags, tagIdsByName } from '../tags/records.js';
import { hasTag, tagRefsJson } from '../tags/sql.js';
import type { Company, CompanyRef, CreateCompanyBody, ListCompaniesQuery, PatchCompanyBody } from './schemas.js';

export type CompanyView = Static<typeof Company>;
export type CompanyRefView = Static<typeof CompanyRef>;

const DOMAIN_KEYS = { companies_domain_key: 'A company with this domain already exists.' };

const HOSTNAME_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A hostname, lower-cased (a trailing dot dropped); null clears it. 422 when not a hostname. */
function cleanDomain(domain: string | null, location = 'body.domain'): string | null {
  if (domain === null) return null;
  const d = domain.trim().toLowerCase().replace(/\.$/, '');
  if (!HOSTNAME_RE.test(d)) throw invalid(location, 'must be a hostname such as example.com');
  return d;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

// ---------------------------------------------------------------------------------------------

function companyQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('companies as co')
    .select([
      'co.id',
      'co.name',
      'co.domain',
      'co.notes',
      'co.custom',
      'co.fields',
      tagRefsJson('company', 'co').as('tags'),
      'co.avatar_url',
      'co.avatar_source',
      'co.created_at',
      'co.updated_at',
      microsOf('co.created_at').as('created_us'),
    ])
    .where('co.workspace_id', '=', workspaceId);
}

type CompanyRow = Awaited<ReturnType<ReturnType<typeof companyQuery>['executeTakeFirstOrThrow']>>;

const present =
  (counts: Map<string, number>) =>
  (r: CompanyRow): CompanyView => ({
    id: r.id,
    name: r.name,
    domain: r.domain,
    notes: r.notes,
    custom: r.custom ?? {},
    tags: r.tags ?? [],
    fields: r.fields ?? {},
    contact_count: counts.get(r.id) ?? 0,
    avatar_url: r.avatar_url,
    avatar_source: r.avatar_source as CompanyView['avatar_source'],
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  });

async function loadCompany(db: Kysely<DB>, workspaceId: string, id: string): Promise<CompanyView | null> {
  const row = await companyQuery(db, workspaceId).where('co.id', '=', id).executeTakeFirst();
  if (!row) return null;
  return present(await contactCounts(db, workspaceId, [id]))(row);
}

/** For contacts: the company {id, name, domain} of this workspace, locked against deletion; null if absent. */
export async function lockCompanyRef(u: Unit, id: string): Promise<CompanyRefView | null> {
  if (!isUuid(id)) return null;
  const row = await u.trx
    .selectFrom('companies')
    .select(['id', 'name', 'domain'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', id)
    .forShare()
    .executeTakeFirst();
  return row ?? null;
}

/**
 * The company with this domain, created (named `name`, or the domain) with company.created when
 * there is none. Safe under concurrency: one created meanwhile is found, not duplicated.
 */
export async function findOrCreateCompanyByDomain(
  u: Unit,
  domain: string,
  name: string | null,
  location: string,
): Promise<CompanyRefView> {
  const d = cleanDomain(domain, location)!;
  const id = newId();
  const inserted = await sql<{ id: string }>`
    INSERT INTO companies (workspace_id, id, name, domain)
    VALUES (${u.workspaceId}, ${id}, ${name?.trim() || d}, ${d})
    ON CONFLICT (workspace_id, domain) WHERE domain IS NOT NULL DO NOTHING
    RETURNING id`.execute(u.trx);
  if (inserted.rows.length > 0) {
    const view = (await loadCompany(u.trx, u.workspaceId, id))!;
    u.emit({ type: 'company.created', data: { company: view } });
    return { id, name: view.name, domain: d };
  }
  return u.trx
    .selectFrom('companies')
    .select(['id', 'name', 'domain'])
    .where('workspace_id', '=', u.workspaceId)
    .where('domain', '=', d)
    .forShare()
    .executeTakeFirstOrThrow();
}

/** Newest first; q matches part of the name or domain, case-insensitively. */
export async function listCompanies(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListCompaniesQuery>,
): Promise<Page<CompanyView>> {
  const limit = q.limit ?? 50;
  const byField = fieldParams(q);
  const list = `companies:${JSON.stringify([ctx.workspaceId, q.q ?? null, q.tag ?? null, byField.map((f) => [f.location, f.value])])}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  const db = deps.database.db;
  let query = companyQuery(db, ctx.workspaceId);
  for (const p of await fieldFilterPredicates(db, ctx, 'company', sql`co.fields`, byField)) {
    query = query.where(p as never);
  }
  if (q.tag !== undefined) {
    query = query.where(hasTag('company', 'co', await tagIdsByName(db, ctx.workspaceId, q.tag)) as never);
  }
  if (q.q !== undefined) {
    const pattern = likePattern(q.q);
    query = query.where((eb) => eb.or([eb('co.name', 'ilike', pattern), eb('co.domain', 'ilike', pattern)]));
  }
  if (after) query = query.where(createdBefore('co', after));
  const rows = await query
    .orderBy('co.created_at', 'desc')
    .orderBy('co.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  const counts = await contactCounts(
    db,
    ctx.workspaceId,
    rows.slice(0, limit).map((r) => r.id),
  );
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present(counts));
}

export async function getCompany(deps: Deps, ctx: RequestContext, id: string): Promise<CompanyView> {
  if (!isUuid(id)) throw notFound('Company not found.');
  const company = await loadCompany(deps.database.db, ctx.workspaceId, id);
  if (!company) throw notFound('Company not found.');
  return company;
}

export async function createCompany(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateCompanyBody>,
): Promise<CompanyView> {
  const name = cleanName(input.name);
  const domain = cleanDomain(input.domain ?? null);
  const custom = mergeCustom({}, input.custom ?? {});
  const id = newId();
  return uniqueOrConflict(DOMAIN_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      await u.trx
        .insertInto('companies')
        .values({
          workspace_id: ctx.workspaceId,
          id,
          name,
          domain,
          notes: input.notes ?? null,
          custom: JSON.stringify(custom),
          fields: JSON.stringify((await applyFieldValues(u, 'company', {}, input.fields ?? {}, 'body.fields')).fields),
        })
        .execute();
      await applyTags(u, ctx, { entity: 'company', id }, input);
      const view = (await loadCompany(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'company.created', data: { company: view } });
      return view;
    }),
  );
}

export async function updateCompany(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchCompanyBody>,
): Promise<CompanyView> {
  if (!isUuid(id)) throw notFound('Company not found.');
  return uniqueOrConflict(DOMAIN_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await u.trx
        .selectFrom('companies')
        .select(['name', 'domain', 'notes', 'custom', 'fields'])
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!before) throw notFound('Company not found.');
      // Checked once the company is known to exist: a missing record answers 404 whatever the body.
      const name = input.name === undefined ? undefined : cleanName(input.name);
      const domain = input.domain === undefined ? undefined : cleanDomain(input.domain);
      const set: Record<string, unknown> = {};
      if (name !== undefined && name !== before.name) set.name = name;
      if (domain !== undefined && domain !== before.domain) set.domain = domain;
      if (input.notes !== undefined && input.notes !== before.notes) set.notes = input.notes;
      if (input.custom !== undefined) {
        const custom = mergeCustom(before.custom ?? {}, input.custom);
        if (JSON.stringify(custom) !== JSON.stringify(before.custom ?? {})) set.custom = JSON.stringify(custom);
      }
      if (input.fields !== undefined) {
        const applied = await applyFieldValues(u, 'company', before.fields ?? {}, input.fields, 'body.fields');
        if (applied.changes.length > 0) set.fields = JSON.stringify(applied.fields);
      }
      const labels = await applyTags(u, ctx, { entity: 'company', id }, input);
      const relabeled = labels.added.length + labels.removed.length > 0;
      if (Object.keys(set).length === 0 && !relabeled) return (await loadCompany(u.trx, ctx.workspaceId, id))!;
      await u.trx
        .updateTable('companies')
        .set({ ...set, updated_at: new Date() })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', id)
        .execute();
      const view = (await loadCompany(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'company.updated', data: { company: view } });
      return view;
    }),
  );
}

/** Deletes the company; its contacts keep existing without a company. */
export async function deleteCompany(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('Company not found.');
  await deps.writer.run(ctx.workspaceId, async (u) => {
    // Its contacts stay, without a company (the foreign key does not clear it: Citus, 0054_citus_keys.sql).
    // Locked first: a concurrent write that points at it waits, and then finds it gone.
    const locked = await u.trx
      .selectFrom('companies')
      .select('id')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!locked) throw notFound('Company not found.');
    await u.trx
      .updateTable('contacts')
      .set({ company_id: null })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('company_id', '=', id)
      .execute();
    const gone = await u.trx
      .deleteFrom('companies')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .returning(['name', 'domain', 'avatar_url'])
      .executeTakeFirst();
    if (!gone) throw notFound('Company not found.');
    await swapPictures(u.trx, null, gone.avatar_url); // removed after the cache horizon (src/modules/images)
    u.emit({ type: 'company.deleted', data: { company_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'company.deleted',
      entityType: 'company',
      entityId: id,
      data: { name: gone.name, domain: gone.domain },
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images: processing, storage, sources): the company's logo (avatar_url
// and avatar_source), with company.updated and company.avatar_updated / company.avatar_removed.

/**
 * Points the company at a stored picture, or at none. The view after the change; null when the
 * change did not apply (the current picture's source is not in `onlyOver`); 404 when the company
 * is not in the workspace. `ctx` null: the system (automatic lookups, in a job).
 */
export const setCompanyPicture = (
  deps: Deps,
  workspaceId: string,
  ctx: AuditContext | null,
  id: string,
  change: PictureChange,
): Promise<CompanyView | null> =>
  setRecordPicture(
    deps,
    { table: 'companies', kind: 'company', missing: 'Company not found.', load: loadCompany },
    workspaceId,
    ctx,
    id,
    change,
  );

/** What an automatic lookup needs to know of a company (null: not in the workspace). */
export async function companyPictureFacts(
  deps: Deps,
  workspaceId: string,
  id: string,
): Promise<{ domain: string | null; avatar_source: string | null } | null> {
  if (!isUuid(id)) return null;
  const row = await deps.database.db
    .selectFrom('companies')
    .select(['domain', 'avatar_source'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ?? null;
}
