// Two-factor authentication: TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps, one step of
// clock drift either way) through the otpauth library, and ten single-use recovery codes.
//
// The TOTP secret is sealed with SECRET_KEY (AES-256-GCM, bound to the user) in users.mfa_secret;
// it is pending until a first code confirms it. Each accepted code moves users.mfa_last_step
// forward, so the same code (or an older one) never works twice. Recovery codes are random
// (80 bits), shown once and stored as SHA-256 hashes; using one marks it used in the same
// statement that checks it.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Deps } from '../../deps.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';

const DIGITS = 6;
const PERIOD = 30;
const WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;

const sealContext = (userId: string) => `mfa-totp:${userId}`;

function totp(deps: Deps, secretBase32: string, label: string): TOTP {
  let issuer = 'Help desk';
  try {
    issuer = new URL(deps.config.publicUrl).hostname || issuer;
  } catch {
    // keep the default
  }
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

interface MfaUser {
  id: string;
  email: string;
  mfa_secret: string | null;
  mfa_enabled: boolean;
}

async function loadUser(deps: Deps, userId: string): Promise<MfaUser | undefined> {
  return deps.database.db
    .selectFrom('users')
    .select(['id', 'email', 'mfa_secret', 'mfa_enabled'])
    .where('id', '=', userId)
    .executeTakeFirst();
}

const isTotpShaped = (code: string) => /^\d{6}$/.test(code.replace(/\s/g, ''));

/** Recovery codes are 20 hex digits, shown as four dash-separated groups of five (e.g. 3f9a0-c41b2-77de0-9b3a1); case, spaces and dashes do not matter. */
function normaliseRecoveryCode(code: string): string | null {
  const c = code.toLowerCase().replace(/[\s-]/g, '');
  return /^[0-9a-f]{20}$/.test(c) ? c : null;
}

const recoveryHash = (userId: string, normalised: string) => hashSecret(`${userId}:${normalised}`);

/** A TOTP code for this user's secret, not used before: moves mfa_last_step forward. */
async function acceptTotp(deps: Deps, user: MfaUser, code: string): Promise<boolean> {
  if (!user.mfa_secret) return false;
  const secret = deps.secrets.open(user.mfa_secret, sealContext(user.id));
  if (!secret) return false;
  const t = totp(deps, secret, user.email);
  const now = Date.now();
  const delta = t.validate({ token: code.replace(/\s/g, ''), timestamp: now, window: WINDOW });
  if (delta === null) return false;
  const step = t.counter({ timestamp: now }) + delta;
  const moved = await deps.database.db
    .updateTable('users')
    .set({ mfa_last_step: step })
    .where('id', '=', user.id)
    .where((eb) => eb.or([eb('mfa_last_step', 'is', null), eb('mfa_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(moved.numUpdatedRows) === 1;
}

async function useRecoveryCode(deps: Deps, userId: string, code: string): Promise<boolean> {
  const normalised = normaliseRecoveryCode(code);
  if (!normalised) return false;
  const used = await deps.database.db
    .updateTable('mfa_recovery_codes')
    .set({ used_at: new Date() })
    .where('user_id', '=', userId)
    .where('code_hash', '=', recoveryHash(userId, normalised))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}

/** TOTP or recovery code for a user with two-factor on; no attempt counting (callers do it). */
export async function checkMfaCode(deps: Deps, user: MfaUser, code: string): Promise<boolean> {
  if (!user.mfa_enabled) return false;
  return isTotpShaped(code) ? acceptTotp(deps, user, code) : useRecoveryCode(deps, user.id, code);
}

/** Whether the user has two-factor authentication on. */
export async function hasMfa(deps: Deps, userId: string): Promise<boolean> {
  const u = await deps.database.db
    .selectFrom('users')
    .select('mfa_enabled')
    .where('id', '=', userId)
    .executeTakeFirst();
  return u?.mfa_enabled === true;
}

/**
 * Checks a two-factor code of a signed-in user for a sensitive action (workspace deletion,
 * ownership transfer): a current TOTP code not used before, or an unused recovery code (which
 * is used up). False when the code is wrong or the user has no two-factor. A wrong code counts
 * as a failed sign-in attempt of the account; past the limit this throws 429 rate_limited.
 */
export async function verifyMfaCode(deps: Deps, userId: string, code: string): Promise<boolean> {
  const user = await loadUser(deps, userId);
  if (!user?.mfa_enabled) return false;
  const attempt = await deps.signInGuard.attempt(user.email, null);
  const ok = await checkMfaCode(deps, user, code);
  if (ok) await attempt.success();
  else attempt.failure();
  return ok;
}

/** Starts (or restarts) enrolment: a new pending secret. 409 when two-factor is already on. */
export async function startTotpEnrolment(deps: Deps, userId: string): Promise<{ secret: string; otpauthUrl: string }> {
  const user = await loadUser(deps, userId);
  if (!user) throw notFound();
  if (user.mfa_enabled) throw conflict('Two-factor authentication is already on; turn it off first.');
  const secret = new Secret({ size: 20 }).base32;
  const r = await deps.database.db
    .updateTable('users')
    .set({ mfa_secret: deps.secrets.seal(secret, sealContext(userId)), mfa_last_step: null, updated_at: new Date() })
    .where('id', '=', userId)
    .where('mfa_enabled', '=', false)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw conflict('Two-factor authentication is already on; turn it off first.');
  return { secret, otpauthUrl: totp(deps, secret, user.email).toString() };
}

/** Confirms the pending secret with a first code: two-factor is on; returns the recovery codes (once). */
export async function confirmTotp(deps: Deps, userId: string, code: string): Promise<string[]> {
  const user = await loadUser(deps, userId);
  if (!user) throw notFound();
  if (user.mfa_enabled) throw conflict('Two-factor authentication is already on.');
  if (!user.mfa_secret) throw conflict('No enrolment is pending: start with POST /v1/me/mfa/totp.');
  if (!isTotpShaped(code) || !(await acceptTotp(deps, user, code))) {
    throw invalid('body.code', 'is not the current code of the authenticator app');
  }
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    (randomBytes(10).toString('hex').match(/.{5}/g) as string[]).join('-'),
  );
  await deps.database.db.transaction().execute(async (trx) => {
    const on = await trx
      .updateTable('users')
      .set({ mfa_enabled: true, mfa_enabled_at: new Date(), updated_at: new Date() })
      .where('id', '=', userId)
      .where('mfa_enabled', '=', false)
      .where('mfa_secret', '=', user.mfa_secret)
      .executeTakeFirst();
    if (Number(on.numUpdatedRows) !== 1) throw conflict('The enrolment changed meanwhile; start again.');
    await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
    await trx
      .insertInto('mfa_recovery_codes')
      .values(codes.map((c) => ({ user_id: userId, code_hash: recoveryHash(userId, normaliseRecoveryCode(c)!) })))
      .execute();
  });
  return codes;
}

/** Turns two-factor off, with a current code or a recovery code. */
export async function disableMfa(deps: Deps, userId: string, code: string): Promise<void> {
  if (!(await hasMfa(deps, userId))) throw conflict('Two-factor authentication is not on.');
  if (!(await verifyMfaCode(deps, userId, code))) {
    throw invalid('body.code', 'is not a valid code from the authenticator app or an unused recovery code');
  }
  await deps.database.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ mfa_enabled: false, mfa_secret: null, mfa_last_step: null, mfa_enabled_at: null, updated_at: new Date() })
      .where('id', '=', userId)
      .execute();
    await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  });
}
