// Google and Microsoft mailboxes: the OAuth flow against a stand-in provider on loopback that
// speaks the real protocol (authorization code, PKCE S256 checked against the code_verifier,
// the token endpoint with the refresh_token grant, Google's userinfo, Microsoft's signed
// id_token and its keys, RFC 7662 introspection for Dovecot's XOAUTH2). The test plays the
// browser: start → the provider's page → the callback → the app's settings page.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokenFor } from '../../../src/modules/mailboxes/oauth.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { imapUnavailable, rawMail, startTestImap, type TestImap } from '../../support/imap-server.js';
import { b64url, CLIENT, type Provider, startProvider } from '../../support/oauth-provider.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

const APP_URL = 'http://app.helpdesk.test';

// ---------------------------------------------------------------------------------------------

const imapMissing = imapUnavailable();
let imap: TestImap | null = null;
let provider: Provider;
let svc: Service;
let own: OwnDatabase;
/** Google's SMTP stand-in: accepts XOAUTH2 logins whose token the provider issued for that account. */
let smtp: SMTPServer;
const smtpLogins: Array<{ user: string; ok: boolean }> = [];
const smtpMail: Array<{ from: string; to: string[]; subject: string; text: string }> = [];
let t: Tenant;

beforeAll(async () => {
  imap = imapMissing ? null : await startTestImap();
  const introspectPort = imap?.introspectUrl ? Number(new URL(imap.introspectUrl).port) : 0;
  provider = await startProvider(introspectPort);
  const b = provider.base;
  smtp = new SMTPServer({
    authMethods: ['XOAUTH2'],
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      const a = provider.access.get(auth.accessToken ?? '');
      const ok = auth.method === 'XOAUTH2' && !!a && a.account === auth.username && a.expires > Date.now();
      smtpLogins.push({ user: auth.username ?? '', ok });
      if (ok) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('5.7.8 Username and Password not accepted'), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (m) => {
          smtpMail.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: m.subject ?? '',
            text: m.text ?? '',
          });
          cb();
        },
        (err) => cb(err),
      );
    },
  });
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  // A database of its own on PostgreSQL: a process that polls IMAP takes any mailbox of its
  // database whose lease is free, and a send worker any queued reply. Another file's poller
  // (test/modules/email/imap.test.ts, `npm start` children), without these stand-in provider URLs,
  // would poll the Google and Microsoft mailboxes made here and set them to status error; and
  // this service's send workers (email: {} below) would take other files' replies and retry
  // them by the default, minutes-long, schedule.
  own = await ownDatabase('mailboxes_oauth');
  svc = await startService(
    {
      ...own.env,
      APP_URL,
      MAIL_ALLOW_PRIVATE: 'true',
      GOOGLE_CLIENT_ID: CLIENT.id,
      GOOGLE_CLIENT_SECRET: CLIENT.secret,
      GOOGLE_AUTH_URL: `${b}/google/authorize`,
      GOOGLE_TOKEN_URL: `${b}/google/token`,
      GOOGLE_USERINFO_URL: `${b}/google/userinfo`,
      ...(imap ? { GOOGLE_IMAP_URL: `imap://${imap.host}:${imap.port}?tls=none` } : {}),
      GOOGLE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}?tls=none`,
      MICROSOFT_CLIENT_ID: CLIENT.id,
      MICROSOFT_CLIENT_SECRET: CLIENT.secret,
      MICROSOFT_AUTH_URL: `${b}/microsoft/authorize`,
      MICROSOFT_TOKEN_URL: `${b}/microsoft/token`,
      MICROSOFT_JWKS_URL: `${b}/microsoft/keys`,
    },
    // This file's replies are sent by its own service (test/support/helpers.ts). Without Dovecot there is
    // no IMAP server to poll: the default Google host cannot be reached here, and a poller that
    // tried would set the new mailbox to status error before the test reads it.
    { email: {}, ...(imap ? {} : { imap: { maxPerProcess: 0 } }) },
  );
  t = await newTenant(svc.api);
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
  await new Promise((r) => (provider ? provider.server.close(r) : r(null)));
  await new Promise((r) => (smtp ? smtp.close(() => r(null)) : r(null)));
  await imap?.stop();
});

interface Flow {
  url: URL;
  cookie: string;
}

async function start(as = t.as, provider_ = 'google', body: Record<string, unknown> = { name: 'Support' }) {
  return svc.api.post(`/v1/mailboxes/oauth/${provider_}/start`, body, as);
}

async function startFlow(as = t.as, provider_ = 'google', body: Record<string, unknown> = { name: 'Support' }) {
  const r = await start(as, provider_, body);
  if (r.status !== 200) throw new Error(`start: ${r.status} ${r.text}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  return { url: new URL(r.body.url), cookie: setCookie.split(';')[0]!, setCookie } as Flow & { setCookie: string };
}

/** The browser at the provider: signs in and comes back with a code. */
async function atProvider(f: Flow): Promise<URL> {
  const r = await fetch(f.url, { redirect: 'manual' });
  expect(r.status).toBe(302);
  return new URL(r.headers.get('location')!);
}

/** The browser at our callback: where it is sent next. */
async function callback(to: URL, cookie: string | null): Promise<URL> {
  const local = new URL(to.pathname + to.search, svc.url);
  const r = await fetch(local, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  expect(r.status).toBe(302);
  return new URL(r.headers.get('location')!);
}

async function connect(account: string, kind = 'google', body: Record<string, unknown> = { name: 'Support' }) {
  provider.account = account;
  const f = await startFlow(t.as, kind, body);
  const done = await callback(await atProvider(f), f.cookie);
  return done;
}

describe('start', () => {
  it('answers the provider URL with state, PKCE S256 and the callback; sets an HttpOnly cookie', async () => {
    const f = await startFlow(t.as, 'google', { name: 'Support', email: 'help@acme.test' });
    const q = f.url.searchParams;
    expect(f.url.origin + f.url.pathname).toBe(`${provider.base}/google/authorize`);
    expect(q.get('client_id')).toBe(CLIENT.id);
    expect(q.get('response_type')).toBe('code');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(q.get('redirect_uri')).toBe(`${svc.rt.deps.config.publicUrl}/v1/mailboxes/oauth/google/callback`);
    expect(q.get('scope')).toContain('https://mail.google.com/');
    expect(q.get('access_type')).toBe('offline');
    expect(q.get('login_hint')).toBe('help@acme.test');
    expect(f.setCookie).toMatch(/^svc_mailbox_oauth=[\w-]{43};/);
    expect(f.setCookie).toMatch(/HttpOnly/i);
    expect(f.setCookie).toMatch(/SameSite=Lax/i);
    expect(f.setCookie).toMatch(/Path=\/v1\/mailboxes\/oauth/);
    // The verifier is not in the URL, only its challenge.
    const verifier = f.cookie.split('=')[1]!;
    expect(f.url.toString()).not.toContain(verifier);
    expect(q.get('code_challenge')).toBe(b64url(createHash('sha256').update(verifier).digest()));
  });

  it('is for signed-in admins only; an unknown provider or mailbox is refused', async () => {
    const agent = await addMember(svc, t, 'agent');
    expect((await start(agent.as)).status).toBe(403);
    const key = await newApiKey(svc.api, t, ['settings:write']);
    expect((await start({ token: key.key })).status).toBe(403);
    expect((await start(t.as, 'yahoo')).status).toBe(422);
    const missing = await start(t.as, 'google', { name: 'X', mailbox_id: '0190a2b4-0000-7000-8000-000000000000' });
    expect(missing.status).toBe(404);
    // Another workspace's mailbox answers exactly as a missing one.
    const other = await newTenant(svc.api, 'Other');
    provider.account = `other-${Date.now()}@gmail-like.test`;
    const f = await startFlow(other.as);
    const theirs = (await callback(await atProvider(f), f.cookie)).searchParams.get('connected')!;
    const foreign = await start(t.as, 'google', { name: 'X', mailbox_id: theirs });
    const absent = await start(t.as, 'google', { name: 'X', mailbox_id: '0190a2b4-0000-7000-8000-00000000dead' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(absent.body);
  });
});

describe('callback', () => {
  it('creates a Google mailbox; tokens are never in a response, an event, an audit entry or the log', async () => {
    const since = await latestSeqOf(svc, t);
    const account = `support-${Date.now()}@gmail-like.test`;
    const done = await connect(account);
    expect(done.origin + done.pathname).toBe(`${APP_URL}/settings/mailboxes`);
    const id = done.searchParams.get('connected');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(provider.requests.at(-1)).toEqual({ grant: 'authorization_code', ok: true });

    const m = await svc.api.get(`/v1/mailboxes/${id}`, t.as);
    expect(m.body).toMatchObject({
      email: account,
      inbound_kind: 'google',
      outbound_kind: 'google',
      status: 'active',
      config: { oauth_email: account },
    });
    const row = await svc.rt.deps.database.db
      .selectFrom('mailboxes')
      .select(['oauth_enc', 'oauth_expires_at'])
      .where('id', '=', id!)
      .executeTakeFirstOrThrow();
    expect(row.oauth_enc).toMatch(/^v1\./);
    expect(new Date(row.oauth_expires_at!).getTime()).toBeGreaterThan(Date.now() + 3000_000);

    const secrets = [...provider.access.keys(), ...provider.refresh.keys()];
    const seen = [
      m.text,
      JSON.stringify(row),
      (await svc.api.get('/v1/mailboxes', t.as)).text,
      JSON.stringify(await eventsAfterOf(svc, t, since)),
      (await svc.api.get('/v1/audit-logs', t.as)).text,
      svc.logs.join('\n'),
    ].join('\n');
    for (const s of secrets) expect(seen).not.toContain(s);
    const events = await eventsAfterOf(svc, t, since);
    expect(events.some((e) => e.type === 'mailbox.created' && e.data.mailbox.id === id)).toBe(true);
  });

  it('refuses a wrong, expired, or other session’s state, and a state without its browser cookie', async () => {
    provider.account = 'someone@gmail-like.test';
    // The flow runs in a second session of the owner's (revoked at the end of this test).
    const login = await svc.api.post('/v1/auth/login', { email: t.owner.email, password: t.owner.password });
    expect(login.status).toBe(200);
    const f = await startFlow({ token: login.body.access_token, workspace: t.workspaceId });
    const back = await atProvider(f);
    const error = (u: URL) => u.searchParams.get('error');

    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')!.slice(0, -4)}AAAA`);
    expect(error(await callback(tampered, f.cookie))).toBe('invalid_state');

    // No cookie: another browser.
    expect(error(await callback(back, null))).toBe('invalid_state');

    // Another flow's cookie (the same admin's other session): the challenge does not match.
    const other = await startFlow();
    expect(error(await callback(back, other.cookie))).toBe('invalid_state');

    // Expired: the same claims, signed ten minutes ago.
    const claims = JSON.parse(Buffer.from(back.searchParams.get('state')!.split('.')[1]!, 'base64url').toString());
    const { token: old } = await svc.rt.deps.tokens.sign({ ...claims, purpose: 'mailbox_oauth' }, -1);
    const expired = new URL(back);
    expired.searchParams.set('state', old);
    expect(error(await callback(expired, f.cookie))).toBe('invalid_state');

    // The admin's session ended since: refused even with the right cookie.
    await svc.rt.deps.database.db
      .updateTable('sessions')
      .set({ revoked_at: new Date() })
      .where('id', '=', claims.sid)
      .execute();
    expect(error(await callback(back, f.cookie))).toBe('session_expired');
    // The code was never exchanged.
    expect(provider.grants.get(back.searchParams.get('code')!)?.used).toBe(false);
  });

  it('passes the provider’s refusal on as access_denied', async () => {
    const f = await startFlow();
    const to = new URL(`${svc.url}/v1/mailboxes/oauth/google/callback`);
    to.searchParams.set('error', 'access_denied');
    to.searchParams.set('state', f.url.searchParams.get('state')!);
    const done = await callback(to, f.cookie);
    expect(done.searchParams.get('error')).toBe('access_denied');
  });

  it('the token endpoint checks the PKCE verifier: a wrong one exchanges nothing', async () => {
    provider.account = 'pkce@gmail-like.test';
    const f = await startFlow();
    const back = await atProvider(f);
    // The right state with a cookie holding another verifier is refused before the exchange;
    // exchanging with a wrong verifier directly is refused by the provider.
    const r = await fetch(`${provider.base}/google/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: f.url.searchParams.get('redirect_uri')!,
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        code_verifier: b64url(randomBytes(32)),
      }),
    });
    expect(r.status).toBe(400);
    expect(provider.requests.at(-1)).toEqual({ grant: 'authorization_code', ok: false, why: 'invalid_grant' });
  });

  it('Microsoft: the account comes from the signed id_token; a forged one is refused', async () => {
    const account = `help-${Date.now()}@contoso-like.test`;
    const done = await connect(account, 'microsoft');
    const id = done.searchParams.get('connected');
    expect(id).toBeTruthy();
    const m = await svc.api.get(`/v1/mailboxes/${id}`, t.as);
    expect(m.body).toMatchObject({ inbound_kind: 'microsoft', outbound_kind: 'microsoft', email: account });

    provider.forge = true;
    try {
      const bad = await connect(`forged-${Date.now()}@contoso-like.test`, 'microsoft');
      expect(bad.searchParams.get('error')).toBe('provider_error');
    } finally {
      provider.forge = false;
    }
  });

  it('reconnects a mailbox with the same account, and refuses another account', async () => {
    const account = `reconnect-${Date.now()}@gmail-like.test`;
    const id = (await connect(account)).searchParams.get('connected')!;
    const before = await svc.rt.deps.database.db
      .selectFrom('mailboxes')
      .select('oauth_enc')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const again = await connect(account, 'google', { name: 'Support', mailbox_id: id });
    expect(again.searchParams.get('connected')).toBe(id);
    const after = await svc.rt.deps.database.db
      .selectFrom('mailboxes')
      .select('oauth_enc')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(after.oauth_enc).not.toBe(before.oauth_enc);
    const wrong = await connect(`someone-else-${Date.now()}@gmail-like.test`, 'google', {
      name: 'Support',
      mailbox_id: id,
    });
    expect(wrong.searchParams.get('error')).toBe('account_mismatch');
  });
});

describe('sending from a Google mailbox', () => {
  it('sends a reply over SMTP with XOAUTH2 (the account and a fresh access token), and marks it sent', async () => {
    const account = `send-${Date.now()}@gmail-like.test`;
    const id = (await connect(account)).searchParams.get('connected')!;
    const customer = `customer-${Date.now()}@example.net`;
    const r = await svc.api.post(
      '/v1/tickets',
      {
        subject: 'Your order',
        channel: 'email',
        mailbox_id: id,
        contact: { email: customer, name: 'Cus Tomer' },
        body_html: '<p>It ships today.</p>',
      },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    await expect.poll(() => smtpMail.filter((m) => m.to.includes(customer)).length, { timeout: 20_000 }).toBe(1);
    const got = smtpMail.find((m) => m.to.includes(customer))!;
    expect(got.from).toBe(account);
    expect(got.text).toContain('It ships today.');
    expect(smtpLogins.filter((l) => l.user === account)).toEqual([{ user: account, ok: true }]);
    await expect
      .poll(
        async () => {
          const ms = await svc.api.get(`/v1/tickets/${r.body.id}/messages`, t.as);
          return ms.body.data?.[0]?.delivery_status;
        },
        { timeout: 20_000 },
      )
      .toBe('sent');
  });
});

describe('access tokens', () => {
  it('are refreshed with the refresh_token grant when they expire', async () => {
    const account = `refresh-${Date.now()}@gmail-like.test`;
    const id = (await connect(account)).searchParams.get('connected')!;
    const db = svc.rt.deps.database.db;
    const ref = { workspaceId: t.workspaceId, id };
    const first = await accessTokenFor(svc.rt.deps, ref);
    expect(provider.access.get(first)?.account).toBe(account);
    const refreshes = () => provider.requests.filter((r) => r.grant === 'refresh_token' && r.ok).length;
    const n = refreshes();
    expect(await accessTokenFor(svc.rt.deps, ref)).toBe(first); // still valid: no refresh

    await db
      .updateTable('mailboxes')
      .set({ oauth_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    const [a, b] = await Promise.all([accessTokenFor(svc.rt.deps, ref), accessTokenFor(svc.rt.deps, ref)]);
    expect(a).toBe(b);
    expect(a).not.toBe(first);
    expect(refreshes()).toBe(n + 1); // one refresh for both callers
    const row = await db
      .selectFrom('mailboxes')
      .select('oauth_expires_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(new Date(row.oauth_expires_at!).getTime()).toBeGreaterThan(Date.now() + 3000_000);
    // Google sent no new refresh token: the old one is kept and still works.
    await db
      .updateTable('mailboxes')
      .set({ oauth_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    const c = await accessTokenFor(svc.rt.deps, ref);
    expect(c).not.toBe(a);
    expect(refreshes()).toBe(n + 2);

    // A revoked authorization: the error says to reconnect, without a secret.
    provider.refresh.clear();
    await db
      .updateTable('mailboxes')
      .set({ oauth_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    await expect(accessTokenFor(svc.rt.deps, ref)).rejects.toThrow(/invalid_grant.*reconnect/);
  });

  it.skipIf(Boolean(imapMissing))(
    'poll a Google mailbox over IMAP XOAUTH2 (Dovecot) and pass the test route',
    async () => {
      const account = imap!.newUser('google');
      await imap!.append(account, rawMail({ to: account, subject: 'Over XOAUTH2' }));
      const id = (await connect(account)).searchParams.get('connected')!;
      const rows = await (async () => {
        const end = Date.now() + 20_000;
        for (;;) {
          const r = await svc.rt.deps.database.db
            .selectFrom('inbound_emails')
            .select(['source', 'imap_uid'])
            .where('mailbox_id', '=', id)
            .execute();
          if (r.length > 0 || Date.now() > end) return r;
          await new Promise((done) => setTimeout(done, 100));
        }
      })();
      expect(rows).toEqual([{ source: 'google', imap_uid: 1 }]);
      expect(provider.introspections).toBeGreaterThan(0);
      const test = await svc.api.post(`/v1/mailboxes/${id}/test`, undefined, t.as);
      expect(test.body.inbound).toEqual({ ok: true, error: null });
    },
  );
});
