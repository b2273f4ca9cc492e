// Passkeys (WebAuthn) through @simplewebauthn/server: registration by a signed-in person, and
// sign-in (discoverable credentials, or email-first with allowCredentials). Relying party id =
// the host of PUBLIC_URL, expected origin = its origin. Challenges are rows of
// passkey_challenges: single-use (deleted by the statement that accepts them, whatever the
// outcome) and 5 minutes long. A signature counter that does not grow refuses the sign-in (401),
// is audited and logged for the person (passkey.counter_mismatch).
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.js';
import { newId } from '../../../platform/crypto/random.js';
import { invalid, notFound, unauthorized } from '../../../platform/http/errors.js';
import { systemMailer } from '../../../platform/mail/index.js';
import { recordAudit } from '../../audit/service.js';
import { verifyChallenge } from '../protection.js';
import { assertRoomForAccount, deviceOf, type IssuedSession, startSession } from '../sessions.js';

export const CHALLENGE_TTL_MS = 5 * 60_000;

export function relyingParty(deps: Deps): { rpID: string; origin: string; rpName: string } {
  const u = new URL(deps.config.publicUrl);
  return { rpID: u.hostname, origin: u.origin, rpName: u.hostname };
}

const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');

/** The challenge a response was made for (clientDataJSON's), or null when it cannot be read. */
function challengeOf(response: Record<string, unknown>): string | null {
  try {
    const raw = (response.response as { clientDataJSON?: unknown } | undefined)?.clientDataJSON;
    if (typeof raw !== 'string') return null;
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')).challenge;
    return typeof c === 'string' ? c : null;
  } catch {
    return null;
  }
}

/** An audit entry in every workspace of the person (they are account events, not a workspace's). */
export async function auditPerson(
  deps: Deps,
  userId: string,
  ip: string,
  action: string,
  entityId: string,
  data: Record<string, unknown> = {},
  entityType = 'passkey',
): Promise<void> {
  const db = deps.database.db;
  const memberships = await db.selectFrom('members').select('workspace_id').where('user_id', '=', userId).execute();
  if (memberships.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const m of memberships) {
      await recordAudit(
        trx,
        { workspaceId: m.workspace_id, actor: { kind: 'member', userId, sessionId: null }, ip },
        { action, entityType, entityId, data },
      );
    }
  });
}

/**
 * Tells the person by mail that a sign-in with their passkey was refused because its counter did
 * not grow (the system mailer; without SMTP_URL it is kept in the outbox of their first workspace).
 */
async function notifyCounterMismatch(deps: Deps, user: { id: string; email: string }, name: string): Promise<void> {
  try {
    const first = await deps.database.db
      .selectFrom('members')
      .select('workspace_id')
      .where('user_id', '=', user.id)
      .orderBy('created_at', 'asc')
      .executeTakeFirst();
    const mailer = systemMailer(deps);
    if (!first && mailer.kind === 'outbox') return;
    await mailer.send(
      {
        to: user.email,
        subject: 'A sign-in with your passkey was refused',
        text:
          `Someone tried to sign in with your passkey "${name}", and its signature counter did not grow. ` +
          'This can mean the passkey was copied. The sign-in was refused. If it was not you, delete this ' +
          'passkey in your profile and add a new one.',
      },
      { workspaceId: first?.workspace_id ?? '', kind: 'notice' },
    );
  } catch (err) {
    deps.log.error({ err: (err as Error).message }, 'could not notify a passkey counter mismatch');
  }
}

export interface PasskeyView {
  id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

export async function listPasskeys(deps: Deps, userId: string): Promise<PasskeyView[]> {
  return deps.database.db
    .selectFrom('passkeys')
    .select(['id', 'name', 'created_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .execute();
}

export async function registrationOptions(deps: Deps, userId: string) {
  const db = deps.database.db;
  const user = await db.selectFrom('users').select(['id', 'email', 'name']).where('id', '=', userId).executeTakeFirst();
  if (!user) throw notFound();
  const existing = await db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('user_id', '=', userId)
    .execute();
  const rp = relyingParty(deps);
  const options = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    userName: user.email,
    userDisplayName: user.name,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.credential_id, transports: JSON.parse(c.transports) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
  await db
    .insertInto('passkey_challenges')
    .values({
      id: newId(),
      challenge: options.challenge,
      purpose: 'register',
      user_id: userId,
      expires_at: new Date(Date.now() + CHALLENGE_TTL_MS),
    })
    .execute();
  return options;
}

/** Takes (deletes) a live challenge; null when unknown, used or expired. */
async function takeChallenge(
  deps: Deps,
  where: { id?: string; challenge?: string; purpose: 'register' | 'sign_in'; userId?: string },
): Promise<{ challenge: string; user_id: string | null } | null> {
  let q = deps.database.db.deleteFrom('passkey_challenges').where('purpose', '=', where.purpose);
  if (where.id !== undefined) q = q.where('id', '=', where.id);
  if (where.challenge !== undefined) q = q.where('challenge', '=', where.challenge);
  if (where.userId !== undefined) q = q.where('user_id', '=', where.userId);
  const row = await q.returning(['challenge', 'user_id', 'expires_at']).executeTakeFirst();
  if (!row || new Date(row.expires_at).getTime() <= Date.now()) return null;
  return row;
}

export async function registerPasskey(
  deps: Deps,
  userId: string,
  ip: string,
  input: { name: string; response: Record<string, unknown> },
): Promise<PasskeyView> {
  const name = input.name.trim();
  if (name === '') throw invalid('body.name', 'must not be blank');
  const challenge = challengeOf(input.response);
  if (!challenge) throw invalid('body.response', 'is not a WebAuthn registration response');
  const taken = await takeChallenge(deps, { challenge, purpose: 'register', userId });
  if (!taken) throw invalid('body.response', 'answers no live registration challenge of yours (used or expired)');
  const rp = relyingParty(deps);
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response: input.response as unknown as RegistrationResponseJSON,
      expectedChallenge: taken.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: false,
    });
  } catch (err) {
    throw invalid('body.response', `does not verify: ${(err as Error).message}`);
  }
  if (!verification.verified || !verification.registrationInfo) throw invalid('body.response', 'does not verify');
  const { credential } = verification.registrationInfo;
  const id = newId();
  const row = await deps.database.db
    .insertInto('passkeys')
    .values({
      id,
      user_id: userId,
      credential_id: credential.id,
      public_key: b64u(credential.publicKey),
      counter: credential.counter,
      transports: JSON.stringify(credential.transports ?? []),
      name,
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returning(['id', 'name', 'created_at', 'last_used_at'])
    .executeTakeFirst();
  if (!row) throw invalid('body.response', 'this passkey is already registered');
  await auditPerson(deps, userId, ip, 'passkey.registered', id, { name });
  return row;
}

export async function deletePasskey(deps: Deps, userId: string, ip: string, id: string): Promise<void> {
  const r = await deps.database.db
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning(['id', 'name'])
    .executeTakeFirst();
  if (!r) throw notFound('Passkey not found.');
  await auditPerson(deps, userId, ip, 'passkey.deleted', id, { name: r.name });
}

export async function signInOptions(
  deps: Deps,
  req: FastifyRequest,
  input: { email?: string; challenge_token?: string },
) {
  await verifyChallenge(deps, input.challenge_token, req.ip);
  const db = deps.database.db;
  let userId: string | null = null;
  let allow: Array<{ id: string; transports?: AuthenticatorTransportFuture[] }> = [];
  if (input.email !== undefined) {
    const email = input.email.trim().toLowerCase();
    const user = await db
      .selectFrom('users')
      .select('id')
      .where((eb) => eb(eb.fn('lower', [eb.ref('email')]), '=', email))
      .executeTakeFirst();
    if (user) {
      userId = user.id;
      const keys = await db
        .selectFrom('passkeys')
        .select(['credential_id', 'transports'])
        .where('user_id', '=', user.id)
        .execute();
      allow = keys.map((k) => ({ id: k.credential_id, transports: JSON.parse(k.transports) }));
    }
  }
  const rp = relyingParty(deps);
  const options = await generateAuthenticationOptions({
    rpID: rp.rpID,
    userVerification: 'preferred',
    ...(allow.length > 0 ? { allowCredentials: allow } : {}),
  });
  const id = newId();
  await db
    .insertInto('passkey_challenges')
    .values({
      id,
      challenge: options.challenge,
      purpose: 'sign_in',
      user_id: userId,
      expires_at: new Date(Date.now() + CHALLENGE_TTL_MS),
    })
    .execute();
  return { options, challenge_id: id };
}

export async function signInWithPasskey(
  deps: Deps,
  req: FastifyRequest,
  input: { challenge_id: string; response: Record<string, unknown> },
  native: boolean,
): Promise<IssuedSession> {
  const refused = () => unauthorized('The passkey was not accepted: start again.');
  const credentialId = typeof input.response?.id === 'string' ? input.response.id : '';
  const db = deps.database.db;
  const key = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  const user = key
    ? await db.selectFrom('users').selectAll().where('id', '=', key.user_id).executeTakeFirst()
    : undefined;
  const attempt = await deps.signInGuard.attempt(user ? user.email.toLowerCase() : `passkey:${credentialId}`, req.ip);
  // The challenge is used up whatever the outcome.
  const taken = await takeChallenge(deps, { id: input.challenge_id, purpose: 'sign_in' });
  if (!taken || !key || !user || (taken.user_id !== null && taken.user_id !== key.user_id)) {
    attempt.failure();
    throw refused();
  }
  const rp = relyingParty(deps);
  const stored = Number(key.counter);
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response: input.response as unknown as AuthenticationResponseJSON,
      expectedChallenge: taken.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      credential: {
        id: key.credential_id,
        publicKey: new Uint8Array(Buffer.from(key.public_key, 'base64url')),
        counter: stored,
        transports: JSON.parse(key.transports),
      },
      requireUserVerification: false,
    });
  } catch (err) {
    attempt.failure();
    const message = (err as Error).message;
    if (/counter/i.test(message)) {
      deps.log.warn({ userId: user.id, passkeyId: key.id }, 'passkey signature counter did not grow: possibly cloned');
      await auditPerson(deps, user.id, req.ip, 'passkey.counter_mismatch', key.id, { name: key.name });
      await notifyCounterMismatch(deps, user, key.name);
    }
    throw refused();
  }
  if (!verification.verified) {
    attempt.failure();
    throw refused();
  }
  await attempt.success();
  if (!native) await assertRoomForAccount(deps, req, user.id);
  await db
    .updateTable('passkeys')
    .set({ counter: verification.authenticationInfo.newCounter, last_used_at: new Date() })
    .where('id', '=', key.id)
    .execute();
  const session = await startSession(deps, user, native, deviceOf(req));
  await auditPerson(deps, user.id, req.ip, 'passkey.signed_in', key.id, { name: key.name });
  return session;
}
