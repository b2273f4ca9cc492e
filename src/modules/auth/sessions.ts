// Sessions: a session is one sign-in. Its refresh token (stored only as a SHA-256 hash)
// rotates on every refresh; the tokens it rotated away from are kept (hashed) until the
// session ends, so presenting one again (a stolen copy, or a replay) revokes the whole session.
//
// Browsers hold one refresh cookie per account, `svc_rt_<user_id>` (HttpOnly, Secure,
// SameSite=Lax, Path=/v1/auth), up to five accounts. The cookie of earlier versions,
// `svc_refresh`, keeps working and moves to the new name on first use. Native clients
// (SVC-Client: ios/<version>, no Origin) get the refresh token in the body instead.
//
// Lifetime: a session ends 30 days after its last refresh (idle) and at the latest 60 days
// after the sign-in (absolute); created_at is the sign-in time and never changes.
//
// Each session keeps the User-Agent and client address of its sign-in, replaced by those of each
// refresh, so its person can tell their sessions apart (GET /v1/me/sessions, src/modules/me).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret, TOKEN_TTL_SECONDS } from '../../platform/crypto/tokens.js';
import type { Database } from '../../platform/db/index.js';
import { ApiError, unauthorized } from '../../platform/http/errors.js';
import { presentUser, type UserRow, type UserView } from './users.js';

const DAY_MS = 86_400_000;
export const SESSION_IDLE_MS = 30 * DAY_MS;
export const SESSION_LIFETIME_MS = 60 * DAY_MS;
export const MAX_ACCOUNTS_PER_BROWSER = 5;
/** Revoked or ended sessions (and their retired tokens) are deleted this long after they ended. */
const KEEP_ENDED_MS = 7 * DAY_MS;

export const COOKIE_PREFIX = 'svc_rt_';
export const LEGACY_COOKIE = 'svc_refresh';
export const COOKIE_PATH = '/v1/auth';

const TOKEN_RE = /^svc_rt_[A-Za-z0-9_-]{43}$/;
/** Earlier versions' cookie value: any token-like text (it is only ever looked up by its hash). */
const LEGACY_TOKEN_RE = /^[A-Za-z0-9_.~+/=-]{16,512}$/;
const COOKIE_NAME_RE = /^svc_rt_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** More refresh cookies than this on one request are not looked at (five accounts plus leftovers). */
const MAX_PRESENTED = 12;

export interface IssuedSession {
  sessionId: string;
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
  expiresAt: Date;
  user: UserView;
}

interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  last_used_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  refresh_hash: string;
}

/** Not revoked, before its absolute end, and used (refreshed) within the idle limit. */
export const isLive = (s: Pick<SessionRow, 'revoked_at' | 'expires_at' | 'last_used_at'>, now = Date.now()): boolean =>
  s.revoked_at === null && s.expires_at.getTime() > now && s.last_used_at.getTime() + SESSION_IDLE_MS > now;

/** What a session remembers of the client that signed in or refreshed last. */
export interface SessionDevice {
  userAgent: string | null;
  ip: string | null;
}

/** Longest User-Agent kept: real ones are 100 to 250 characters; the rest is padding or abuse. */
export const USER_AGENT_MAX = 256;

/** The request's User-Agent (control characters removed, cut to USER_AGENT_MAX) and address. */
export function deviceOf(req: FastifyRequest): SessionDevice {
  const raw = req.headers['user-agent'];
  const ua = typeof raw === 'string' ? raw.replace(/\p{Cc}+/gu, ' ').trim() : '';
  return { userAgent: ua === '' ? null : Array.from(ua).slice(0, USER_AGENT_MAX).join(''), ip: req.ip || null };
}

/** A refresh token the caller presented: from a cookie (its name) or the body (cookie null). */
export interface Presented {
  token: string;
  cookie: string | null;
  /** The user the cookie's name claims (null for the legacy cookie and the body). */
  claimedUser: string | null;
}

export function presentedCookies(req: FastifyRequest): Presented[] {
  const out: Presented[] = [];
  for (const [name, value] of Object.entries(req.cookies ?? {})) {
    if (out.length >= MAX_PRESENTED) break;
    if (typeof value !== 'string') continue;
    const m = COOKIE_NAME_RE.exec(name);
    if (m && TOKEN_RE.test(value)) out.push({ token: value, cookie: name, claimedUser: m[1]! });
    else if (name === LEGACY_COOKIE && LEGACY_TOKEN_RE.test(value))
      out.push({ token: value, cookie: name, claimedUser: null });
  }
  return out;
}

export const bodyToken = (token: string): Presented[] =>
  TOKEN_RE.test(token) ? [{ token, cookie: null, claimedUser: null }] : [];

interface Resolved {
  p: Presented;
  /** The live session whose current token this is (and whose user the cookie names). */
  live: SessionRow | null;
  /** A session this token was already rotated away from: a reuse. */
  reusedSession: { id: string; user_id: string } | null;
}

async function resolve(deps: Deps, presented: Presented[]): Promise<Resolved[]> {
  if (presented.length === 0) return [];
  const db = deps.database.db;
  const hashes = presented.map((p) => hashSecret(p.token));
  const current = await db
    .selectFrom('sessions')
    .select(['id', 'user_id', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'refresh_hash'])
    .where('refresh_hash', 'in', hashes)
    .execute();
  const byHash = new Map(current.map((s) => [s.refresh_hash, s]));
  const unknown = hashes.filter((h) => !byHash.has(h));
  const retired =
    unknown.length === 0
      ? []
      : await db
          .selectFrom('session_retired_tokens as t')
          .innerJoin('sessions as s', 's.id', 't.session_id')
          .select(['t.token_hash', 's.id', 's.user_id'])
          .where('t.token_hash', 'in', unknown)
          .execute();
  const retiredByHash = new Map(retired.map((r) => [r.token_hash, { id: r.id, user_id: r.user_id }]));
  const now = Date.now();
  return presented.map((p, i) => {
    const h = hashes[i]!;
    const s = byHash.get(h);
    const named = (uid: string) => p.claimedUser === null || p.claimedUser === uid;
    const r = retiredByHash.get(h);
    return {
      p,
      live: s && isLive(s, now) && named(s.user_id) ? s : null,
      reusedSession: r && named(r.user_id) ? r : null,
    };
  });
}

/** Revokes sessions and tells every process (the gateway closes their sockets). */
export async function revokeSessions(deps: Deps, sessionIds: string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  const rows = await deps.database.db
    .updateTable('sessions')
    .set({ revoked_at: new Date() })
    .where('id', 'in', [...new Set(sessionIds)])
    .where('revoked_at', 'is', null)
    .returning(['id', 'user_id'])
    .execute();
  await announceRevoked(deps, rows);
}

/**
 * Revokes every session of the user except `keep` (a password change, "sign out everywhere
 * else"). Answers how many of them were live (those that had merely ended are revoked too).
 */
export async function revokeOtherSessions(deps: Deps, userId: string, keep: string): Promise<number> {
  const revokedAt = new Date();
  const rows = await deps.database.db
    .updateTable('sessions')
    .set({ revoked_at: revokedAt })
    .where('user_id', '=', userId)
    .where('id', '!=', keep)
    .where('revoked_at', 'is', null)
    .returning(['id', 'user_id', 'expires_at', 'last_used_at'])
    .execute();
  await announceRevoked(deps, rows);
  const now = revokedAt.getTime();
  return rows.filter((r) => isLive({ ...r, revoked_at: null }, now)).length;
}

async function announceRevoked(deps: Deps, rows: Array<{ id: string; user_id: string }>): Promise<void> {
  const byUser = new Map<string, string[]>();
  for (const r of rows) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r.id]);
  for (const [user_id, session_ids] of byUser) {
    try {
      await deps.bus.publishControl({ type: 'sessions.revoked', user_id, session_ids });
    } catch (err) {
      deps.log.error({ err: (err as Error).message }, 'could not announce revoked sessions');
    }
  }
}

/** Starts a session for a user whose credentials were checked. */
export async function startSession(
  deps: Deps,
  user: UserRow,
  native: boolean,
  device: SessionDevice,
): Promise<IssuedSession> {
  const db = deps.database.db;
  const sessionId = newId();
  const refreshToken = randomSecret(COOKIE_PREFIX);
  const now = Date.now();
  const expiresAt = new Date(now + SESSION_LIFETIME_MS);
  // Housekeeping for this person: sessions that ended a while ago go (their retired tokens cascade).
  const endedBefore = new Date(now - KEEP_ENDED_MS);
  await db
    .deleteFrom('sessions')
    .where('user_id', '=', user.id)
    .where((eb) =>
      eb.or([
        eb('revoked_at', '<', endedBefore),
        eb('expires_at', '<', endedBefore),
        eb('last_used_at', '<', new Date(now - SESSION_IDLE_MS - KEEP_ENDED_MS)),
      ]),
    )
    .execute();
  await db
    .insertInto('sessions')
    .values({
      id: sessionId,
      user_id: user.id,
      refresh_hash: hashSecret(refreshToken),
      native,
      expires_at: expiresAt,
      user_agent: device.userAgent,
      ip: device.ip,
    })
    .execute();
  const { token } = await deps.tokens.sign({ sub: user.id, sid: sessionId, purpose: 'access' });
  return {
    sessionId,
    accessToken: token,
    expiresIn: TOKEN_TTL_SECONDS.access,
    refreshToken,
    expiresAt,
    user: presentUser(user),
  };
}

/**
 * Before a browser sign-in: 409 too_many_accounts when this browser already holds five live
 * sessions of other people. Native requests carry no cookies.
 */
export async function assertRoomForAccount(deps: Deps, req: FastifyRequest, userId: string | null): Promise<void> {
  const resolved = await resolve(deps, presentedCookies(req));
  const others = new Set(resolved.filter((r) => r.live && r.live.user_id !== userId).map((r) => r.live!.user_id));
  if (others.size >= MAX_ACCOUNTS_PER_BROWSER) {
    throw new ApiError(
      'too_many_accounts',
      `This browser is already signed in to ${MAX_ACCOUNTS_PER_BROWSER} accounts; sign out of one first.`,
    );
  }
}

// --- Cookies ---------------------------------------------------------------------------------

const cookieOptions = { httpOnly: true, secure: true, sameSite: 'lax' as const, path: COOKIE_PATH };

export function setRefreshCookie(
  reply: FastifyReply,
  s: { user: { id: string }; refreshToken: string; expiresAt: Date },
) {
  reply.setCookie(`${COOKIE_PREFIX}${s.user.id}`, s.refreshToken, {
    ...cookieOptions,
    maxAge: Math.max(1, Math.floor((s.expiresAt.getTime() - Date.now()) / 1000)),
  });
}

export function clearRefreshCookie(reply: FastifyReply, name: string) {
  reply.clearCookie(name, cookieOptions);
  // The legacy cookie may have been set on another path by earlier versions.
  if (name === LEGACY_COOKIE) reply.clearCookie(name, { ...cookieOptions, path: '/' });
}

/**
 * After a browser sign-in of `userId`: the session this browser held for the same person (its
 * cookie is being replaced) is revoked, and a legacy cookie of theirs is cleared.
 */
export async function replacePreviousSession(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  newSessionId: string,
) {
  const resolved = await resolve(deps, presentedCookies(req));
  const mine = resolved.filter((r) => r.live?.user_id === userId && r.live.id !== newSessionId);
  await revokeSessions(
    deps,
    mine.map((r) => r.live!.id),
  );
  if (mine.some((r) => r.p.cookie === LEGACY_COOKIE)) clearRefreshCookie(reply, LEGACY_COOKIE);
}

// --- Refresh -----------------------------------------------------------------------------------

export interface Refreshed {
  issued: IssuedSession;
  /** The token came from the legacy cookie: move it to the new name. */
  fromLegacy: boolean;
}

/**
 * Rotates one presented refresh token: `userId` picks that account, otherwise the most
 * recently used. Presented tokens that were already rotated revoke their sessions (reuse);
 * cookies that lead nowhere are cleared. 401 when nothing usable remains.
 */
export async function refresh(
  deps: Deps,
  reply: FastifyReply,
  presented: Presented[],
  userId: string | undefined,
  device: SessionDevice,
): Promise<Refreshed> {
  const resolved = await resolve(deps, presented);
  const reused = resolved.filter((r) => r.reusedSession);
  if (reused.length > 0) {
    deps.log.warn({ sessions: reused.map((r) => r.reusedSession!.id) }, 'refresh token reuse: session revoked');
    await revokeSessions(
      deps,
      reused.map((r) => r.reusedSession!.id),
    );
  }
  for (const r of resolved) if (!r.live && r.p.cookie) clearRefreshCookie(reply, r.p.cookie);
  let candidates = resolved.filter((r) => r.live);
  if (userId !== undefined) candidates = candidates.filter((r) => r.live!.user_id === userId);
  if (candidates.length === 0) throw unauthorized('No valid refresh token for this account: sign in again.');
  candidates.sort((a, b) => b.live!.last_used_at.getTime() - a.live!.last_used_at.getTime());
  const chosen = candidates[0]!;
  const session = chosen.live!;

  const db = deps.database.db;
  const refreshToken = randomSecret(COOKIE_PREFIX);
  const oldHash = session.refresh_hash;
  const rotated = await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('sessions')
      .set({
        refresh_hash: hashSecret(refreshToken),
        last_used_at: new Date(),
        user_agent: device.userAgent,
        ip: device.ip,
      })
      .where('id', '=', session.id)
      .where('refresh_hash', '=', oldHash)
      .where('revoked_at', 'is', null)
      .returning(['id', 'expires_at'])
      .executeTakeFirst();
    if (row)
      await trx.insertInto('session_retired_tokens').values({ token_hash: oldHash, session_id: session.id }).execute();
    return row;
  });
  if (!rotated) {
    // Another request rotated this token a moment ago: the same token used twice.
    await revokeSessions(deps, [session.id]);
    if (chosen.p.cookie) clearRefreshCookie(reply, chosen.p.cookie);
    throw unauthorized('This refresh token was already used: the session is signed out.');
  }
  const user = await db.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
  if (!user) throw unauthorized();
  const { token } = await deps.tokens.sign({ sub: user.id, sid: session.id, purpose: 'access' });
  return {
    issued: {
      sessionId: session.id,
      accessToken: token,
      expiresIn: TOKEN_TTL_SECONDS.access,
      refreshToken,
      expiresAt: rotated.expires_at,
      user: presentUser(user),
    },
    fromLegacy: chosen.p.cookie === LEGACY_COOKIE,
  };
}

// --- Logout ------------------------------------------------------------------------------------

/**
 * Signs out: `all` revokes every presented session (every account of this browser); otherwise
 * the current account's: `userId` when given, else the access token's user, else the most
 * recently used. A presented token that was already rotated still names its session, which is
 * revoked too. Cookies of signed-out accounts are cleared.
 */
export async function logout(
  deps: Deps,
  reply: FastifyReply,
  presented: Presented[],
  opts: { all: boolean; userId?: string; accessSession: { userId: string; sessionId: string } | null },
): Promise<void> {
  const resolved = await resolve(deps, presented);
  const sessionOf = (r: Resolved) => r.live ?? r.reusedSession;
  let chosen: Resolved[];
  let sessionIds: string[];
  if (opts.all) {
    chosen = resolved;
    sessionIds = resolved
      .map(sessionOf)
      .filter((s) => s !== null)
      .map((s) => s!.id);
    if (opts.accessSession) sessionIds.push(opts.accessSession.sessionId);
  } else {
    const mostRecent = resolved
      .filter((r) => r.live)
      .sort((a, b) => b.live!.last_used_at.getTime() - a.live!.last_used_at.getTime())[0];
    const target =
      opts.userId ??
      opts.accessSession?.userId ??
      mostRecent?.live?.user_id ??
      (resolved.length === 1 ? sessionOf(resolved[0]!)?.user_id : undefined);
    chosen = target === undefined ? [] : resolved.filter((r) => sessionOf(r)?.user_id === target);
    sessionIds = chosen.map((r) => sessionOf(r)!.id);
    if (opts.accessSession && opts.accessSession.userId === target) sessionIds.push(opts.accessSession.sessionId);
    // A cookie that leads nowhere but names this account goes too.
    for (const r of resolved) if (!sessionOf(r) && r.p.claimedUser === target && !chosen.includes(r)) chosen.push(r);
  }
  await revokeSessions(deps, sessionIds);
  for (const r of chosen) if (r.p.cookie) clearRefreshCookie(reply, r.p.cookie);
}

// --- A person's own sessions (GET and DELETE /v1/me/sessions) --------------------------------

/** At most this many sessions are listed (the most recently used); revoking the others ends them all. */
export const LISTED_SESSIONS = 100;

export interface OwnSession {
  id: string;
  created_at: Date;
  last_used_at: Date;
  /** When it ends unless refreshed: the idle end or the absolute one, whichever comes first. */
  ends_at: Date;
  user_agent: string | null;
  ip: string | null;
  native: boolean;
}

/** The person's live sessions, most recently used first. Never their tokens or hashes. */
export async function liveSessionsOf(deps: Deps, userId: string): Promise<OwnSession[]> {
  const now = Date.now();
  const rows = await deps.database.db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'last_used_at', 'expires_at', 'user_agent', 'ip', 'native'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date(now))
    .where('last_used_at', '>', new Date(now - SESSION_IDLE_MS))
    .orderBy('last_used_at', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(LISTED_SESSIONS)
    .execute();
  return rows.map(({ expires_at, ...r }) => ({
    ...r,
    ends_at: new Date(Math.min(expires_at.getTime(), r.last_used_at.getTime() + SESSION_IDLE_MS)),
  }));
}

/**
 * Revokes one live session of this person (its sockets close). False when there is none with
 * this id: another person's, ended, or unknown, alike.
 */
export async function revokeSessionOf(deps: Deps, userId: string, sessionId: string): Promise<boolean> {
  const row = await deps.database.db
    .selectFrom('sessions')
    .select(['id', 'revoked_at', 'expires_at', 'last_used_at'])
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row || !isLive(row)) return false;
  await revokeSessions(deps, [row.id]);
  return true;
}

// --- Accounts ----------------------------------------------------------------------------------

/** The live sessions presented, one per person, most recently used first. Nothing changes. */
export async function signedInAccounts(deps: Deps, presented: Presented[]): Promise<SessionRow[]> {
  const resolved = await resolve(deps, presented);
  const best = new Map<string, SessionRow>();
  for (const r of resolved) {
    if (!r.live) continue;
    const prev = best.get(r.live.user_id);
    if (!prev || prev.last_used_at < r.live.last_used_at) best.set(r.live.user_id, r.live);
  }
  return [...best.values()].sort((a, b) => b.last_used_at.getTime() - a.last_used_at.getTime());
}

/**
 * Maintenance: sessions that ended (revoked, expired or idle) more than a week ago, for everyone,
 * and App Attest challenges past their expiry. Runs with the hourly maintenance job.
 */
export async function pruneEndedSessions(database: Database): Promise<number> {
  const now = Date.now();
  const endedBefore = new Date(now - KEEP_ENDED_MS);
  const r = await database.db
    .deleteFrom('sessions')
    .where((eb) =>
      eb.or([
        eb('revoked_at', '<', endedBefore),
        eb('expires_at', '<', endedBefore),
        eb('last_used_at', '<', new Date(now - SESSION_IDLE_MS - KEEP_ENDED_MS)),
      ]),
    )
    .executeTakeFirst();
  await database.db.deleteFrom('app_attest_challenges').where('expires_at', '<', new Date(now)).execute();
  return Number(r.numDeletedRows ?? 0);
}
