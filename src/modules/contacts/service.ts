// Contacts: the people who write in. Email (unique per workspace, case-insensitively, stored
// as given), external_id (unique), a company of the same workspace, notes, free-form custom
// data, custom field values, a blocked flag. Labels come with the labels module (tags []).
// Deleting a contact keeps its tickets, without a contact (the tickets' foreign key).
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
import { findOrCreateCompanyByDomain, lockCompanyRef } from '../companies/service.js';
import { fieldFilterPredicates, fieldParams } from '../custom-fields/filters.js';
import { applyFieldValues } from '../custom-fields/values.js';
import { setRecordPicture } from '../images/owners.js';
import { type PictureChange, swapPictures } from '../images/store.js';
import { publishControl } from '../members/control.js';
import { applyTags, tagIdsByName } from '../tags/records.js';
import { hasTag, tagRefsJson } from '../tags/sql.js';
import { checkTicketCursor, listTickets } from '../tickets/list.js';
import { ticketCountsOfContacts } from '../tickets/queries.js';
import type {
  Contact,
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

function contactQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('contacts as c')
    .leftJoin('companies as co', (j) =>
      j.onRef('co.workspace_id', '=', 'c.workspace_id').onRef('co.id', '=', 'c.company_id'),
    )
    .select([
      'c.id',
      'c.email',
      'c.unverified_email',
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
      'c.fields',
      tagRefsJson('contact', 'c').as('tags'),
      'c.blocked',
      'c.created_at',
      'c.updated_at',
      microsOf('c.created_at').as('created_us'),
    ])
    .where('c.workspace_id', '=', workspaceId);
}

type ContactRow = Awaited<ReturnType<ReturnType<typeof contactQuery>['executeTakeFirstOrThrow']>>;

const present =
  (ticketCounts: Map<string, number>) =>
  (r: ContactRow): ContactView => ({
    id: r.id,
    email: r.email,
    unverified_email: r.unverified_email,
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
    tags: r.tags ?? [],
    fields: r.fields ?? {},
    blocked: r.blocked,
    ticket_count: ticketCounts.get(r.id) ?? 0,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  });

async function loadContact(db: Kysely<DB>, workspaceId: string, id: string): Promise<ContactView | null> {
  const row = await contactQuery(db, workspaceId).where('c.id', '=', id).executeTakeFirst();
  return row ? present(await ticketCountsOfContacts(db, workspaceId, [id]))(row) : null;
}

/** Newest first; q matches part of the name, email or phone; company_id keeps one company's contacts. */
export async function listContacts(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListContactsQuery>,
): Promise<Page<ContactView>> {
  const limit = q.limit ?? 50;
  const companyId = q.company_id?.toLowerCase() ?? null;
  const byField = fieldParams(q);
  const list = `contacts:${JSON.stringify([ctx.workspaceId, q.q ?? null, companyId, q.tag ?? null, byField.map((f) => [f.location, f.value])])}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = contactQuery(deps.database.db, ctx.workspaceId);
  for (const p of await fieldFilterPredicates(deps.database.db, ctx, 'contact', sql`c.fields`, byField)) {
    query = query.where(p as never);
  }
  if (q.tag !== undefined) {
    query = query.where(hasTag('contact', 'c', await tagIdsByName(deps.database.db, ctx.workspaceId, q.tag)) as never);
  }
  if (q.q !== undefined) {
    const pattern = likePattern(q.q);
    query = query.where((eb) =>
      eb.or([eb('c.name', 'ilike', pattern), eb('c.email', 'ilike', pattern), eb('c.phone', 'ilike', pattern)]),
    );
  }
  if (companyId !== null) query = query.where('c.company_id', '=', companyId);
  if (after) query = query.where(createdBefore('c', after));
  const rows = await query
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  const counts = await ticketCountsOfContacts(
    deps.database.db,
    ctx.workspaceId,
    rows.map((r) => r.id),
  );
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present(counts));
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

/** `company`: {id} of a company of this workspace, {domain[, name]} found or created, or null. */
async function companyLink(u: Unit, link: NonNullable<ContactInput['company']> | null): Promise<string | null> {
  if (link === null) return null;
  if ((link.id === undefined) === (link.domain === undefined)) {
    throw invalid('body.company', 'give the company id or its domain');
  }
  if (link.id !== undefined) {
    if (link.name !== undefined) throw invalid('body.company.name', 'is only used with domain');
    const company = await lockCompanyRef(u, link.id.toLowerCase());
    if (!company) throw invalid('body.company.id', 'no such company in this workspace');
    return company.id;
  }
  return (await findOrCreateCompanyByDomain(u, link.domain!, link.name ?? null, 'body.company.domain')).id;
}

/** The columns an input sets (undefined: not given). */
async function columnsOf(u: Unit, input: ContactInput) {
  let externalId: string | null | undefined;
  if (input.external_id !== undefined) {
    externalId = trimmedOrNull(input.external_id);
    if (input.external_id !== null && externalId === null) throw invalid('body.external_id', 'must not be blank');
  }
  let companyId: string | null | undefined;
  if (input.company !== undefined && input.company_id !== undefined) {
    throw invalid('body.company', 'send company or company_id, not both');
  }
  if (input.company_id !== undefined) {
    companyId = null;
    if (input.company_id !== null) {
      const company = await lockCompanyRef(u, input.company_id.toLowerCase());
      if (!company) throw invalid('body.company_id', 'no such company in this workspace');
      companyId = company.id;
    }
  } else if (input.company !== undefined) {
    companyId = await companyLink(u, input.company);
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
      const { fields } = await applyFieldValues(u, 'contact', {}, input.fields ?? {}, 'body.fields');
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
          fields: JSON.stringify(fields),
          blocked: c.blocked ?? false,
        })
        .execute();
      await applyTags(u, ctx, { entity: 'contact', id }, input);
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
        .select([
          'email',
          'unverified_email',
          'name',
          'phone',
          'company_id',
          'external_id',
          'notes',
          'custom',
          'fields',
          'blocked',
        ])
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
      // An agent who gives the contact the address a chat visitor claimed vouches for it.
      if (typeof set.email === 'string' && set.email.toLowerCase() === before.unverified_email?.toLowerCase()) {
        set.unverified_email = null;
      }
      if (input.custom !== undefined) {
        const custom = mergeCustom(before.custom ?? {}, input.custom);
        if (JSON.stringify(custom) !== JSON.stringify(before.custom ?? {})) set.custom = JSON.stringify(custom);
      }
      if (input.fields !== undefined) {
        const applied = await applyFieldValues(u, 'contact', before.fields ?? {}, input.fields, 'body.fields');
        if (applied.changes.length > 0) set.fields = JSON.stringify(applied.fields);
      }
      const labels = await applyTags(u, ctx, { entity: 'contact', id }, input);
      const relabeled = labels.added.length + labels.removed.length > 0;
      if (Object.keys(set).length === 0 && !relabeled) return (await loadContact(u.trx, ctx.workspaceId, id))!;
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
    // Its tickets stay, without a contact (the foreign key does not clear it: Citus, 0054_citus_keys.sql).
    // Locked first: a concurrent write that points at it waits, and then finds it gone.
    const locked = await u.trx
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!locked) throw notFound('Contact not found.');
    await u.trx
      .updateTable('tickets')
      .set({ contact_id: null })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('contact_id', '=', id)
      .execute();
    const gone = await u.trx
      .deleteFrom('contacts')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .returning(['email', 'name', 'avatar_url'])
      .executeTakeFirst();
    if (!gone) throw notFound('Contact not found.');
    await swapPictures(u.trx, null, gone.avatar_url); // removed after the cache horizon (src/modules/images)
    u.emit({ type: 'contact.deleted', data: { contact_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'contact.deleted',
      entityType: 'contact',
      entityId: id,
      data: { email: gone.email, name: gone.name },
    });
  });
  // The contact's chat widget visitors went with it (their tokens' rows): their sockets close.
  await publishControl(deps, { type: 'contact.deleted', workspace_id: ctx.workspaceId, contact_id: id.toLowerCase() });
}

/** A contact's tickets (those the caller may see, spam left out), newest first. */
export async function listContactTickets(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  q: Static<typeof ListContactTicketsQuery>,
): Promise<Buffer> {
  const query = { contact_id: id.toLowerCase(), sort: 'created_at' as const, limit: q.limit, cursor: q.cursor };
  checkTicketCursor(deps, ctx, query);
  if (!isUuid(id)) throw notFound('Contact not found.');
  const row = await deps.database.db
    .selectFrom('contacts')
    .select('id')
    .where('workspace_id', '=', ctx.workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound('Contact not found.');
  return listTickets(deps, ctx, query);
}

/**
 * The contact with this email (case-insensitive), created with `name` when there is none
 * (contact.created). Safe under concurrency: a contact created meanwhile by another
 * transaction is found, not duplicated. Used when a ticket names its customer by email.
 */
export async function findOrCreateContactByEmail(u: Unit, email: string, name: string | null): Promise<string> {
  const cleanEmail = email.trim();
  const id = newId();
  const inserted = await sql<{ id: string }>`
    INSERT INTO contacts (workspace_id, id, email, name)
    VALUES (${u.workspaceId}, ${id}, ${cleanEmail}, ${trimmedOrNull(name)})
    ON CONFLICT (workspace_id, lower(email)) WHERE email IS NOT NULL DO NOTHING
    RETURNING id`.execute(u.trx);
  if (inserted.rows.length > 0) {
    const view = (await loadContact(u.trx, u.workspaceId, id))!;
    u.emit({ type: 'contact.created', data: { contact: view } });
    return id;
  }
  const existing = await u.trx
    .selectFrom('contacts')
    .select('id')
    .where('workspace_id', '=', u.workspaceId)
    .where(sql`lower(email)`, '=', cleanEmail.toLowerCase())
    .forShare()
    .executeTakeFirstOrThrow();
  return existing.id;
}

/**
 * Up to `limit` contacts whose name, email or phone contains q (case-insensitive), best match
 * first: by trigram similarity to the name or email, then newest. For GET /v1/search.
 */
export async function searchContacts(deps: Deps, ctx: RequestContext, q: string, limit: number) {
  const pattern = likePattern(q);
  const rows = await contactQuery(deps.database.db, ctx.workspaceId)
    .where((eb) =>
      eb.or([eb('c.name', 'ilike', pattern), eb('c.email', 'ilike', pattern), eb('c.phone', 'ilike', pattern)]),
    )
    .orderBy(sql`greatest(similarity(coalesce(c.name, ''), ${q}), similarity(coalesce(c.email, ''), ${q}))`, 'desc')
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(pageLimit(limit))
    .execute();
  return rows.map(
    present(
      await ticketCountsOfContacts(
        deps.database.db,
        ctx.workspaceId,
        rows.map((r) => r.id),
      ),
    ),
  );
}

/**
 * A chat widget visitor's contact (src/modules/widget), in the caller's unit: with `externalId`
 * (a verified identity) the contact holding it, found or made; else `contactId`'s (a visitor who
 * has one), or a new contact made with the id `newId` (a visitor's first message or email).
 * A name fills the contact's blank. An email is the contact's `email` only when `emailVerified`
 * (the identity hash covers it), the contact has none and no other contact holds it; any other
 * email a visitor types is a claim (`unverified_email`, docs/decisions.md "Chat widget"): shown to
 * agents as unverified, never matched to mail, so a typed address never joins the visitor to
 * its real owner's mail. An email that differs from the contact's verified one is left out
 * (`emailTaken`: the widget keeps it as the sender address of the visitor's messages).
 */
export async function visitorContact(
  u: Unit,
  input: {
    contactId: string | null;
    newId: string | null;
    externalId: string | null;
    email: string | null;
    emailVerified: boolean;
    name: string | null;
  },
): Promise<{
  id: string;
  email: string | null;
  unverified_email: string | null;
  name: string | null;
  avatar_url: string | null;
  emailTaken: boolean;
}> {
  let id = input.contactId;
  let created = false;
  if (input.externalId !== null) {
    const fresh = newId();
    const inserted = await sql<{ id: string }>`
      INSERT INTO contacts (workspace_id, id, external_id)
      VALUES (${u.workspaceId}, ${fresh}, ${input.externalId})
      ON CONFLICT (workspace_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
      RETURNING id`.execute(u.trx);
    if (inserted.rows.length > 0) {
      id = fresh;
      created = true;
    } else {
      id = (
        await u.trx
          .selectFrom('contacts')
          .select('id')
          .where('workspace_id', '=', u.workspaceId)
          .where('external_id', '=', input.externalId)
          .executeTakeFirstOrThrow()
      ).id;
    }
  } else if (id === null) {
    // The id the visitor was given before they had a contact (their session's contact id). Two
    // first messages at once: the second finds the contact the first made.
    id = input.newId ?? newId();
    const inserted = await sql<{ id: string }>`
      INSERT INTO contacts (workspace_id, id) VALUES (${u.workspaceId}, ${id})
      ON CONFLICT (workspace_id, id) DO NOTHING
      RETURNING id`.execute(u.trx);
    created = inserted.rows.length > 0;
  }
  const row = await u.trx
    .selectFrom('contacts')
    .select(['email', 'unverified_email', 'name'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const set: { email?: string; unverified_email?: string | null; name?: string } = {};
  const name = trimmedOrNull(input.name);
  if (name !== null && row.name === null) set.name = name;
  let emailTaken = false;
  const email = input.email?.trim() || null;
  const same = (a: string | null) => a !== null && email !== null && a.toLowerCase() === email.toLowerCase();
  if (email !== null && row.email !== null) {
    emailTaken = !same(row.email);
  } else if (email !== null && input.emailVerified) {
    const holder = await u.trx
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', u.workspaceId)
      .where(sql`lower(email)`, '=', email.toLowerCase())
      .executeTakeFirst();
    if (holder) emailTaken = true;
    else {
      set.email = email;
      if (row.unverified_email !== null) set.unverified_email = null;
    }
  } else if (email !== null && row.unverified_email !== email) {
    set.unverified_email = email;
  }
  if (Object.keys(set).length > 0) {
    await u.trx
      .updateTable('contacts')
      .set({ ...set, updated_at: new Date() })
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', id)
      .execute();
  }
  const view = (await loadContact(u.trx, u.workspaceId, id))!;
  if (created) u.emit({ type: 'contact.created', data: { contact: view } });
  else if (Object.keys(set).length > 0) u.emit({ type: 'contact.updated', data: { contact: view } });
  return {
    id,
    email: view.email,
    unverified_email: view.unverified_email,
    name: view.name,
    avatar_url: view.avatar_url,
    emailTaken,
  };
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images: processing, storage, sources): the contact's avatar_url and
// avatar_source, with contact.updated and contact.avatar_updated / contact.avatar_removed.

/**
 * Points the contact at a stored picture, or at none. The view after the change; null when the
 * change did not apply (the current picture's source is not in `onlyOver`); 404 when the contact
 * is not in the workspace. `ctx` null: the system (automatic lookups, in a job).
 */
export const setContactPicture = (
  deps: Deps,
  workspaceId: string,
  ctx: AuditContext | null,
  id: string,
  change: PictureChange,
): Promise<ContactView | null> =>
  setRecordPicture(
    deps,
    { table: 'contacts', kind: 'contact', missing: 'Contact not found.', load: loadContact },
    workspaceId,
    ctx,
    id,
    change,
  );

/** What an automatic lookup needs to know of a contact (null: not in the workspace). */
export async function contactPictureFacts(
  deps: Deps,
  workspaceId: string,
  id: string,
): Promise<{ email: string | null; avatar_source: string | null } | null> {
  if (!isUuid(id)) return null;
  const row = await deps.database.db
    .selectFrom('contacts')
    .select(['email', 'avatar_source'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ?? null;
}
