// OAuth sign-in with Google and Microsoft (OpenID Connect, gaps.md "Sign-up and sessions"): the
// same OAuth clients as the mailbox connection, one more redirect URI. State, nonce and PKCE are
// bound to the browser (a cookie whose hash the flow keeps); the ID token is verified against
// the provider's keys (issuer, audience, nonce, signature, expiry) and only a verified email
// signs in or registers. Native apps (client=native) get a one-time code for POST /exchange.
// A new person's picture (the `picture` claim) is fetched in a job and goes through the
// pictures pipeline (src/modules/images); expired flows and codes are swept by a job (jobs.ts).
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { sql } from 'kysely';
import type { OAuthProviderConfig } from '../../../config.js';
import type { Deps } from '../../../deps.js';
import { hashPassword } from '../../../platform/crypto/passwords.js';
import { newId } from '../../../platform/crypto/random.js';
import { hashSecret } from '../../../platform/crypto/tokens.js';
import { ApiError, conflict, invalid, notFound, unauthorized } from '../../../platform/http/errors.js';
import { auditPerson } from '../passkeys/service.js';

export type SignInProvider = 'google' | 'microsoft';
export const SIGN_IN_PROVIDERS: SignInProvider[] = ['google', 'microsoft'];
export const FLOW_COOKIE = 'svc_oauth_signin';
export const FLOW_COOKIE_PATH = '/v1/auth/oauth';
export const FLOW_TTL_MS = 10 * 60_000;
export const EXCHANGE_TTL_MS = 60_000;
export const OAUTH_PICTURE_JOB = 'auth.oauth_picture';
const b64url = (b: Buffer) => b.toString('base64url');
const s256 = (v: string) => b64url(createHash('sha256').update(v).digest());

export function signInConfig(deps: Deps, provider: string): OAuthProviderConfig {
  if (provider !== 'google' && provider !== 'microsoft') throw notFound();
  const c = deps.config.oauth[provider];
  if (!c) throw notFound(`Sign-in with ${provider} is not configured.`);
  return c;
}

export const signInRedirectUri = (deps: Deps, provider: SignInProvider) =>
  `${deps.config.publicUrl}/v1/auth/oauth/${provider}/callback`;

export interface StartInput {
  provider: string;
  native: boolean;
  codeChallenge?: string;
  linkUserId: string | null;
}

/** Answers the provider's authorization URL and the browser-binding cookie's value. */
export async function startSignIn(deps: Deps, input: StartInput): Promise<{ url: string; browser: string }> {
  const c = signInConfig(deps, input.provider);
  const provider = input.provider as SignInProvider;
  if (input.native && !/^[A-Za-z0-9_-]{43}$/.test(input.codeChallenge ?? '')) {
    throw invalid('query.code_challenge', 'is required with client=native (S256, 43 base64url characters)');
  }
  const state = b64url(randomBytes(24));
  const browser = b64url(randomBytes(24));
  const nonce = b64url(randomBytes(16));
  const verifier = b64url(randomBytes(32));
  await deps.database.db
    .insertInto('oauth_sign_in_flows')
    .values({
      state_hash: hashSecret(state),
      browser_hash: input.native ? null : hashSecret(browser),
      provider,
      nonce,
      code_verifier: verifier,
      native: input.native,
      app_challenge: input.native ? input.codeChallenge! : null,
      link_user_id: input.linkUserId,
      expires_at: new Date(Date.now() + FLOW_TTL_MS),
    })
    .execute();
  const url = new URL(c.authorizeUrl);
  url.searchParams.set('client_id', c.clientId);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', signInRedirectUri(deps, provider));
  url.searchParams.set('scope', 'openid email profile');
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', s256(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('prompt', 'select_account');
  return { url: url.toString(), browser };
}

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
const keysOf = (u: string) => {
  let k = keySets.get(u);
  if (!k) {
    k = createRemoteJWKSet(new URL(u));
    keySets.set(u, k);
  }
  return k;
};

const refused = (why: string) => unauthorized(`The sign-in could not be completed (${why}): start again.`);

export interface VerifiedIdentity {
  provider: SignInProvider;
  subject: string;
  email: string;
  /** Whether the provider vouches for the email (see verifyIdToken); only then may it match or register a person. */
  emailVerified: boolean;
  name: string;
  picture: string | null;
}

/**
 * Verifies an ID token: signature by the provider's keys, issuer (Microsoft's `{tenantid}` template
 * filled with the token's own `tid`), audience, nonce, expiry; an email is required. Whether the
 * email is verified: Google's `email_verified`; Microsoft's ID tokens carry none, so there only
 * `xms_edov` true (the optional claim "email domain owner verified", configured on the app
 * registration) counts. An Entra tenant's admin can set any address on an account, so a bare
 * `email` from Microsoft is not taken as verified (docs/decisions.md).
 */
export async function verifyIdToken(
  c: OAuthProviderConfig,
  provider: SignInProvider,
  idToken: string,
  nonce: string,
): Promise<VerifiedIdentity> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keysOf(c.idJwksUrl), { audience: c.clientId, clockTolerance: 60 }));
  } catch {
    throw refused('id_token');
  }
  const tid = typeof payload.tid === 'string' ? payload.tid : '';
  if (payload.iss !== c.idIssuer.replace('{tenantid}', tid)) throw refused('issuer');
  if (payload.nonce !== nonce) throw refused('nonce');
  const email = typeof payload.email === 'string' ? payload.email.trim() : '';
  const said = payload.email_verified;
  const verified =
    said === true ||
    said === 'true' ||
    (provider === 'microsoft' && said === undefined && (payload.xms_edov === true || payload.xms_edov === 'true'));
  if (!email) throw invalid('id_token.email', 'is not given by the provider');
  if (typeof payload.sub !== 'string' || payload.sub === '') throw refused('subject');
  return {
    provider,
    subject: payload.sub,
    email,
    emailVerified: verified,
    name: typeof payload.name === 'string' && payload.name.trim() ? payload.name.trim() : email.split('@')[0]!,
    picture: typeof payload.picture === 'string' ? payload.picture : null,
  };
}

export type CallbackOutcome =
  | { kind: 'user'; userId: string; native: false; linked: boolean }
  | { kind: 'native'; code: string }
  /** The provider sent the person back with an error (Cancel): the flow is used up, nobody signed in. */
  | { kind: 'error'; native: boolean; error: string };

/** The provider's `error` when it is a plain code (access_denied, ...), else oauth_failed. */
export const providerErrorCode = (error: string): string => (/^[a-z_]{1,40}$/.test(error) ? error : 'oauth_failed');

/**
 * The callback: takes the flow (single use), checks the browser binding, exchanges the code with
 * PKCE, verifies the ID token, then links, signs in or registers.
 */
export async function finishSignIn(
  deps: Deps,
  input: { provider: string; state: string; code?: string; error?: string; browser: string | undefined; ip: string },
): Promise<CallbackOutcome> {
  const c = signInConfig(deps, input.provider);
  const provider = input.provider as SignInProvider;
  const db = deps.database.db;
  const flow = await db
    .deleteFrom('oauth_sign_in_flows')
    .where('state_hash', '=', hashSecret(input.state))
    .where('provider', '=', provider)
    // Bound to the browser that started it: another browser's request does not use the flow up.
    .where((eb) => eb.or([eb('native', '=', true), eb('browser_hash', '=', hashSecret(input.browser ?? ''))]))
    .returningAll()
    .executeTakeFirst();
  if (!flow || flow.expires_at.getTime() < Date.now()) throw refused('state');
  if (input.error !== undefined || input.code === undefined) {
    return { kind: 'error', native: flow.native, error: providerErrorCode(input.error ?? '') };
  }
  const res = await fetch(c.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: signInRedirectUri(deps, provider),
      client_id: c.clientId,
      client_secret: c.clientSecret,
      code_verifier: flow.code_verifier,
    }),
    signal: AbortSignal.timeout(10_000),
  }).catch(() => null);
  if (!res) throw new ApiError('unavailable', 'The provider could not be reached.');
  const body = (await res.json().catch(() => ({}))) as { id_token?: string };
  if (!res.ok || typeof body.id_token !== 'string') throw refused('code');
  const who = await verifyIdToken(c, provider, body.id_token, flow.nonce);
  const { userId, identityId, how } = await personFor(deps, who, flow.link_user_id);
  if (how === 'registered' && who.picture) await queueOAuthPicture(deps, userId, who.picture);
  if (how === 'linked' || how === 'linked_by_email') {
    await auditPerson(deps, userId, input.ip, 'oauth.linked', identityId, identityData(who, how), 'oauth_identity');
  }
  if (!flow.link_user_id) {
    await auditPerson(
      deps,
      userId,
      input.ip,
      'oauth.signed_in',
      identityId,
      { provider, email: who.email, client: flow.native ? 'native' : 'web' },
      'oauth_identity',
    );
  }
  if (flow.native) {
    const code = b64url(randomBytes(24));
    await db
      .insertInto('oauth_exchange_codes')
      .values({
        code_hash: hashSecret(code),
        user_id: userId,
        app_challenge: flow.app_challenge!,
        expires_at: new Date(Date.now() + EXCHANGE_TTL_MS),
      })
      .execute();
    return { kind: 'native', code };
  }
  return { kind: 'user', userId, native: false, linked: flow.link_user_id !== null };
}

const identityData = (who: VerifiedIdentity, how: string) => ({
  provider: who.provider,
  email: who.email,
  ...(how === 'linked_by_email' ? { by: 'verified_email' } : {}),
});

interface Person {
  userId: string;
  identityId: string;
  how: 'known' | 'linked' | 'linked_by_email' | 'registered';
}

/**
 * Links (link flow), signs in the identity's person, or by a verified email the person with
 * that email (linking the identity), or registers one. The email is used only when the provider
 * vouches for it (422 otherwise, nothing created): a known identity and an explicit link do
 * not depend on it.
 */
async function personFor(deps: Deps, who: VerifiedIdentity, linkUserId: string | null): Promise<Person> {
  const db = deps.database.db;
  const known = await db
    .selectFrom('oauth_identities')
    .select(['id', 'user_id'])
    .where('provider', '=', who.provider)
    .where('subject', '=', who.subject)
    .executeTakeFirst();
  if (linkUserId) {
    if (known && known.user_id !== linkUserId) throw conflict('This account is linked to another person.');
    if (known) return { userId: linkUserId, identityId: known.id, how: 'known' };
    return { userId: linkUserId, identityId: await insertIdentity(deps, linkUserId, who), how: 'linked' };
  }
  if (known) return { userId: known.user_id, identityId: known.id, how: 'known' };
  if (!who.emailVerified) throw invalid('id_token.email', 'is not verified by the provider');
  const byEmail = await db
    .selectFrom('users')
    .select('id')
    .where((eb) => eb(eb.fn('lower', [eb.ref('email')]), '=', who.email.toLowerCase()))
    .executeTakeFirst();
  if (byEmail) {
    return { userId: byEmail.id, identityId: await insertIdentity(deps, byEmail.id, who), how: 'linked_by_email' };
  }
  const id = newId();
  const identityId = newId();
  const passwordHash = await hashPassword(b64url(randomBytes(32)));
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('users')
      .values({
        id,
        email: who.email,
        name: who.name.slice(0, 200),
        password_hash: passwordHash,
        has_password: false,
        // The picture is fetched and processed in a job (queueOAuthPicture), never the provider's URL.
        avatar_url: null,
        avatar_source: null,
        mfa_secret: null,
      })
      .execute();
    await trx
      .insertInto('oauth_identities')
      .values({ id: identityId, user_id: id, provider: who.provider, subject: who.subject, email: who.email })
      .execute();
  });
  return { userId: id, identityId, how: 'registered' };
}

/** Links the identity to the person; its id (the existing row's when a concurrent callback linked it first). */
async function insertIdentity(deps: Deps, userId: string, who: VerifiedIdentity): Promise<string> {
  const db = deps.database.db;
  const row = await db
    .insertInto('oauth_identities')
    .values({ id: newId(), user_id: userId, provider: who.provider, subject: who.subject, email: who.email })
    .onConflict((oc) => oc.columns(['provider', 'subject']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (row) return row.id;
  const existing = await db
    .selectFrom('oauth_identities')
    .select(['id', 'user_id'])
    .where('provider', '=', who.provider)
    .where('subject', '=', who.subject)
    .executeTakeFirstOrThrow();
  if (existing.user_id !== userId) throw conflict('This account is linked to another person.');
  return existing.id;
}

/** A new person's picture from the provider: fetched, processed and stored in a job (jobs.ts). */
async function queueOAuthPicture(deps: Deps, userId: string, url: string): Promise<void> {
  try {
    await deps.jobs.send(OAUTH_PICTURE_JOB, { user_id: userId, url: url.slice(0, 2000) }, { retryLimit: 1 });
  } catch (err) {
    // The picture is a nicety: a sign-up does not fail for it.
    deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'oauth picture not queued');
  }
}

/** POST /v1/auth/oauth/exchange: the one-time code and the app's code_verifier → the person. */
export async function takeExchangeCode(deps: Deps, code: string, verifier: string): Promise<string> {
  const row = await deps.database.db
    .deleteFrom('oauth_exchange_codes')
    .where('code_hash', '=', hashSecret(code))
    .returningAll()
    .executeTakeFirst();
  if (!row || row.expires_at.getTime() < Date.now()) throw unauthorized('The code is invalid, used or expired.');
  if (s256(verifier) !== row.app_challenge) throw unauthorized('The code_verifier does not match the code_challenge.');
  return row.user_id;
}

export async function identitiesOf(deps: Deps, userId: string) {
  return deps.database.db
    .selectFrom('oauth_identities')
    .select(['id', 'provider', 'email', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
}

/** Unlinks, unless it leaves the person no way to sign in (no password, no passkey, no other identity). */
export async function unlinkIdentity(deps: Deps, userId: string, ip: string, id: string): Promise<void> {
  const gone = await deps.database.db.transaction().execute(async (trx) => {
    const user = await trx
      .selectFrom('users')
      .select(['has_password'])
      .where('id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    const mine = await trx.selectFrom('oauth_identities').select('id').where('user_id', '=', userId).execute();
    if (!user || !mine.some((r) => r.id === id)) throw notFound();
    // The passkeys table (0052) may not be on this branch yet.
    const table = await sql<{ r: string | null }>`SELECT to_regclass('passkeys')::text AS r`.execute(trx);
    const passkeys = table.rows[0]?.r
      ? Number(
          (await sql<{ n: string }>`SELECT count(*) AS n FROM passkeys WHERE user_id = ${userId}`.execute(trx)).rows[0]
            ?.n ?? 0,
        )
      : 0;
    if (!user.has_password && passkeys === 0 && mine.length <= 1) {
      throw conflict('This is your only way to sign in: set a password or add a passkey first.');
    }
    return trx
      .deleteFrom('oauth_identities')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returning(['provider', 'email'])
      .executeTakeFirst();
  });
  if (!gone) throw notFound();
  await auditPerson(
    deps,
    userId,
    ip,
    'oauth.unlinked',
    id,
    { provider: gone.provider, email: gone.email },
    'oauth_identity',
  );
}
