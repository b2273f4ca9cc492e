// People and their sign-ins. Passwords are argon2id hashes; refresh tokens are stored
// only as hashes; access tokens are short-lived JWTs bound to a session that can be revoked.
import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../../platform/crypto/passwords.js';
import { newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret, TOKEN_TTL_SECONDS } from '../../platform/crypto/tokens.js';
import { ApiError, conflict, unauthorized } from '../../platform/http/errors.js';
import type { User } from './schemas.js';

export type UserView = Static<typeof User>;

interface UserRow {
  id: string;
  name: string;
  email: string;
  avatar_url: string | null;
  avatar_source: string | null;
  mfa_enabled: boolean;
}

export const presentUser = (u: UserRow): UserView => ({
  id: u.id,
  name: u.name,
  email: u.email,
  avatar_url: u.avatar_url,
  avatar_source: u.avatar_source,
  mfa_enabled: u.mfa_enabled,
});

export interface IssuedSession {
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
  user: UserView;
}

export async function getUser(deps: Deps, userId: string): Promise<UserView | null> {
  const u = await deps.database.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  return u ? presentUser(u) : null;
}

async function startSession(deps: Deps, user: UserRow, native: boolean): Promise<IssuedSession> {
  const sessionId = newId();
  const refreshToken = randomSecret('svc_rt_');
  await deps.database.db
    .insertInto('sessions')
    .values({ id: sessionId, user_id: user.id, refresh_hash: hashSecret(refreshToken), native })
    .execute();
  const { token } = await deps.tokens.sign({ sub: user.id, sid: sessionId, purpose: 'access' });
  return { accessToken: token, expiresIn: TOKEN_TTL_SECONDS.access, refreshToken, user: presentUser(user) };
}

export async function register(
  deps: Deps,
  input: { email: string; password: string; name: string },
  native: boolean,
): Promise<IssuedSession> {
  const email = input.email.trim();
  const name = input.name.trim();
  if (name === '')
    throw new ApiError('validation_failed', 'body.name must not be blank', [
      { location: 'body.name', message: 'must not be blank' },
    ]);
  const passwordHash = await hashPassword(input.password);
  const id = newId();
  const row = await deps.database.db
    .insertInto('users')
    .values({ id, email, name, password_hash: passwordHash, avatar_url: null, avatar_source: null, mfa_secret: null })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw conflict('An account with this email already exists.');
  return startSession(deps, row, native);
}

export async function login(
  deps: Deps,
  input: { email: string; password: string },
  native: boolean,
): Promise<IssuedSession> {
  const user = await deps.database.db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', [eb.ref('email')]), '=', input.email.trim().toLowerCase()))
    .executeTakeFirst();
  // The same work and the same answer whether or not the email exists.
  const ok = user ? await verifyPassword(user.password_hash, input.password) : await verifyAgainstDummy(input.password);
  if (!user || !ok) throw unauthorized('Wrong email or password.');
  return startSession(deps, user, native);
}
