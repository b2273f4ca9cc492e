// A stand-in OpenID provider on loopback for OAuth sign-in (src/modules/auth/oauth): discovery,
// authorize (signs `account` in at once and returns a code), token (authorization code, PKCE S256
// checked, single use), JWKS, and real RS256-signed ID tokens carrying the nonce, email and
// email_verified. `tamper` makes the next ID tokens wrong in one way, for the refusals.
// `refuse` makes authorize send the browser back with ?error=...&state=... (Cancel at the
// provider) instead of a code. `microsoft` plays Microsoft's multi-tenant endpoint: discovery names
// the issuer `https://login.microsoftonline.com/{tenantid}/v2.0`, each token is issued by its
// account's tenant (`tid`). GET /picture.png serves `pictureBytes` (the `picture` claim's URL).
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export const OIDC_CLIENT = { id: 'signin-client.apps.test', secret: 'signin-Secret-1a2b3c' };

export interface OidcAccount {
  sub: string;
  email: string;
  /** undefined: the token carries no email_verified (Microsoft's). */
  email_verified?: boolean;
  name?: string;
  /** Microsoft: the account's tenant (the token's `tid` and its issuer's tenant). */
  tid?: string;
  /** Microsoft's optional claim: the email's domain owner verified it. */
  xms_edov?: boolean;
  /** The `picture` claim: a URL (see pictureUrl). */
  picture?: string;
}

export const MS_ISSUER_TEMPLATE = 'https://login.microsoftonline.com/{tenantid}/v2.0';

export interface OidcProvider {
  server: Server;
  base: string;
  issuer: string;
  account: OidcAccount;
  tamper: null | 'audience' | 'issuer' | 'nonce' | 'signature' | 'tenant';
  /** The provider's `error` for the next authorizations (e.g. access_denied); null: a code. */
  refuse: string | null;
  /** Served at GET /picture.png (image/png); pictureUrl is its address. */
  pictureBytes: Buffer | null;
  pictureUrl: string;
  /** How many times /picture.png was fetched. */
  pictureHits: number;
  close(): Promise<void>;
}

const b64url = (b: Buffer) => b.toString('base64url');

export async function startOidcProvider(opts: { microsoft?: boolean } = {}): Promise<OidcProvider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const forged = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const grants = new Map<
    string,
    { challenge: string; redirectUri: string; nonce: string; account: OidcAccount; used: boolean }
  >();
  const p: OidcProvider = {
    server: createServer(),
    base: '',
    issuer: '',
    account: { sub: 'sub-1', email: 'someone@example.com', email_verified: true },
    tamper: null,
    refuse: null,
    pictureBytes: null,
    pictureUrl: '',
    pictureHits: 0,
    close: () => new Promise((r) => p.server.close(() => r())),
  };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  };
  p.server.on('request', async (req, res) => {
    const url = new URL(req.url ?? '/', p.base);
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer: p.issuer,
        authorization_endpoint: `${p.base}/authorize`,
        token_endpoint: `${p.base}/token`,
        jwks_uri: `${p.base}/keys`,
        response_types_supported: ['code'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.pathname === '/keys') return json(res, 200, { keys: [jwk] });
    if (url.pathname === '/picture.png') {
      p.pictureHits++;
      if (!p.pictureBytes) return json(res, 404, { error: 'not_found' });
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(p.pictureBytes.length) });
      return res.end(p.pictureBytes);
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      if (
        q.get('client_id') !== OIDC_CLIENT.id ||
        q.get('code_challenge_method') !== 'S256' ||
        !q.get('state') ||
        !q.get('nonce') ||
        !q.get('redirect_uri')
      ) {
        return json(res, 400, { error: 'invalid_request' });
      }
      if (p.refuse) {
        const back = new URL(q.get('redirect_uri')!);
        back.searchParams.set('error', p.refuse);
        back.searchParams.set('error_description', 'The user canceled the sign-in.');
        back.searchParams.set('state', q.get('state')!);
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      const code = b64url(randomBytes(16));
      grants.set(code, {
        challenge: q.get('code_challenge')!,
        redirectUri: q.get('redirect_uri')!,
        nonce: q.get('nonce')!,
        account: { ...p.account },
        used: false,
      });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const f = await readBody(req);
      if (f.get('client_id') !== OIDC_CLIENT.id || f.get('client_secret') !== OIDC_CLIENT.secret) {
        return json(res, 401, { error: 'invalid_client' });
      }
      const g = grants.get(f.get('code') ?? '');
      if (!g || g.used || f.get('redirect_uri') !== g.redirectUri) return json(res, 400, { error: 'invalid_grant' });
      g.used = true;
      if (
        b64url(
          createHash('sha256')
            .update(f.get('code_verifier') ?? '')
            .digest(),
        ) !== g.challenge
      ) {
        return json(res, 400, { error: 'invalid_grant' });
      }
      const a = g.account;
      const claims: Record<string, unknown> = {
        email: a.email,
        name: a.name ?? 'Oauth Person',
        nonce: p.tamper === 'nonce' ? 'another-nonce' : g.nonce,
      };
      if (a.email_verified !== undefined) claims.email_verified = a.email_verified;
      if (a.picture !== undefined) claims.picture = a.picture;
      if (a.xms_edov !== undefined) claims.xms_edov = a.xms_edov;
      if (a.tid !== undefined) claims.tid = a.tid;
      // Microsoft: the issuer names the account's tenant; `tenant` names another one than tid.
      const tenantIssuer = (tid: string) => p.issuer.replace('{tenantid}', tid);
      const issuer =
        p.tamper === 'issuer'
          ? 'https://evil.example'
          : opts.microsoft
            ? tenantIssuer(p.tamper === 'tenant' ? '00000000-0000-0000-0000-0000000000ff' : (a.tid ?? ''))
            : p.issuer;
      const id_token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(p.tamper === 'audience' ? 'another-client' : OIDC_CLIENT.id)
        .setSubject(g.account.sub)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(p.tamper === 'signature' ? forged.privateKey : privateKey);
      return json(res, 200, {
        access_token: b64url(randomBytes(16)),
        token_type: 'Bearer',
        expires_in: 3600,
        id_token,
      });
    }
    json(res, 404, { error: 'not_found' });
  });
  p.server.listen(0, '127.0.0.1');
  await once(p.server, 'listening');
  p.base = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
  p.issuer = opts.microsoft ? MS_ISSUER_TEMPLATE : p.base;
  p.pictureUrl = `${p.base}/picture.png`;
  return p;
}
