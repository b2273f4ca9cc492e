// Contacts: the people who write in. Email (unique per workspace, case-insensitively, stored
// as given), external_id (unique), a company of the same workspace, notes, free-form custom
// data, a blocked flag. Labels and custom field values come later (tags [] and fields {});
// ticket_count and the contact's ticket list stay empty until tickets exist.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { fromMicros, microsOf } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import { likePattern, lockCompanyRef, mergeCustom, uniqueOrConflict } from '../companies/service.js';
import type {
  Contact,
  ContactTicket,
  CreateContactBody,
  ListContactsQuery,
  ListContactTicketsQuery,
  PatchContactBody,
} from './schemas.js';

export type ContactView = Static<typeof Contact>;
type ContactInput = Static<typeof CreateContactBody>;

const UNIQUE_KEYS = {
  contacts_email_key: 'A contact with this email already exists.',
  contacts_external_id_key: 'A contact with this external_id already exists.',
};

/** For companies: how many contacts each company has (companies without contacts are absent). */
export async function contactCounts(db: Kysely<DB>, workspaceId: string, companyIds: string[]) {
  const out = new Map<string, number>();
  if (companyIds.length === 0) return out;
  const rows = await db
    .selectFrom('contacts')
    .select(['company_id', sql<number>`count(*)::int`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('company_id', 'in', companyIds)
    .groupBy('company_id')
    .execute();
  for (const r of rows) out.set(r.company_id!, Number(r.n));
  return out;
}

function contactQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('contacts as c')
    .leftJoin('companies as co', (j) =>
      j.onRef('co.workspace_id', '=', 'c.workspace_id').onRef('co.id', '=', 'c.company_id'),
    )
    .select([
      'c.id',
      'c.email',
      'c.name',
      'c.phone',
      'c.avatar_url',
      'c.avatar_source',
      'c.company_id',
      'co.name as company_name',
      'co.domain as company_domain',
      'c.external_id',
      'c.notes',
      'c.custom',
      'c.blocked',
      'c.created_at',
      'c.updated_at',
      microsOf('c.created_at').as('created_us'),
    ])
    .where('c.workspace_id', '=', workspaceId);
}

type ContactRow = Awaited<ReturnType<ReturnType<typeof contactQuery>['executeTakeFirstOrThrow']>>;

const present = (r: ContactRow): ContactView => ({
  id: r.id,
  email: r.email,
  name: r.name,
  phone: r.phone,
  avatar_url: r.avatar_url,
  avatar_source: r.avatar_source as ContactView['avatar_source'],
  company:
    r.company_id !== null && r.company_name !== null
      ? { id: r.company_id, name: r.company_name, domain: r.company_domain ?? null }
      : null,
  external_id: r.external_id,
  notes: r.notes,
  custom: r.custom ?? {},
  tags: [],
  fields: {},
  blocked: r.blocked,
  // Tickets do not exist yet; the tickets issue computes this.
  ticket_count: 0,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

async function loadContact(db: Kysely<DB>, workspaceId: string, id: string): Promise<ContactView | null> {
  const row = await contactQuery(db, workspaceId).where('c.id', '=', id).executeTakeFirst();
  return row ? present(row) : null;
}

/** Newest first; q matches part of the name, email or phone; company_id keeps one company's contacts. */
export async function listContacts(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListContactsQuery>,
): Promise<Page<ContactView>> {
  const limit = q.limit ?? 50;
  const companyId = q.company_id?.toLowerCase() ?? null;
  const list = `contacts:${JSON.stringify([ctx.workspaceId, q.q ?? null, companyId])}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = contactQuery(deps.database.db, ctx.workspaceId);
  if (q.q !== undefined) {
    const pattern = likePattern(q.q);
    query = query.where((eb) =>
      eb.or([eb('c.name', 'ilike', pattern), eb('c.email', 'ilike', pattern), eb('c.phone', 'ilike', pattern)]),
    );
  }
  if (companyId !== null) query = query.where('c.company_id', '=', companyId);
  if (after) {
    const at = fromMicros(Number(after[0]));
    query = query.where((eb) =>
      eb.or([eb('c.created_at', '<', at), eb.and([eb('c.created_at', '=', at), eb('c.id', '<', String(after[1]))])]),
    );
  }
  const rows = await query
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(limit + 1)
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present);
}

export async function getContact(deps: Deps, ctx: RequestContext, id: string): Promise<ContactView> {
  if (!isUuid(id)) throw notFound('Contact not found.');
  const contact = await loadContact(deps.database.db, ctx.workspaceId, id);
  if (!contact) throw notFound('Contact not found.');
  return contact;
}

/** Trimmed; blank becomes null. */
const trimmedOrNull = (v: string | null): string | null => {
  if (v === null) return null;
  const t = v.trim();
  return t === '' ? null : t;
};

/** The columns an input sets (undefined: not given). */
async function columnsOf(u: Unit, input: ContactInput) {
  let externalId: string | null | undefined;
  if (input.external_id !== undefined) {
    externalId = trimmedOrNull(input.external_id);
    if (input.external_id !== null && externalId === null) throw invalid('body.external_id', 'must not be blank');
  }
  let companyId: string | null | undefined;
  if (input.company_id !== undefined) {
    companyId = null;
    if (input.company_id !== null) {
      const company = await lockCompanyRef(u, input.company_id.toLowerCase());
      if (!company) throw invalid('body.company_id', 'no such company in this workspace');
      companyId = company.id;
    }
  }
  return {
    email: input.email === undefined ? undefined : trimmedOrNull(input.email),
    name: input.name === undefined ? undefined : trimmedOrNull(input.name),
    phone: input.phone === undefined ? undefined : trimmedOrNull(input.phone),
    company_id: companyId,
    external_id: externalId,
    notes: input.notes,
    blocked: input.blocked,
  };
}

export async function createContact(deps: Deps, ctx: RequestContext, input: ContactInput): Promise<ContactView> {
  const custom = mergeCustom({}, input.custom ?? {});
  const id = newId();
  return uniqueOrConflict(UNIQUE_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const c = await columnsOf(u, input);
      await u.trx
        .insertInto('contacts')
        .values({
          workspace_id: ctx.workspaceId,
          id,
          email: c.email ?? null,
          name: c.name ?? null,
          phone: c.phone ?? null,
          company_id: c.company_id ?? null,
          external_id: c.external_id ?? null,
          notes: c.notes ?? null,
          custom: JSON.stringify(custom),
          blocked: c.blocked ?? false,
        })
        .execute();
      const view = (await loadContact(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'contact.created', data: { contact: view } });
      return view;
    }),
  );
}

export async function updateContact(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchContactBody>,
): Promise<ContactView> {
  if (!isUuid(id)) throw notFound('Contact not found.');
  return uniqueOrConflict(UNIQUE_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await u.trx
        .selectFrom('contacts')
        .select(['email', 'name', 'phone', 'company_id', 'external_id', 'notes', 'custom', 'blocked'])
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!before) throw notFound('Contact not found.');
      const c = await columnsOf(u, input);
      const set: Record<string, unknown> = {};
      for (const key of ['email', 'name', 'phone', 'company_id', 'external_id', 'notes', 'blocked'] as const) {
        if (c[key] !== undefined && c[key] !== before[key]) set[key] = c[key];
      }
      if (input.custom !== undefined) {
        const custom = mergeCustom(before.custom ?? {}, input.custom);
        if (JSON.stringify(custom) !== JSON.stringify(before.custom ?? {})) set.custom = JSON.stringify(custom);
      }
      if (Object.keys(set).length === 0) return (await loadContact(u.trx, ctx.workspaceId, id))!;
      await u.trx
        .updateTable('contacts')
        .set({ ...set, updated_at: new Date() })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', id)
        .execute();
      const view = (await loadContact(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'contact.updated', data: { contact: view } });
      return view;
    }),
  );
}

/**
 * Deletes the contact for good. Tickets do not exist yet: the tickets issue decides what
 * happens to a deleted contact's tickets (and may refuse or soften this delete).
 */
export async function deleteContact(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('Contact not found.');
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('contacts')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .returning(['email', 'name'])
      .executeTakeFirst();
    if (!gone) throw notFound('Contact not found.');
    u.emit({ type: 'contact.deleted', data: { contact_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'contact.deleted',
      entityType: 'contact',
      entityId: id,
      data: { email: gone.email, name: gone.name },
    });
  });
}

/**
 * A contact's tickets. No tickets table exists yet: after checking the contact (404 like any
 * other record) this answers an empty page; the tickets issue fills it, newest first.
 */
export async function listContactTickets(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  q: Static<typeof ListContactTicketsQuery>,
): Promise<Page<Static<typeof ContactTicket>>> {
  // A cursor is checked first (422 whatever the id), as on every list.
  deps.pager.decode(`contact-tickets:${JSON.stringify([ctx.workspaceId, id.toLowerCase()])}`, q.cursor, 2);
  if (!isUuid(id)) throw notFound('Contact not found.');
  const row = await deps.database.db
    .selectFrom('contacts')
    .select('id')
    .where('workspace_id', '=', ctx.workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound('Contact not found.');
  return { data: [], next_cursor: null };
}
