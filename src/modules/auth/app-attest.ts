// Apple App Attest for the native iPhone app: the device proof a native client may send in
// place of a human-verification token (docs/api.md "Sessions and two-factor", App Attest).
//
// 1. POST /v1/auth/app-attest/challenge: a single-use random challenge (5 minutes; only its
//    hash is stored).
// 2. POST /v1/auth/app-attest/keys {key_id, attestation, challenge}: the app attested a key with
//    clientDataHash = SHA256(challenge). The attestation is verified by node-app-attest (CBOR
//    decoding, x5c chain to Apple's App Attest root CA, nonce = SHA256(authData || clientDataHash)
//    in the credential certificate, key id = SHA256(public key), rpId hash = SHA256(team id.bundle
//    id), counter 0, aaguid of the environment, credential id = key id); on top of it this file
//    checks that every certificate is within its validity period and that the first x5c entry is
//    the credential certificate. The key's public key is stored with sign count 0.
// 3. Sign-in with app_attest {key_id, challenge, assertion}: an assertion by a registered key with
//    clientDataHash = SHA256(challenge) over a fresh challenge. node-app-attest checks the ECDSA
//    signature over SHA256(authenticatorData || clientDataHash) with the stored key, the rpId hash
//    and that the counter grew; the new counter is stored only if it is still larger (so a
//    replayed or parallel assertion fails).
//
// Not verified: the App Attest receipt (Apple's fraud-metric service is not called) and
// certificate revocation (Apple publishes none for App Attest).
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import cbor from 'cbor';
import { verifyAssertion, verifyAttestation } from 'node-app-attest';
import type { Deps } from '../../deps.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

interface AppId {
  teamIdentifier: string;
  bundleIdentifier: string;
}

function appIdOf(deps: Deps): (AppId & { allowDevelopment: boolean }) | null {
  const id = deps.config.appAttest.appId;
  if (!id) return null;
  const dot = id.indexOf('.');
  return {
    teamIdentifier: id.slice(0, dot),
    bundleIdentifier: id.slice(dot + 1),
    allowDevelopment: deps.config.appAttest.allowDevelopment,
  };
}

const disabled = () => notFound('App Attest is not enabled on this server.');

export async function issueChallenge(deps: Deps): Promise<{ challenge: string; expiresAt: Date }> {
  if (!appIdOf(deps)) throw disabled();
  const challenge = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + CHALLENGE_TTL_MS);
  const db = deps.database.db;
  await db.deleteFrom('app_attest_challenges').where('expires_at', '<', new Date()).execute();
  await db
    .insertInto('app_attest_challenges')
    .values({ challenge_hash: hashSecret(challenge), expires_at: expiresAt })
    .execute();
  return { challenge, expiresAt };
}

/** Uses the challenge up (whatever happens next); true when it was issued here and is unexpired. */
async function consumeChallenge(deps: Deps, challenge: string): Promise<boolean> {
  const row = await deps.database.db
    .deleteFrom('app_attest_challenges')
    .where('challenge_hash', '=', hashSecret(challenge))
    .returning('expires_at')
    .executeTakeFirst();
  return row !== undefined && row.expires_at.getTime() > Date.now();
}

export interface AttestedKey {
  publicKey: string;
  environment: 'production' | 'development';
}

/**
 * Verifies an attestation object (base64 CBOR) for `keyId` made over `challenge`. Throws a
 * located 422 when it does not verify. `now` is the moment certificates must be valid at.
 */
export function verifyAttestationObject(
  app: AppId & { allowDevelopment: boolean },
  input: { keyId: string; challenge: string; attestation: string },
  now = new Date(),
): AttestedKey {
  const refuse = () => invalid('body.attestation', 'could not be verified as an App Attest attestation of this app');
  const raw = Buffer.from(input.attestation, 'base64');
  let certs: X509Certificate[];
  try {
    const decoded = cbor.decodeFirstSync(raw, { max_depth: 8 }) as { attStmt?: { x5c?: unknown } };
    const x5c = decoded?.attStmt?.x5c;
    if (!Array.isArray(x5c) || x5c.length !== 2 || !x5c.every((c) => Buffer.isBuffer(c))) throw refuse();
    certs = x5c.map((c: Buffer) => new X509Certificate(c));
  } catch {
    throw refuse();
  }
  // The credential certificate comes first and is not a CA; each is valid now.
  if (certs[0]!.ca || !certs[1]!.ca) throw refuse();
  for (const c of certs) {
    if (now < new Date(c.validFrom) || now > new Date(c.validTo)) throw refuse();
  }
  let result: { publicKey: unknown; environment: string };
  try {
    result = verifyAttestation({
      attestation: raw,
      challenge: Buffer.from(input.challenge, 'utf8'),
      keyId: input.keyId,
      bundleIdentifier: app.bundleIdentifier,
      teamIdentifier: app.teamIdentifier,
      allowDevelopmentEnvironment: app.allowDevelopment,
    });
  } catch {
    throw refuse();
  }
  if (typeof result.publicKey !== 'string') throw refuse();
  // The key the library returns is the credential certificate's: the one checked above.
  if (certs[0]!.publicKey.export({ type: 'spki', format: 'pem' }) !== result.publicKey) throw refuse();
  return {
    publicKey: result.publicKey,
    environment: result.environment === 'development' ? 'development' : 'production',
  };
}

export async function registerKey(
  deps: Deps,
  input: { key_id: string; attestation: string; challenge: string },
): Promise<{ keyId: string; environment: string; createdAt: Date }> {
  const app = appIdOf(deps);
  if (!app) throw disabled();
  if (!(await consumeChallenge(deps, input.challenge))) {
    throw invalid('body.challenge', 'is unknown, expired or already used');
  }
  const key = verifyAttestationObject(app, {
    keyId: input.key_id,
    challenge: input.challenge,
    attestation: input.attestation,
  });
  const row = await deps.database.db
    .insertInto('app_attest_keys')
    .values({ key_id: input.key_id, public_key: key.publicKey, environment: key.environment })
    .onConflict((oc) => oc.column('key_id').doNothing())
    .returning(['key_id', 'environment', 'created_at'])
    .executeTakeFirst();
  if (!row) throw conflict('This key is already registered.');
  return { keyId: row.key_id, environment: row.environment, createdAt: row.created_at };
}

/**
 * Checks a sign-in's `app_attest` proof; throws 422 at body.app_attest.* when it does not hold (at
 * query.app_attest_* for the OAuth start, which takes the proof as three query parameters).
 */
export async function verifyAppAttestProof(
  deps: Deps,
  proof: { key_id: string; challenge: string; assertion: string },
  at: 'body' | 'query' = 'body',
): Promise<void> {
  const field = (part: 'key_id' | 'challenge' | 'assertion' | null) =>
    at === 'body' ? `body.app_attest${part ? `.${part}` : ''}` : `query.app_attest_${part ?? 'key_id'}`;
  const app = appIdOf(deps);
  if (!app) throw invalid(field(null), 'App Attest is not enabled on this server; send challenge_token');
  if (!(await consumeChallenge(deps, proof.challenge))) {
    throw invalid(field('challenge'), 'is unknown, expired or already used');
  }
  const db = deps.database.db;
  const key = await db.selectFrom('app_attest_keys').selectAll().where('key_id', '=', proof.key_id).executeTakeFirst();
  if (!key || (key.environment === 'development' && !app.allowDevelopment)) {
    throw invalid(field('key_id'), 'is not a registered key');
  }
  let signCount: number;
  try {
    const r = verifyAssertion({
      assertion: Buffer.from(proof.assertion, 'base64'),
      payload: Buffer.from(proof.challenge, 'utf8'),
      publicKey: key.public_key,
      bundleIdentifier: app.bundleIdentifier,
      teamIdentifier: app.teamIdentifier,
      signCount: Number(key.sign_count),
    });
    signCount = Number(r.signCount);
  } catch {
    throw invalid(field('assertion'), 'could not be verified');
  }
  if (!Number.isSafeInteger(signCount)) throw invalid(field('assertion'), 'could not be verified');
  // Only a counter that is still larger wins (two uses of one assertion cannot both pass).
  const moved = await db
    .updateTable('app_attest_keys')
    .set({ sign_count: signCount, last_used_at: new Date() })
    .where('key_id', '=', proof.key_id)
    .where('sign_count', '<', signCount)
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) throw invalid(field('assertion'), 'could not be verified');
}

/** SHA-256 of `team id.bundle id`: the rpId hash authenticator data starts with (tests use it). */
export const rpIdHash = (appId: string): Buffer => createHash('sha256').update(appId).digest();
