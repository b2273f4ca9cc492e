// Visitor tokens (docs/widget.md "Visitor tokens"): `svc_vis_` + 32 random bytes, given once by
// POST /v1/widget/session and sent as `Authorization: Visitor <token>`. Only the token's SHA-256
// is stored (widget_visitors), bound to one workspace and one contact. A token works until the
// visitor signs out (DELETE /v1/widget/session sets revoked_at) or its contact is deleted (the
// row goes with it). While the widget is turned off its routes answer 404; tokens keep working
// once it is on again.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import type { Unit } from '../../platform/db/tx.js';
import type { VisitorContext } from '../../platform/http/context.js';

export const VISITOR_PREFIX = 'svc_vis_';
const TOKEN_RE = /^svc_vis_[A-Za-z0-9_-]{43}$/;
/** last_seen_at moves forward at most this often (one UPDATE). */
const TOUCH_MS = 3600 * 1000;

export interface VisitorRow {
  id: string;
  workspaceId: string;
  contactId: string;
  email: string | null;
}

/** A new token for the contact, in the caller's unit; the secret is returned once. */
export async function issueVisitorToken(
  u: Unit,
  contactId: string,
  email: string | null,
): Promise<{ token: string; id: string }> {
  const token = randomSecret(VISITOR_PREFIX, 32);
  const id = newId();
  await u.trx
    .insertInto('widget_visitors')
    .values({ workspace_id: u.workspaceId, id, contact_id: contactId, token_hash: hashSecret(token), email })
    .execute();
  return { token, id };
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
    .select(['id', 'workspace_id', 'contact_id', 'email', 'last_seen_at'])
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
  return { id: row.id, workspaceId: row.workspace_id, contactId: row.contact_id, email: row.email };
}

/** The credential resolver's side (src/platform/http/auth.ts): a visitor token → its context. */
export const visitorResolver =
  (deps: Deps) =>
  async (token: string, ip: string): Promise<VisitorContext | null> => {
    const v = await findVisitor(deps, token);
    return v ? { workspaceId: v.workspaceId, contactId: v.contactId, visitorId: v.id, ip } : null;
  };

/** Signing out: the token stops working at once. */
export async function revokeVisitor(deps: Deps, visitor: VisitorContext): Promise<void> {
  await deps.database.db
    .updateTable('widget_visitors')
    .set({ revoked_at: sql`now()` })
    .where('workspace_id', '=', visitor.workspaceId)
    .where('id', '=', visitor.visitorId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Keeps an email the visitor typed (one that another contact holds) on the token's row. */
export async function setVisitorEmail(u: Unit, visitorId: string, email: string): Promise<void> {
  await u.trx
    .updateTable('widget_visitors')
    .set({ email })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', visitorId)
    .execute();
}
