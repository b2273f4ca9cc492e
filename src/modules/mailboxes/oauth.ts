// Google and Microsoft mailboxes (issue 8 part 8): the OAuth 2.0 authorization code flow with
// PKCE (RFC 7636, S256), the tokens sealed at rest, and their refresh before they expire.
//
// The flow: an admin's app calls POST /v1/mailboxes/oauth/{provider}/start and sends the browser
// to the returned url; the provider sends it back to GET /v1/mailboxes/oauth/{provider}/callback
// with a code, which is exchanged at the provider's token endpoint; the account's address comes
// from Google's userinfo endpoint or from Microsoft's id_token (verified against its keys); the
// mailbox is created (or reconnected) and the browser goes to APP_URL/settings/mailboxes.
//
// `state` is a signed JWT (10 minutes) naming the admin's session, the workspace, the provider
// and the code_challenge. The code_verifier travels only in an HttpOnly cookie set by start
// (Path=/v1/mailboxes/oauth, SameSite=Lax) and its SHA-256 must equal the state's challenge:
// a state is useless in another browser, and the callback checks that the admin's session is
// still live and still an admin's. Tokens never appear in a response, an event, an audit entry
// or the log.
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { sql } from 'kysely';
import type { MailEndpoint, OAuthProviderConfig } from '../../config.js';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { SESSION_IDLE_MS } from '../auth/sessions.js';
import { checkPlanLimit, mailboxesChanged } from '../billing/service.js';
import { forwardingAddressFor, loadMailbox, oauthContext } from './service.js';

export type OAuthProvider = 'google' | 'microsoft';
export const OAUTH_PROVIDERS: OAuthProvider[] = ['google', 'microsoft'];

/** The cookie that carries the PKCE code_verifier from start to callback. */
export const OAUTH_COOKIE = 'svc_mailbox_oauth';
export const OAUTH_COOKIE_PATH = '/v1/mailboxes/oauth';
const STATE_TTL_SECONDS = 10 * 60;
/** Refresh an access token this long before it expires. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const HTTP_TIMEOUT_MS = 15_000;

/** Why a callback failed: the `error` the browser returns to the app with. */
export type CallbackError =
  | 'invalid_state'
  | 'session_expired'
  | 'forbidden'
  | 'access_denied'
  | 'provider_error'
  | 'token_exchange_failed'
  | 'account_unverified'
  | 'account_mismatch'
  | 'mailbox_exists'
  | 'mailbox_not_found'
  | 'not_configured';

export class OAuthFlowError extends Error {
  constructor(readonly code: CallbackError) {
    super(code);
  }
}

/** The provider's settings, or a 422 when the server has no client for it. */
export function providerConfig(deps: Deps, provider: OAuthProvider): OAuthProviderConfig {
  const c = deps.config.oauth[provider];
  if (!c) {
    const env = provider.toUpperCase();
    throw invalid(
      'params.provider',
      `${provider} mailboxes are not configured on this server (${env}_CLIENT_ID and ${env}_CLIENT_SECRET)`,
    );
  }
  return c;
}

export const redirectUri = (deps: Deps, provider: OAuthProvider) =>
  `${deps.config.publicUrl}/v1/mailboxes/oauth/${provider}/callback`;

const b64url = (b: Buffer) => b.toString('base64url');
const challengeOf = (verifier: string) => b64url(createHash('sha256').update(verifier).digest());

interface StateClaims {
  sub: string;
  sid: string;
  wid: string;
  prv: OAuthProvider;
  /** The PKCE code_challenge (SHA-256 of the verifier in the cookie). */
  chl: string;
  /** Reconnect this mailbox; null: create one. */
  mid: string | null;
  /** The mailbox name and the address asked for (login_hint). */
  nm: string;
  em: string | null;
}

export interface StartInput {
  name: string;
  email?: string;
  mailbox_id?: string;
}

/** POST …/start: the provider's authorization URL, and the verifier for the cookie. */
export async function startOAuth(
  deps: Deps,
  ctx: RequestContext,
  provider: OAuthProvider,
  input: StartInput,
): Promise<{ url: string; verifier: string }> {
  const p = providerConfig(deps, provider);
  if (ctx.actor.kind !== 'member') throw invalid('credential', 'an admin signs in to connect a mailbox');
  const name = input.name.trim();
  if (name === '') throw invalid('body.name', 'must not be blank');
  const email = input.email === undefined ? null : input.email.trim().toLowerCase();
  if (email !== null && !/^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/.test(email)) {
    throw invalid('body.email', 'must be an email address');
  }
  let mailboxId: string | null = null;
  if (input.mailbox_id !== undefined) {
    const m = isUuid(input.mailbox_id)
      ? await loadMailbox(deps.database.db, ctx.workspaceId, input.mailbox_id.toLowerCase())
      : null;
    if (!m) throw notFound('Mailbox not found.');
    if (m.inbound_kind !== provider) {
      throw invalid('body.mailbox_id', `is a ${m.inbound_kind} mailbox; only a ${provider} mailbox reconnects here`);
    }
    mailboxId = m.id;
  }
  const verifier = b64url(randomBytes(32));
  const claims: StateClaims = {
    sub: ctx.actor.userId,
    sid: ctx.actor.sessionId,
    wid: ctx.workspaceId,
    prv: provider,
    chl: challengeOf(verifier),
    mid: mailboxId,
    nm: name.slice(0, 100),
    em: email,
  };
  const { token: state } = await deps.tokens.sign({ ...claims, purpose: 'mailbox_oauth' }, STATE_TTL_SECONDS);
  const url = new URL(p.authorizeUrl);
  const q = url.searchParams;
  q.set('response_type', 'code');
  q.set('client_id', p.clientId);
  q.set('redirect_uri', redirectUri(deps, provider));
  q.set('scope', p.scopes.join(' '));
  q.set('state', state);
  q.set('code_challenge', claims.chl);
  q.set('code_challenge_method', 'S256');
  if (provider === 'google') {
    // A refresh token every time (Google sends one only on the first consent otherwise).
    q.set('access_type', 'offline');
    q.set('prompt', 'consent');
  } else {
    q.set('response_mode', 'query');
    q.set('prompt', 'select_account');
  }
  if (email) q.set('login_hint', email);
  return { url: url.toString(), verifier };
}

interface TokenSet {
  access_token: string;
  refresh_token: string | null;
  scope: string | null;
}

interface TokenResponse {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  id_token?: unknown;
  scope?: unknown;
  error?: unknown;
}

/** POSTs a form to the token endpoint; the JSON answer, or an error naming the OAuth error code only. */
async function tokenRequest(p: OAuthProviderConfig, form: Record<string, string>): Promise<TokenResponse> {
  const res = await fetch(p.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ ...form, client_id: p.clientId, client_secret: p.clientSecret }).toString(),
    signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
  });
  let body: TokenResponse = {};
  try {
    body = (await res.json()) as TokenResponse;
  } catch {
    // not JSON
  }
  if (!res.ok || typeof body.access_token !== 'string' || body.access_token === '') {
    const code =
      typeof body.error === 'string' && /^[\w.-]{1,64}$/.test(body.error) ? body.error : `HTTP ${res.status}`;
    throw new TokenEndpointError(code);
  }
  return body;
}

export class TokenEndpointError extends Error {
  constructor(readonly oauthError: string) {
    super(`the token endpoint refused: ${oauthError}`);
  }
}

const expiryOf = (r: TokenResponse) =>
  new Date(Date.now() + (typeof r.expires_in === 'number' && r.expires_in > 0 ? r.expires_in : 3600) * 1000);

const jwksCache = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/** The account's address: Google's userinfo (verified addresses only), Microsoft's id_token. */
async function accountEmail(p: OAuthProviderConfig, provider: OAuthProvider, r: TokenResponse): Promise<string> {
  if (provider === 'google') {
    const res = await fetch(p.userinfoUrl!, {
      headers: { authorization: `Bearer ${r.access_token as string}`, accept: 'application/json' },
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    if (!res.ok) throw new OAuthFlowError('provider_error');
    const info = (await res.json()) as { email?: unknown; email_verified?: unknown };
    if (typeof info.email !== 'string' || info.email_verified !== true) throw new OAuthFlowError('account_unverified');
    return info.email.toLowerCase();
  }
  // Microsoft: the access token is for Outlook's IMAP/SMTP, not for Graph; the id_token names
  // the account. Its signature is checked against the tenant's keys, its audience is our client.
  if (typeof r.id_token !== 'string') throw new OAuthFlowError('provider_error');
  let jwks = jwksCache.get(p.jwksUrl!);
  if (!jwks) {
    jwks = createRemoteJWKSet(new URL(p.jwksUrl!), { timeoutDuration: HTTP_TIMEOUT_MS });
    jwksCache.set(p.jwksUrl!, jwks);
  }
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(r.id_token, jwks, { audience: p.clientId, algorithms: ['RS256'] }));
  } catch {
    throw new OAuthFlowError('provider_error');
  }
  // Multi-tenant endpoints issue from the user's own tenant: the issuer must name the tid claim.
  const tid = typeof claims.tid === 'string' ? claims.tid : null;
  if (!tid || typeof claims.iss !== 'string' || !claims.iss.endsWith(`/${tid}/v2.0`)) {
    throw new OAuthFlowError('provider_error');
  }
  const email =
    typeof claims.email === 'string'
      ? claims.email
      : typeof claims.preferred_username === 'string' && claims.preferred_username.includes('@')
        ? claims.preferred_username
        : null;
  if (!email) throw new OAuthFlowError('account_unverified');
  return email.toLowerCase();
}

/**
 * GET …/callback: checks the state, the cookie and the session, exchanges the code, reads the
 * account, creates or reconnects the mailbox. Returns its id; throws OAuthFlowError otherwise.
 */
export async function finishOAuth(
  deps: Deps,
  provider: OAuthProvider,
  q: { state?: string; code?: string; error?: string },
  verifier: string | undefined,
  ip: string,
): Promise<string> {
  const p = deps.config.oauth[provider];
  if (!p) throw new OAuthFlowError('not_configured');
  const raw = q.state ? await deps.tokens.verify(q.state, 'mailbox_oauth') : null;
  const claims = raw as unknown as (StateClaims & { purpose: string }) | null;
  if (!claims || claims.prv !== provider || typeof claims.sid !== 'string' || typeof claims.wid !== 'string') {
    throw new OAuthFlowError('invalid_state');
  }
  // The browser that started the flow: only it holds the verifier behind the state's challenge.
  if (!verifier || challengeOf(verifier) !== claims.chl) throw new OAuthFlowError('invalid_state');
  const db = deps.database.db;
  const session = await db
    .selectFrom('sessions as s')
    .leftJoin('members as m', (j) => j.onRef('m.user_id', '=', 's.user_id').on('m.workspace_id', '=', claims.wid))
    .select(['s.user_id', 's.revoked_at', 's.expires_at', 's.last_used_at', 'm.role'])
    .where('s.id', '=', claims.sid)
    .executeTakeFirst();
  const now = Date.now();
  if (
    !session ||
    session.user_id !== claims.sub ||
    session.revoked_at !== null ||
    new Date(session.expires_at).getTime() <= now ||
    new Date(session.last_used_at).getTime() + SESSION_IDLE_MS <= now
  ) {
    throw new OAuthFlowError('session_expired');
  }
  if (session.role !== 'admin' && session.role !== 'owner') throw new OAuthFlowError('forbidden');
  if (q.error) throw new OAuthFlowError(q.error === 'access_denied' ? 'access_denied' : 'provider_error');
  if (!q.code) throw new OAuthFlowError('provider_error');

  let tokens: TokenResponse;
  try {
    tokens = await tokenRequest(p, {
      grant_type: 'authorization_code',
      code: q.code,
      redirect_uri: redirectUri(deps, provider),
      code_verifier: verifier,
    });
  } catch (err) {
    deps.log.warn(
      { provider, err: err instanceof TokenEndpointError ? err.oauthError : String(err) },
      'mailbox oauth: code exchange failed',
    );
    throw new OAuthFlowError('token_exchange_failed');
  }
  const account = await accountEmail(p, provider, tokens);
  const ctx: RequestContext = {
    workspaceId: claims.wid,
    actor: { kind: 'member', userId: claims.sub, sessionId: claims.sid },
    role: session.role,
    scopes: null,
    teams: [],
    ip,
  };
  return saveConnection(deps, ctx, provider, claims, account, tokens);
}

async function saveConnection(
  deps: Deps,
  ctx: RequestContext,
  provider: OAuthProvider,
  claims: StateClaims,
  account: string,
  tokens: TokenResponse,
): Promise<string> {
  const ws = ctx.workspaceId;
  const email = claims.em ?? account;
  const expiresAt = expiryOf(tokens);
  const sealFor = (id: string, previous: TokenSet | null) => {
    const set: TokenSet = {
      access_token: tokens.access_token as string,
      refresh_token:
        typeof tokens.refresh_token === 'string' ? tokens.refresh_token : (previous?.refresh_token ?? null),
      scope: typeof tokens.scope === 'string' ? tokens.scope : null,
    };
    return deps.secrets.seal(JSON.stringify(set), oauthContext(ws, id));
  };
  return deps.writer.run(ws, async (u) => {
    // Reconnect: the mailbox named in the state, or one with this address of the same provider.
    const existing = claims.mid
      ? await u.trx
          .selectFrom('mailboxes')
          .selectAll()
          .where('workspace_id', '=', ws)
          .where('id', '=', claims.mid)
          .forUpdate()
          .executeTakeFirst()
      : await u.trx
          .selectFrom('mailboxes')
          .selectAll()
          .where('workspace_id', '=', ws)
          .where(sql<string>`lower(email)`, '=', email)
          .forUpdate()
          .executeTakeFirst();
    if (claims.mid && !existing) throw new OAuthFlowError('mailbox_not_found');
    if (existing && existing.inbound_kind !== provider) {
      if (claims.mid) throw new OAuthFlowError('mailbox_not_found');
      throw new OAuthFlowError('mailbox_exists');
    }
    if (existing) {
      const was = existing.config?.oauth_email ?? null;
      if (was && was !== account) throw new OAuthFlowError('account_mismatch');
      const previous = existing.oauth_enc ? openTokens(deps, ws, existing.id, existing.oauth_enc) : null;
      await u.trx
        .updateTable('mailboxes')
        .set({
          oauth_enc: sealFor(existing.id, previous),
          oauth_expires_at: expiresAt,
          config: JSON.stringify({ ...(existing.config ?? {}), oauth_email: account }),
          status: existing.status === 'disabled' ? 'disabled' : 'active',
          last_error: null,
          updated_at: sql<Date>`now()`,
        })
        .where('workspace_id', '=', ws)
        .where('id', '=', existing.id)
        .execute();
      const view = (await loadMailbox(u.trx, ws, existing.id))!;
      u.emit({ type: 'mailbox.updated', data: { mailbox: view, changes: ['oauth'] } });
      await recordAudit(u.trx, ctx, {
        action: 'mailbox.updated',
        entityType: 'mailbox',
        entityId: existing.id,
        data: { oauth: 'reconnected', provider, oauth_email: account },
      });
      return existing.id;
    }
    if (typeof tokens.refresh_token !== 'string') throw new OAuthFlowError('token_exchange_failed');
    // A new mailbox counts against the plan (hosted offering: 402 plan_limit).
    await checkPlanLimit(deps, u.trx, ws, 'mailboxes');
    const id = newId();
    const forwardingAddress = forwardingAddressFor(email, deps.config.inboundDomain);
    await u.trx
      .insertInto('mailboxes')
      .values({
        workspace_id: ws,
        id,
        name: claims.nm,
        email,
        display_name: claims.nm,
        inbound_kind: provider,
        outbound_kind: provider,
        forwarding_address: forwardingAddress,
        config: JSON.stringify({ oauth_email: account }),
        oauth_enc: sealFor(id, null),
        oauth_expires_at: expiresAt,
      })
      .execute();
    await u.trx
      .insertInto('mailbox_addresses')
      .values({ address: forwardingAddress, workspace_id: ws, mailbox_id: id })
      .execute();
    const view = (await loadMailbox(u.trx, ws, id))!;
    u.emit({ type: 'mailbox.created', data: { mailbox: view } });
    await mailboxesChanged(deps, u, ws);
    await recordAudit(u.trx, ctx, {
      action: 'mailbox.created',
      entityType: 'mailbox',
      entityId: id,
      data: { name: claims.nm, email, inbound_kind: provider, outbound_kind: provider, oauth: 'connected' },
    });
    return id;
  });
}

function openTokens(deps: Deps, workspaceId: string, id: string, sealed: string): TokenSet | null {
  const text = deps.secrets.open(sealed, oauthContext(workspaceId, id));
  if (!text) return null;
  try {
    const t = JSON.parse(text) as TokenSet;
    return typeof t.access_token === 'string' ? t : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Access tokens for IMAP and SMTP (XOAUTH2).

export class OAuthTokenError extends Error {}

type MailboxRef = { workspaceId: string; id: string } | { workspace_id: string; id: string };
const refOf = (m: MailboxRef) => ({ ws: 'workspaceId' in m ? m.workspaceId : m.workspace_id, id: m.id });

const refreshing = new Map<string, Promise<string>>();

/**
 * A valid access token for a Google or Microsoft mailbox (for IMAP and SMTP XOAUTH2), refreshed
 * when it expires within five minutes. One refresh at a time per mailbox in a process (callers
 * that find the token expired while a refresh runs share it; a caller always reads the stored
 * expiry itself, so it never gets an answer read before the token expired); across processes the
 * new tokens are written only over the tokens that were refreshed (compare and set), and a process
 * that lost the race uses the winner's. Throws OAuthTokenError (a message without secrets) when
 * the mailbox has no tokens or the provider refuses the refresh.
 */
export async function accessTokenFor(deps: Deps, mailbox: MailboxRef): Promise<string> {
  const { ws, id } = refOf(mailbox);
  const db = deps.database.db;
  const row = await db
    .selectFrom('mailboxes')
    .select(['inbound_kind', 'oauth_enc', 'oauth_expires_at'])
    .where('workspace_id', '=', ws)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new OAuthTokenError('the mailbox no longer exists');
  const provider = row.inbound_kind;
  if (provider !== 'google' && provider !== 'microsoft') throw new OAuthTokenError('not an OAuth mailbox');
  const tokens = row.oauth_enc ? openTokens(deps, ws, id, row.oauth_enc) : null;
  if (!tokens) throw new OAuthTokenError(`no ${provider} authorization is stored: reconnect the mailbox`);
  const expires = row.oauth_expires_at ? new Date(row.oauth_expires_at).getTime() : 0;
  if (expires - REFRESH_MARGIN_MS > Date.now()) return tokens.access_token;
  const key = `${ws}:${id}`;
  const running = refreshing.get(key);
  if (running) return running;
  const work = refreshToken(deps, ws, id, provider, tokens, row.oauth_enc!).finally(() => refreshing.delete(key));
  refreshing.set(key, work);
  return work;
}

async function refreshToken(
  deps: Deps,
  ws: string,
  id: string,
  provider: OAuthProvider,
  tokens: TokenSet,
  sealed: string,
): Promise<string> {
  const db = deps.database.db;
  const p = deps.config.oauth[provider];
  if (!p) throw new OAuthTokenError(`${provider} is not configured on this server`);
  if (!tokens.refresh_token)
    throw new OAuthTokenError(`the ${provider} authorization has expired: reconnect the mailbox`);
  let r: TokenResponse;
  try {
    r = await tokenRequest(p, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      ...(provider === 'microsoft' ? { scope: p.scopes.join(' ') } : {}),
    });
  } catch (err) {
    if (err instanceof TokenEndpointError) {
      throw new OAuthTokenError(
        err.oauthError === 'invalid_grant'
          ? `the ${provider} authorization was revoked or has expired (invalid_grant): reconnect the mailbox`
          : `refreshing the ${provider} access token failed: ${err.oauthError}`,
      );
    }
    throw new OAuthTokenError(`refreshing the ${provider} access token failed: ${(err as Error).message}`);
  }
  const next: TokenSet = {
    access_token: r.access_token as string,
    refresh_token: typeof r.refresh_token === 'string' ? r.refresh_token : tokens.refresh_token,
    scope: typeof r.scope === 'string' ? r.scope : tokens.scope,
  };
  const written = await db
    .updateTable('mailboxes')
    .set({
      oauth_enc: deps.secrets.seal(JSON.stringify(next), oauthContext(ws, id)),
      oauth_expires_at: expiryOf(r),
    })
    .where('workspace_id', '=', ws)
    .where('id', '=', id)
    .where('oauth_enc', '=', sealed)
    .executeTakeFirst();
  if (Number(written.numUpdatedRows) === 0) {
    // Another process refreshed first (or the mailbox was reconnected): use what it stored.
    const again = await db
      .selectFrom('mailboxes')
      .select('oauth_enc')
      .where('workspace_id', '=', ws)
      .where('id', '=', id)
      .executeTakeFirst();
    const theirs = again?.oauth_enc ? openTokens(deps, ws, id, again.oauth_enc) : null;
    if (theirs) return theirs.access_token;
  }
  return next.access_token;
}

/** The IMAP and SMTP servers of a Google or Microsoft mailbox, and the user name for XOAUTH2. */
export function oauthServers(
  deps: Deps,
  kind: OAuthProvider,
  mailbox: { email: string; config: { oauth_email?: string | null } },
): { imap: MailEndpoint; smtp: MailEndpoint; user: string } | null {
  const p = deps.config.oauth[kind];
  if (!p) return null;
  return { imap: p.imap, smtp: p.smtp, user: mailbox.config.oauth_email ?? mailbox.email };
}
