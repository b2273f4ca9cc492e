// Visitor tokens (docs/widget.md "Visitor tokens"): `svc_vis_` + 32 random bytes, given once by
// POST /v1/widget/session and sent as `Authorization: Visitor <token>`. Only the token's SHA-256
// is stored (widget_visitors), bound to one workspace and to one contact, or, for a visitor who
// has not written yet, to the id their contact will have (pending_contact_id: a session alone
// makes no contact). A token works until the visitor signs out (DELETE /v1/widget/session sets
// revoked_at) or its contact is deleted (the row goes with it). While the widget is turned off
// its routes answer 404; tokens keep working once it is on again. Rows of visitors who never
// wrote go after 30 days without a visit (pruneIdleVisitors).
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import type { Database } from '../../platform/db/index.js';
import type { Unit } from '../../platform/db/tx.js';
import type { VisitorContext } from '../../platform/http/context.js';
import { publishControl } from '../members/control.js';

export const VISITOR_PREFIX = 'svc_vis_';
const TOKEN_RE = /^svc_vis_[A-Za-z0-9_-]{43}$/;
/** last_seen_at moves forward at most this often (one UPDATE). */
const TOUCH_MS = 3600 * 1000;

export interface VisitorRow {
  id: string;
  workspaceId: string;
  /** The visitor's contact, or the id it will have (pending: no contact yet). */
  contactId: string;
  pending: boolean;
  email: string | null;
  name: string | null;
}

/**
 * A new token, in the caller's unit, for the contact, or (`contactId` null) for a visitor who has
 * none yet: their contact's id is chosen now. The secret is returned once.
 */
export async function issueVisitorToken(
  u: Unit,
  contactId: string | null,
  given: { email?: string | null; name?: string | null } = {},
): Promise<{ token: string; id: string; contactId: string }> {
  const token = randomSecret(VISITOR_PREFIX, 32);
  const id = newId();
  const pending = contactId === null ? newId() : null;
  await u.trx
    .insertInto('widget_visitors')
    .values({
      workspace_id: u.workspaceId,
      id,
      contact_id: contactId,
      pending_contact_id: pending,
      token_hash: hashSecret(token),
      email: given.email ?? null,
      name: given.name ?? null,
    })
    .execute();
  return { token, id, contactId: contactId ?? pending! };
}

/**
 * The live visitor of a token, or null (unknown or revoked).
 * `workspaceId`: only a visitor of that workspace (a session resumed with another workspace's
 * widget_key finds none).
 */
export async function findVisitor(deps: Deps, token: string, workspaceId?: string): Promise<VisitorRow | null> {
  if (!TOKEN_RE.test(token)) return null;
  let q = deps.database.db
    .selectFrom('widget_visitors')
    .select(['id', 'workspace_id', 'contact_id', 'pending_contact_id', 'email', 'name', 'last_seen_at'])
    .where('token_hash', '=', hashSecret(token))
    .where('revoked_at', 'is', null);
  if (workspaceId !== undefined) q = q.where('workspace_id', '=', workspaceId);
  const row = await q.executeTakeFirst();
  if (!row) return null;
  if (Date.now() - row.last_seen_at.getTime() > TOUCH_MS) {
    await deps.database.db
      .updateTable('widget_visitors')
      .set({ last_seen_at: sql`now()` })
      .where('workspace_id', '=', row.workspace_id)
      .where('id', '=', row.id)
      .execute();
  }
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    contactId: (row.contact_id ?? row.pending_contact_id)!,
    pending: row.contact_id === null,
    email: row.email,
    name: row.name,
  };
}

/** The credential resolver's side (src/platform/http/auth.ts): a visitor token → its context. */
export const visitorResolver =
  (deps: Deps) =>
  async (token: string, ip: string): Promise<VisitorContext | null> => {
    const v = await findVisitor(deps, token);
    return v ? { workspaceId: v.workspaceId, contactId: v.contactId, visitorId: v.id, ip } : null;
  };

/**
 * Signing out: the token stops working at once, and the visitor's open sockets close (a control
 * notice to every gateway process; the gateway also refuses the row's realtime tokens at connect).
 */
export async function revokeVisitor(deps: Deps, visitor: VisitorContext): Promise<void> {
  const revoked = await deps.database.db
    .updateTable('widget_visitors')
    .set({ revoked_at: sql`now()` })
    .where('workspace_id', '=', visitor.workspaceId)
    .where('id', '=', visitor.visitorId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(revoked.numUpdatedRows) > 0) {
    await publishControl(deps, {
      type: 'widget.visitor_revoked',
      workspace_id: visitor.workspaceId,
      visitor_id: visitor.visitorId,
    });
  }
}

/** Keeps an email the visitor typed (one their contact does not hold) on the token's row. */
export async function setVisitorEmail(u: Unit, visitorId: string, email: string): Promise<void> {
  await u.trx
    .updateTable('widget_visitors')
    .set({ email })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', visitorId)
    .execute();
}

/** A name given by a visitor without a contact, kept for the contact they may become. */
export async function setVisitorName(u: Unit, visitorId: string, name: string): Promise<void> {
  await u.trx
    .updateTable('widget_visitors')
    .set({ name })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', visitorId)
    .execute();
}

/** The visitor's row, locked for the caller's unit: whether they have a contact yet. */
export async function lockVisitor(u: Unit, visitorId: string) {
  return u.trx
    .selectFrom('widget_visitors')
    .select(['contact_id', 'pending_contact_id', 'name', 'email'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', visitorId)
    .forUpdate()
    .executeTakeFirst();
}

/** The visitor's contact now exists (made with the pending id, or a verified identity's). */
export async function attachContact(u: Unit, visitorId: string, contactId: string): Promise<void> {
  await u.trx
    .updateTable('widget_visitors')
    .set({ contact_id: contactId, pending_contact_id: null })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', visitorId)
    .execute();
}

/** Visitors who never wrote nor gave an email, not seen for this long, are removed. */
const IDLE_VISITOR_DAYS = 30;
/** Revoked tokens' rows are kept this long (a revoked token and an unknown one both answer 401). */
const REVOKED_VISITOR_DAYS = 1;

/** The maintenance job's part (runtime.ts): rows of idle visitors without a contact, and revoked rows. */
export async function pruneIdleVisitors(database: Database): Promise<number> {
  const idle = await database.db
    .deleteFrom('widget_visitors')
    .where('contact_id', 'is', null)
    .where('last_seen_at', '<', sql<Date>`now() - make_interval(days => ${IDLE_VISITOR_DAYS})`)
    .executeTakeFirst();
  const revoked = await database.db
    .deleteFrom('widget_visitors')
    .where('revoked_at', '<', sql<Date>`now() - make_interval(days => ${REVOKED_VISITOR_DAYS})`)
    .executeTakeFirst();
  return Number(idle.numDeletedRows ?? 0) + Number(revoked.numDeletedRows ?? 0);
}
