// A stand-in for Google's and Microsoft's OAuth servers on loopback that speaks the real protocol:
// the authorization page (which signs `account` in at once and sends the browser back with a
// code), the token endpoint (authorization code with PKCE S256 checked against the
// code_verifier, the refresh_token grant), Google's userinfo, Microsoft's signed id_token and its
// keys, and RFC 7662 introspection for Dovecot's XOAUTH2. Used by the API's mailbox tests
// (test/modules/mailboxes/oauth.test.ts) and the app's (test/web/screens/settings-integrations.browser.test.ts).
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export const CLIENT = { id: 'client-123.apps.test', secret: 'client-Secret-9f8e7d' };
export const TENANT_ID = '9188040d-6c67-4c5b-b112-36a304b66dad';

interface Grant {
  challenge: string;
  redirectUri: string;
  account: string;
  used: boolean;
}

export interface Provider {
  server: Server;
  base: string;
  /** The account the next sign-in at /authorize picks. */
  account: string;
  /** Lifetime of issued access tokens. */
  expiresIn: number;
  grants: Map<string, Grant>;
  access: Map<string, { account: string; expires: number }>;
  refresh: Map<string, string>;
  /** Every token request, for assertions (grant types, PKCE failures). */
  requests: Array<{ grant: string; ok: boolean; why?: string }>;
  introspections: number;
  /** Sign id_tokens with another key (a forged token). */
  forge: boolean;
}

export const b64url = (b: Buffer) => b.toString('base64url');
const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
};

export async function startProvider(port: number): Promise<Provider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const forged = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const p: Provider = {
    server: createServer(),
    base: '',
    account: '',
    expiresIn: 3600,
    grants: new Map(),
    access: new Map(),
    refresh: new Map(),
    requests: [],
    introspections: 0,
    forge: false,
  };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const issue = async (account: string, withId: boolean) => {
    const access = b64url(randomBytes(24));
    const refresh = b64url(randomBytes(24));
    p.access.set(access, { account, expires: Date.now() + p.expiresIn * 1000 });
    p.refresh.set(refresh, account);
    const out: Record<string, unknown> = {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: p.expiresIn,
      scope: 'openid email mail',
    };
    if (withId) {
      out.id_token = await new SignJWT({ email: account, tid: TENANT_ID, preferred_username: account })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(`${p.base}/${TENANT_ID}/v2.0`)
        .setAudience(CLIENT.id)
        .setSubject('user-1')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(p.forge ? forged.privateKey : privateKey);
    }
    return out;
  };
  p.server.on('request', async (req, res) => {
    const url = new URL(req.url ?? '/', p.base);
    const [, who, what] = url.pathname.split('/');
    const microsoft = who === 'microsoft';
    if (req.method === 'GET' && what === 'authorize') {
      const q = url.searchParams;
      if (
        q.get('client_id') !== CLIENT.id ||
        q.get('response_type') !== 'code' ||
        q.get('code_challenge_method') !== 'S256' ||
        !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '') ||
        !q.get('state') ||
        !q.get('redirect_uri')
      ) {
        return json(res, 400, { error: 'invalid_request' });
      }
      const code = b64url(randomBytes(16));
      p.grants.set(code, {
        challenge: q.get('code_challenge')!,
        redirectUri: q.get('redirect_uri')!,
        account: p.account,
        used: false,
      });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      if (!microsoft) back.searchParams.set('scope', 'email openid https://mail.google.com/');
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (req.method === 'POST' && what === 'token') {
      const f = await readBody(req);
      const grant = f.get('grant_type') ?? '';
      const refuse = (why: string) => {
        p.requests.push({ grant, ok: false, why });
        json(res, 400, { error: why });
      };
      if (f.get('client_id') !== CLIENT.id || f.get('client_secret') !== CLIENT.secret) return refuse('invalid_client');
      if (grant === 'authorization_code') {
        const g = p.grants.get(f.get('code') ?? '');
        if (!g || g.used) return refuse('invalid_grant');
        g.used = true;
        if (f.get('redirect_uri') !== g.redirectUri) return refuse('invalid_grant');
        const verifier = f.get('code_verifier') ?? '';
        if (b64url(createHash('sha256').update(verifier).digest()) !== g.challenge) return refuse('invalid_grant');
        p.requests.push({ grant, ok: true });
        return json(res, 200, await issue(g.account, microsoft));
      }
      if (grant === 'refresh_token') {
        const account = p.refresh.get(f.get('refresh_token') ?? '');
        if (!account) return refuse('invalid_grant');
        p.requests.push({ grant, ok: true });
        const out = await issue(account, microsoft);
        if (!microsoft) delete out.refresh_token; // Google keeps the refresh token
        return json(res, 200, out);
      }
      return refuse('unsupported_grant_type');
    }
    if (req.method === 'GET' && what === 'userinfo') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const a = p.access.get(token);
      if (!a || a.expires < Date.now()) return json(res, 401, { error: 'invalid_token' });
      return json(res, 200, { sub: '1', email: a.account, email_verified: true });
    }
    if (req.method === 'GET' && what === 'keys') return json(res, 200, { keys: [jwk] });
    if (req.method === 'POST' && url.pathname === '/introspect') {
      p.introspections++;
      const a = p.access.get((await readBody(req)).get('token') ?? '');
      return json(res, 200, a && a.expires > Date.now() ? { active: true, email: a.account } : { active: false });
    }
    json(res, 404, { error: 'not_found' });
  });
  p.server.listen(port, '127.0.0.1');
  await once(p.server, 'listening');
  p.base = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
  return p;
}
