// A stand-in OpenID provider on loopback for OAuth sign-in (src/modules/auth/oauth): discovery,
// authorize (signs `account` in at once and returns a code), token (authorization code, PKCE S256
// checked, single use), JWKS, and real RS256-signed ID tokens carrying the nonce, email and
// email_verified. `tamper` makes the next ID tokens wrong in one way, for the refusals.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export const OIDC_CLIENT = { id: 'signin-client.apps.test', secret: 'signin-Secret-1a2b3c' };

export interface OidcAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface OidcProvider {
  server: Server;
  base: string;
  issuer: string;
  account: OidcAccount;
  tamper: null | 'audience' | 'issuer' | 'nonce' | 'signature';
  close(): Promise<void>;
}

const b64url = (b: Buffer) => b.toString('base64url');

export async function startOidcProvider(): Promise<OidcProvider> {
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
      const id_token = await new SignJWT({
        email: g.account.email,
        email_verified: g.account.email_verified,
        name: g.account.name ?? 'Oauth Person',
        nonce: p.tamper === 'nonce' ? 'another-nonce' : g.nonce,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(p.tamper === 'issuer' ? 'https://evil.example' : p.issuer)
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
  p.issuer = p.base;
  return p;
}
