// Signing customers in to the portal (docs/help-center.md "Where customers go"): a one-time link
// mailed to a contact, then a session of the portal's own.
//
// - The link's token is 32 random bytes; only its SHA-256 is stored (portal_sign_in_links). It
//   works once and for 15 minutes. Opening it (GET) shows a button; only the button's POST spends
//   it, so a mail scanner that fetches links does not use it up.
// - The session cookie (`svc_portal`, not the agents' cookie) holds another 32 random bytes, the
//   session row their SHA-256 (portal_sessions): one workspace, one contact. HttpOnly,
//   SameSite=Lax, Secure when PUBLIC_URL is https, Path=/hc/{slug}. It ends 30 days after its
//   last use (the row's expires_at moves forward at most once an hour, the cookie with it) or
//   when the customer signs out (the row is deleted).
// - Every form of a signed-in customer carries a CSRF token bound to the session: an HMAC (key
//   derived from SECRET_KEY) of the session's hash. A post without it, or with another, is 403.
import { createHmac, hkdfSync } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import { constantTimeEqual, newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import type { Database } from '../../platform/db/index.js';

export const COOKIE = 'svc_portal';
export const LINK_TTL_MS = 15 * 60 * 1000;
export const SESSION_IDLE_MS = 30 * 24 * 3600 * 1000;
/** A session's expiry moves forward (one UPDATE) at most this often. */
const TOUCH_MS = 3600 * 1000;

export interface PortalSession {
  id: string;
  workspaceId: string;
  contactId: string;
  contactEmail: string | null;
  contactName: string | null;
  /** The session's hash: what the CSRF token is made from. */
  tokenHash: string;
  expiresAt: Date;
}

/** A new sign-in link for a contact: the token to mail (only its hash is kept). */
export async function createSignInLink(deps: Deps, workspaceId: string, contactId: string): Promise<string> {
  const token = randomSecret('', 32);
  await deps.database.db
    .insertInto('portal_sign_in_links')
    .values({
      workspace_id: workspaceId,
      id: newId(),
      contact_id: contactId,
      token_hash: hashSecret(token),
      expires_at: new Date(Date.now() + LINK_TTL_MS),
    })
    .execute();
  return token;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** Whether a link's token can still sign in (GET shows the button only then). */
export async function linkUsable(deps: Deps, workspaceId: string, token: string): Promise<boolean> {
  if (!TOKEN_RE.test(token)) return false;
  const row = await deps.database.db
    .selectFrom('portal_sign_in_links')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('token_hash', '=', hashSecret(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Spends a link (one statement: two posts of one link cannot both win) and starts a session for
 * its contact. Returns the cookie's value, or null for a link that is unknown, used or expired.
 */
export async function signInWithLink(deps: Deps, workspaceId: string, token: string): Promise<string | null> {
  if (!TOKEN_RE.test(token)) return null;
  return deps.database.db.transaction().execute(async (trx) => {
    const link = await trx
      .updateTable('portal_sign_in_links')
      .set({ used_at: sql`now()` })
      .where('workspace_id', '=', workspaceId)
      .where('token_hash', '=', hashSecret(token))
      .where('used_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .returning('contact_id')
      .executeTakeFirst();
    if (!link) return null;
    const secret = randomSecret('', 32);
    await trx
      .insertInto('portal_sessions')
      .values({
        workspace_id: workspaceId,
        id: newId(),
        contact_id: link.contact_id,
        token_hash: hashSecret(secret),
        expires_at: new Date(Date.now() + SESSION_IDLE_MS),
      })
      .execute();
    return secret;
  });
}

/** The cookie's path: the help center's address (PUBLIC_URL's path, then /hc/{slug}). */
export const cookiePath = (home: string): string => home;

const cookieOptions = (config: Config, home: string) => ({
  path: cookiePath(home),
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: new URL(config.publicUrl).protocol === 'https:',
});

export function setSessionCookie(config: Config, reply: FastifyReply, home: string, secret: string): void {
  reply.setCookie(COOKIE, secret, { ...cookieOptions(config, home), maxAge: SESSION_IDLE_MS / 1000 });
}

export function clearSessionCookie(config: Config, reply: FastifyReply, home: string): void {
  reply.clearCookie(COOKIE, cookieOptions(config, home));
}

/**
 * The request's live session for this workspace, or null. Moves its expiry forward (and the
 * cookie's) when the last move is more than an hour old.
 */
export async function currentSession(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  workspaceId: string,
  home: string,
): Promise<PortalSession | null> {
  const secret = req.cookies[COOKIE];
  if (!secret || !TOKEN_RE.test(secret)) return null;
  const tokenHash = hashSecret(secret);
  const row = await deps.database.db
    .selectFrom('portal_sessions as s')
    .innerJoin('contacts as c', (j) =>
      j.onRef('c.workspace_id', '=', 's.workspace_id').onRef('c.id', '=', 's.contact_id'),
    )
    .select(['s.id', 's.contact_id', 's.last_seen_at', 's.expires_at', 'c.email', 'c.name'])
    .where('s.workspace_id', '=', workspaceId)
    .where('s.token_hash', '=', tokenHash)
    .where('s.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  if (!row) return null;
  let expiresAt = row.expires_at;
  if (Date.now() - row.last_seen_at.getTime() > TOUCH_MS) {
    expiresAt = new Date(Date.now() + SESSION_IDLE_MS);
    await deps.database.db
      .updateTable('portal_sessions')
      .set({ last_seen_at: sql`now()`, expires_at: expiresAt })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', row.id)
      .execute();
    setSessionCookie(deps.config, reply, home, secret);
  }
  return {
    id: row.id,
    workspaceId,
    contactId: row.contact_id,
    contactEmail: row.email,
    contactName: row.name,
    tokenHash,
    expiresAt,
  };
}

/** Signing out: the session row goes (the cookie is cleared by the caller). */
export async function endSession(deps: Deps, s: PortalSession): Promise<void> {
  await deps.database.db
    .deleteFrom('portal_sessions')
    .where('workspace_id', '=', s.workspaceId)
    .where('id', '=', s.id)
    .execute();
}

const csrfKeys = new WeakMap<Config, Buffer>();

/** The session's CSRF token, carried by every form of the customer area. */
export function csrfToken(config: Config, s: PortalSession): string {
  let k = csrfKeys.get(config);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', config.secretKey, 'svc-portal-csrf', 'portal csrf key v1', 32));
    csrfKeys.set(config, k);
  }
  return createHmac('sha256', k).update(s.tokenHash).digest('base64url');
}

export const csrfValid = (config: Config, s: PortalSession, given: unknown): boolean =>
  typeof given === 'string' && constantTimeEqual(given, csrfToken(config, s));

/** The hourly maintenance job: links and sessions past their expiry. */
export async function prunePortalSessions(database: Database): Promise<number> {
  const links = await database.db
    .deleteFrom('portal_sign_in_links')
    .where('expires_at', '<', sql<Date>`now() - interval '1 day'`)
    .executeTakeFirst();
  const sessions = await database.db
    .deleteFrom('portal_sessions')
    .where('expires_at', '<', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(links.numDeletedRows ?? 0) + Number(sessions.numDeletedRows ?? 0);
}
