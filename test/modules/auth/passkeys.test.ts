// Passkeys over HTTP with a software authenticator making real signatures: registration (name,
// list, delete), sign-in with discoverable credentials and email-first, native sessions, no
// two-factor step, audit entries, and issue 38's bad input: a reused or expired challenge, a
// cloned authenticator (counter not growing), a passkey of another person, a wrong origin or
// signature — each refused with the error body, nothing created, nothing signed in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorBody, type Service, startService, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';
import { SoftAuthenticator } from '../../support/webauthn-authenticator.js';

let svc: Service;
let own: OwnDatabase;
let origin: string;
beforeAll(async () => {
  own = await ownDatabase('auth_passkeys');
  svc = await startService(
    { ...own.env, PUBLIC_URL: 'https://help.example.test', SIGNIN_MAX_FAILURES_PER_IP: '1000' },
    { jobs: false },
  );
  origin = svc.rt.deps.config.publicUrl.replace(/\/$/, '');
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

const PASSWORD = 'correct horse battery';
const NATIVE = { 'svc-client': 'ios/3.1.0' };

async function person(name = 'Pat Passkey') {
  const email = `${unique('pk')}@example.com`;
  const r = await svc.api.post('/v1/auth/register', { email, password: PASSWORD, name });
  expect(r.status).toBe(201);
  return { userId: r.body.user.id as string, email, token: r.body.access_token as string };
}

async function addPasskey(p: { token: string }, auth: SoftAuthenticator, name = 'Laptop') {
  const o = await svc.api.post('/v1/me/passkeys/options', undefined, { token: p.token });
  expect(o.status, o.text).toBe(200);
  const { json, credential } = auth.create(o.body);
  const r = await svc.api.post('/v1/me/passkeys', { name, response: json }, { token: p.token });
  expect(r.status, r.text).toBe(201);
  return { passkey: r.body, credential, options: o.body, json };
}

const signInOptions = (body: Record<string, unknown> = {}) => svc.api.post('/v1/auth/passkey/options', body);

const passkeyCount = async (userId: string) =>
  (await svc.rt.deps.database.db.selectFrom('passkeys').select('id').where('user_id', '=', userId).execute()).length;
const sessionCount = async (userId: string) =>
  (await svc.rt.deps.database.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).length;

describe('registering passkeys', () => {
  it('registers, lists and deletes a named passkey, with audit entries', async () => {
    const p = await person();
    const ws = await svc.api.post('/v1/workspaces', { name: 'Pat space' }, { token: p.token });
    expect(ws.status, ws.text).toBe(201);
    const auth = new SoftAuthenticator(origin);
    const { passkey, options } = await addPasskey(p, auth, '  Work laptop ');
    expect(options.rp.id).toBe('help.example.test');
    expect(options.authenticatorSelection.residentKey).toBe('required');
    expect(passkey).toMatchObject({ name: 'Work laptop', last_used_at: null });
    const list = await svc.api.get('/v1/me/passkeys', { token: p.token });
    expect(list.body.data.map((k: any) => k.id)).toEqual([passkey.id]);

    // The second options exclude the registered credential.
    const again = await svc.api.post('/v1/me/passkeys/options', undefined, { token: p.token });
    expect(again.body.excludeCredentials.map((c: any) => c.id)).toEqual([auth.credentials[0]!.id]);

    const del = await svc.api.delete(`/v1/me/passkeys/${passkey.id}`, { token: p.token });
    expect(del.status).toBe(204);
    expect((await svc.api.get('/v1/me/passkeys', { token: p.token })).body.data).toEqual([]);
    const audit = await svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .select('action')
      .where('workspace_id', '=', ws.body.id)
      .where('entity_id', '=', passkey.id)
      .execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['passkey.deleted', 'passkey.registered']);
  });

  it('refuses a reused registration challenge, a wrong origin, another person’s challenge and a blank name', async () => {
    const p = await person();
    const other = await person('Olly Other');
    const auth = new SoftAuthenticator(origin);
    const { json } = await addPasskey(p, auth);
    // The same response again: its challenge is used up.
    const reused = await svc.api.post('/v1/me/passkeys', { name: 'Again', response: json }, { token: p.token });
    expect(isErrorBody(reused.body, 422, 'validation_failed'), reused.text).toBe(true);

    const o = await svc.api.post('/v1/me/passkeys/options', undefined, { token: p.token });
    const wrongOrigin = new SoftAuthenticator('https://evil.example.test').create(o.body).json;
    const r1 = await svc.api.post('/v1/me/passkeys', { name: 'Evil', response: wrongOrigin }, { token: p.token });
    expect(isErrorBody(r1.body, 422, 'validation_failed'), r1.text).toBe(true);

    // Someone else's challenge does not register a passkey for me.
    const theirs = await svc.api.post('/v1/me/passkeys/options', undefined, { token: other.token });
    const r2 = await svc.api.post(
      '/v1/me/passkeys',
      { name: 'Theirs', response: new SoftAuthenticator(origin).create(theirs.body).json },
      { token: p.token },
    );
    expect(isErrorBody(r2.body, 422, 'validation_failed'), r2.text).toBe(true);

    const o3 = await svc.api.post('/v1/me/passkeys/options', undefined, { token: p.token });
    const r3 = await svc.api.post(
      '/v1/me/passkeys',
      { name: '   ', response: auth.create(o3.body).json },
      { token: p.token },
    );
    expect(isErrorBody(r3.body, 422, 'validation_failed'), r3.text).toBe(true);

    expect(await passkeyCount(p.userId)).toBe(1);
    expect(await passkeyCount(other.userId)).toBe(0);
  });

  it('answers 404 for another person’s passkey and 401 without a session', async () => {
    const p = await person();
    const other = await person('Olly Other');
    const { passkey } = await addPasskey(p, new SoftAuthenticator(origin));
    const del = await svc.api.delete(`/v1/me/passkeys/${passkey.id}`, { token: other.token });
    expect(isErrorBody(del.body, 404, 'not_found'), del.text).toBe(true);
    expect(await passkeyCount(p.userId)).toBe(1);
    const anon = await svc.api.get('/v1/me/passkeys');
    expect(anon.status).toBe(401);
  });

  it('expires registration challenges after 5 minutes', async () => {
    const p = await person();
    const auth = new SoftAuthenticator(origin);
    const o = await svc.api.post('/v1/me/passkeys/options', undefined, { token: p.token });
    await svc.rt.deps.database.db
      .updateTable('passkey_challenges')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('challenge', '=', o.body.challenge)
      .execute();
    const r = await svc.api.post(
      '/v1/me/passkeys',
      { name: 'Late', response: auth.create(o.body).json },
      { token: p.token },
    );
    expect(isErrorBody(r.body, 422, 'validation_failed'), r.text).toBe(true);
    expect(await passkeyCount(p.userId)).toBe(0);
  });
});

describe('signing in with a passkey', () => {
  it('signs in with a discoverable credential (no email) and sets the refresh cookie', async () => {
    const p = await person();
    const auth = new SoftAuthenticator(origin);
    const { passkey } = await addPasskey(p, auth);
    const o = await signInOptions();
    expect(o.status, o.text).toBe(200);
    expect(o.body.options.rpId).toBe('help.example.test');
    expect(o.body.options.allowCredentials ?? []).toEqual([]);
    const r = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o.body.challenge_id,
      response: auth.get(o.body.options),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.id).toBe(p.userId);
    expect(r.body.refresh_token).toBeUndefined();
    expect(r.headers.get('set-cookie')).toContain(`svc_rt_${p.userId}=`);
    const me = await svc.api.get('/v1/me', { token: r.body.access_token });
    expect(me.body.id).toBe(p.userId);
    const list = await svc.api.get('/v1/me/passkeys', { token: r.body.access_token });
    expect(list.body.data[0].id).toBe(passkey.id);
    expect(list.body.data[0].last_used_at).not.toBeNull();
  });

  it('signs in email-first (allowCredentials), natively with the refresh token in the body, without two-factor', async () => {
    const p = await person();
    const auth = new SoftAuthenticator(origin);
    await addPasskey(p, auth);
    // Turn two-factor on: a passkey sign-in still asks no code.
    await svc.rt.deps.database.db.updateTable('users').set({ mfa_enabled: true }).where('id', '=', p.userId).execute();
    const o = await signInOptions({ email: p.email.toUpperCase() });
    expect(o.body.options.allowCredentials.map((c: any) => c.id)).toEqual([auth.credentials[0]!.id]);
    const r = await svc.api.post(
      '/v1/auth/passkey',
      { challenge_id: o.body.challenge_id, response: auth.get(o.body.options) },
      { headers: NATIVE },
    );
    expect(r.status, r.text).toBe(200);
    expect(typeof r.body.refresh_token).toBe('string');
    expect(r.body.mfa_required).toBeUndefined();
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('an unknown email answers the same shape', async () => {
    const o = await signInOptions({ email: `${unique('nobody')}@example.com` });
    expect(o.status).toBe(200);
    expect(typeof o.body.challenge_id).toBe('string');
  });

  it('refuses a reused challenge, an expired one and an unknown one (401, nothing signed in)', async () => {
    const p = await person();
    const auth = new SoftAuthenticator(origin);
    await addPasskey(p, auth);
    const before = await sessionCount(p.userId);
    const o = await signInOptions();
    const ok = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o.body.challenge_id,
      response: auth.get(o.body.options),
    });
    expect(ok.status).toBe(200);
    const reused = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o.body.challenge_id,
      response: auth.get(o.body.options),
    });
    expect(isErrorBody(reused.body, 401, 'unauthorized'), reused.text).toBe(true);

    const o2 = await signInOptions();
    await svc.rt.deps.database.db
      .updateTable('passkey_challenges')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', o2.body.challenge_id)
      .execute();
    const expired = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o2.body.challenge_id,
      response: auth.get(o2.body.options),
    });
    expect(isErrorBody(expired.body, 401, 'unauthorized'), expired.text).toBe(true);

    const unknown = await svc.api.post('/v1/auth/passkey', {
      challenge_id: '00000000-0000-4000-8000-000000000000',
      response: auth.get(o2.body.options),
    });
    expect(isErrorBody(unknown.body, 401, 'unauthorized'), unknown.text).toBe(true);
    expect(await sessionCount(p.userId)).toBe(before + 1);
  });

  it('refuses a cloned authenticator (counter not growing) and audits it', async () => {
    const p = await person();
    const ws = await svc.api.post('/v1/workspaces', { name: 'Clone watch' }, { token: p.token });
    const auth = new SoftAuthenticator(origin);
    const { passkey } = await addPasskey(p, auth);
    const o1 = await signInOptions();
    const first = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o1.body.challenge_id,
      response: auth.get(o1.body.options, { counter: 5 }),
    });
    expect(first.status, first.text).toBe(200);
    const before = await sessionCount(p.userId);
    const o2 = await signInOptions();
    const clone = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o2.body.challenge_id,
      response: auth.get(o2.body.options, { counter: 5 }),
    });
    expect(isErrorBody(clone.body, 401, 'unauthorized'), clone.text).toBe(true);
    expect(clone.headers.get('set-cookie')).toBeNull();
    expect(await sessionCount(p.userId)).toBe(before);
    const audit = await svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .select('action')
      .where('workspace_id', '=', ws.body.id)
      .where('entity_id', '=', passkey.id)
      .execute();
    expect(audit.map((a) => a.action)).toContain('passkey.counter_mismatch');
    expect(audit.map((a) => a.action)).toContain('passkey.signed_in');
    // The person is told by mail (kept in the outbox: no SMTP_URL here).
    const mail = await svc.rt.deps.database.db
      .selectFrom('mail_outbox')
      .select(['subject', 'to_addresses'])
      .where('workspace_id', '=', ws.body.id)
      .execute();
    expect(mail).toContainEqual({ subject: 'A sign-in with your passkey was refused', to_addresses: [p.email] });
  });

  it('refuses a passkey of another person on the email-first path, a bad signature and a wrong origin', async () => {
    const p = await person();
    const other = await person('Olly Other');
    const mine = new SoftAuthenticator(origin);
    const theirs = new SoftAuthenticator(origin);
    await addPasskey(p, mine);
    await addPasskey(other, theirs);
    const before = await sessionCount(other.userId);

    // Options for p's email, answered with other's passkey.
    const o = await signInOptions({ email: p.email });
    const r1 = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o.body.challenge_id,
      response: theirs.get(o.body.options, { credential: theirs.credentials[0]! }),
    });
    expect(isErrorBody(r1.body, 401, 'unauthorized'), r1.text).toBe(true);

    // other's credential id signed with my key: the signature does not verify.
    const o2 = await signInOptions();
    const r2 = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o2.body.challenge_id,
      response: theirs.get(o2.body.options, {
        credential: theirs.credentials[0]!,
        privateKey: mine.credentials[0]!.privateKey,
      }),
    });
    expect(isErrorBody(r2.body, 401, 'unauthorized'), r2.text).toBe(true);

    const o3 = await signInOptions();
    const r3 = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o3.body.challenge_id,
      response: theirs.get(o3.body.options, { origin: 'https://evil.example.test' }),
    });
    expect(isErrorBody(r3.body, 401, 'unauthorized'), r3.text).toBe(true);
    expect(await sessionCount(other.userId)).toBe(before);
  });

  it('refuses an unknown passkey and malformed bodies', async () => {
    const o = await signInOptions();
    const stranger = new SoftAuthenticator(origin);
    const reg = await svc.api.post('/v1/me/passkeys/options', undefined, { token: (await person()).token });
    stranger.create(reg.body); // never sent to the service
    const r = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o.body.challenge_id,
      response: stranger.get(o.body.options),
    });
    expect(isErrorBody(r.body, 401, 'unauthorized'), r.text).toBe(true);
    const bad = await svc.api.post('/v1/auth/passkey', { challenge_id: 'nope', response: {} });
    expect(isErrorBody(bad.body, 422, 'validation_failed'), bad.text).toBe(true);
  });
});

describe('sign-in limits', () => {
  it('counts refused passkey sign-ins against the account: 429 rate_limited past the limit, even with a good signature', async () => {
    const p = await person();
    const auth = new SoftAuthenticator(origin);
    await addPasskey(p, auth);
    const limit = svc.rt.deps.config.signin.maxFailuresPerAccount;
    for (let i = 0; i < limit; i++) {
      const o = await signInOptions();
      const r = await svc.api.post('/v1/auth/passkey', {
        challenge_id: o.body.challenge_id,
        response: auth.get(o.body.options, { origin: 'https://evil.example.test' }),
      });
      expect(r.status).toBe(401);
    }
    const o = await signInOptions();
    const r = await svc.api.post('/v1/auth/passkey', {
      challenge_id: o.body.challenge_id,
      response: auth.get(o.body.options),
    });
    expect(isErrorBody(r.body, 429, 'rate_limited'), r.text).toBe(true);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
