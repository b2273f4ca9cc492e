// People and their sign-ins. Passwords are argon2id hashes; refresh tokens are stored only as
// hashes (sessions.ts); access tokens are short-lived JWTs bound to a session that can be
// revoked. Sign-in is guarded by failed-attempt limits and the configured challenge
// (protection.ts), and by two-factor when the user turned it on (mfa.ts).
import type { FastifyRequest } from 'fastify';
import { type Selectable, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../../platform/crypto/passwords.js';
import { newId } from '../../platform/crypto/random.js';
import { hashSecret, TOKEN_TTL_SECONDS } from '../../platform/crypto/tokens.js';
import type { UsersTable } from '../../platform/db/schema.js';
import type { UserContext } from '../../platform/http/context.js';
import { ApiError, conflict, invalid, notFound, unauthorized } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { checkMfaCode } from './mfa.js';
import { verifyChallenge } from './protection.js';
import { assertRoomForAccount, deviceOf, type IssuedSession, revokeOtherSessions, startSession } from './sessions.js';

export type { IssuedSession } from './sessions.js';
export { getUser, presentUser, type UserView } from './users.js';

interface ProofInput {
  challenge_token?: string;
  app_attest?: { key_id: string; challenge: string; assertion: string };
}

/**
 * The human check (challenge_token) or, from the native app, the device check (app_attest).
 * With CHALLENGE=none and App Attest off there is nothing to check.
 */
export async function verifyProof(
  deps: Deps,
  input: ProofInput,
  ip: string,
  at: 'body' | 'query' = 'body',
): Promise<void> {
  if (input.app_attest) {
    if (deps.config.challenge.kind === 'none' && !deps.config.appAttest.appId) return;
    // App Attest's verifier (node-app-attest, cbor) is loaded on first use, not at start.
    const { verifyAppAttestProof } = await import('./app-attest.js');
    await verifyAppAttestProof(deps, input.app_attest, at);
    return;
  }
  await verifyChallenge(deps, input.challenge_token, ip, `${at}.challenge_token`);
}

/** Ties an mfa_token to the password it followed: a password change voids it. */
export const passwordVersion = (passwordHash: string) => hashSecret(`pw:${passwordHash}`).slice(0, 22);

/**
 * `user.sign_in_failed` in every workspace of the person. Not awaited by the sign-in, so a
 * known email's answer takes no longer than an unknown one's.
 */
function auditSignInFailed(deps: Deps, userId: string, ip: string, reason: 'password' | 'mfa_code'): void {
  void (async () => {
    const db = deps.database.db;
    const memberships = await db.selectFrom('members').select('workspace_id').where('user_id', '=', userId).execute();
    if (memberships.length === 0) return;
    await db.transaction().execute(async (trx) => {
      for (const m of memberships) {
        await recordAudit(
          trx,
          { workspaceId: m.workspace_id, actor: { kind: 'member', userId, sessionId: null }, ip },
          { action: 'user.sign_in_failed', entityType: 'user', entityId: userId, data: { reason } },
        );
      }
    });
  })().catch((err) => deps.log.error({ err: (err as Error).message }, 'could not audit a failed sign-in'));
}

export async function register(
  deps: Deps,
  req: FastifyRequest,
  input: { email: string; password: string; name: string } & ProofInput,
  native: boolean,
): Promise<IssuedSession> {
  const email = input.email.trim();
  const name = input.name.trim();
  if (name === '') throw invalid('body.name', 'must not be blank');
  await verifyProof(deps, input, req.ip);
  if (!native) await assertRoomForAccount(deps, req, null);
  const passwordHash = await hashPassword(input.password);
  const id = newId();
  const row = await deps.database.db
    .insertInto('users')
    .values({ id, email, name, password_hash: passwordHash, avatar_url: null, avatar_source: null, mfa_secret: null })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw conflict('An account with this email already exists.');
  return startSession(deps, row, native, deviceOf(req));
}

export type LoginOutcome = { kind: 'session'; session: IssuedSession } | { kind: 'mfa'; mfaToken: string };

export async function login(
  deps: Deps,
  req: FastifyRequest,
  input: { email: string; password: string } & ProofInput,
  native: boolean,
): Promise<LoginOutcome> {
  const email = input.email.trim().toLowerCase();
  // The limit first (cheap, and the same answer whether or not the account exists).
  const attempt = await deps.signInGuard.attempt(email, req.ip);
  try {
    await verifyProof(deps, input, req.ip);
  } catch (err) {
    await attempt.success(); // not a password guess
    throw err;
  }
  let user: Selectable<UsersTable> | undefined;
  let ok: boolean;
  try {
    user = await deps.database.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', [eb.ref('email')]), '=', email))
      .executeTakeFirst();
    // The same work and the same answer whether or not the email exists.
    ok = user ? await verifyPassword(user.password_hash, input.password) : await verifyAgainstDummy(input.password);
  } catch (err) {
    await attempt.success(); // our failure, not a wrong password
    throw err;
  }
  if (!user || !ok) {
    attempt.failure();
    if (user) auditSignInFailed(deps, user.id, req.ip, 'password');
    throw unauthorized('Wrong email or password.');
  }
  await attempt.success();
  if (!native) await assertRoomForAccount(deps, req, user.id);
  if (user.mfa_enabled) {
    const { token } = await deps.tokens.sign({
      sub: user.id,
      purpose: 'mfa',
      pwv: passwordVersion(user.password_hash),
    });
    return { kind: 'mfa', mfaToken: token };
  }
  return { kind: 'session', session: await startSession(deps, user, native, deviceOf(req)) };
}

/** The second step: the mfa_token from login and a TOTP or recovery code. */
export async function completeMfa(
  deps: Deps,
  req: FastifyRequest,
  input: { mfa_token: string; code: string },
  native: boolean,
): Promise<IssuedSession> {
  const expired = () => unauthorized('The two-factor step is invalid or expired: sign in again.');
  const claims = await deps.tokens.verify(input.mfa_token, 'mfa');
  if (!claims) throw expired();
  const user = await deps.database.db.selectFrom('users').selectAll().where('id', '=', claims.sub).executeTakeFirst();
  if (!user?.mfa_enabled || claims.pwv !== passwordVersion(user.password_hash)) throw expired();
  // Before the code is checked, so a refused sign-in does not use the code up.
  if (!native) await assertRoomForAccount(deps, req, user.id);
  const attempt = await deps.signInGuard.attempt(user.email, req.ip);
  if (!(await checkMfaCode(deps, user, input.code))) {
    attempt.failure();
    auditSignInFailed(deps, user.id, req.ip, 'mfa_code');
    throw unauthorized('Wrong or already used code.');
  }
  await attempt.success();
  return startSession(deps, user, native, deviceOf(req));
}

/** Changes the password and signs out every other session of the person (this one stays). */
export async function changePassword(
  deps: Deps,
  who: UserContext,
  input: { current_password: string; new_password: string },
): Promise<void> {
  const db = deps.database.db;
  const user = await db
    .selectFrom('users')
    .select(['id', 'email', 'password_hash'])
    .where('id', '=', who.userId)
    .executeTakeFirst();
  if (!user) throw notFound();
  const attempt = await deps.signInGuard.attempt(user.email, who.ip);
  if (!(await verifyPassword(user.password_hash, input.current_password))) {
    attempt.failure();
    throw invalid('body.current_password', 'is not your current password');
  }
  await attempt.success();
  const passwordHash = await hashPassword(input.new_password);
  const r = await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: new Date() })
    .where('id', '=', user.id)
    .where('password_hash', '=', user.password_hash)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw new ApiError('conflict', 'The password changed meanwhile; try again.');
  await revokeOtherSessions(deps, user.id, who.sessionId);
}

export const MFA_TOKEN_TTL_SECONDS = TOKEN_TTL_SECONDS.mfa;
