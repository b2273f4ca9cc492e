// /v1/mailboxes, part 3 (part 1: mailboxes.test.ts; the shared setup: setup.ts): the
// connection test (POST /v1/mailboxes/{id}/test) against stand-in SMTP and IMAP servers, and
// INBOUND_DOMAIN.

import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { newTenant, type Service, unique } from '../../support/helpers.js';
import { closedPort, IMAP_PASSWORD, type Imap, mailboxesSuite, SMTP_PASSWORD, SMTP_USER, type Smtp } from './setup.js';

const suite = mailboxesSuite();
const { create, imapBody } = suite;
let svc: Service;
let smtpOpen: Smtp;
let smtpAuth: Smtp;
let imap: Imap;
beforeAll(() => {
  ({ svc, smtpOpen, smtpAuth, imap } = suite);
});

describe('POST /v1/mailboxes/{id}/test', () => {
  it('logs in to a real SMTP server with AUTH and to an IMAP server, and reports ok', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, imapBody());
    const loginsBefore = smtpAuth.logins.length;
    const sessionsBefore = imap.sessions.length;
    const r = await svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, t.as);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ inbound: { ok: true, error: null }, outbound: { ok: true, error: null } });
    expect(smtpAuth.logins.slice(loginsBefore)).toEqual([{ username: SMTP_USER, password: SMTP_PASSWORD }]);
    expect(imap.logins.at(-1), imap.commands.join()).toContain(IMAP_PASSWORD);
    // The check's own connection ends with LOGOUT. (Other test files' services on a shared
    // PostgreSQL may poll this file's mailboxes meanwhile, so the server's last command overall
    // can be theirs.)
    const since = imap.sessions.slice(sessionsBefore);
    expect(
      since.some((c) => c.includes('LOGIN') && c.at(-1) === 'LOGOUT'),
      since.map((c) => c.join()).join(' | '),
    ).toBe(true);
    // A test only reports: the mailbox is unchanged.
    expect((await svc.api.get(`/v1/mailboxes/${m.id}`, t.as)).body).toEqual(m);
  });

  it('reports wrong passwords and refused connections as errors without the password', async () => {
    const t = await newTenant(svc.api);
    const port = await closedPort();
    const wrong = 'Wrong-Pa55word-31415';
    const m = await create(
      t,
      imapBody({ password: wrong, smtp_password: wrong, config: { ...imapBody().config, imap_port: imap.port } }),
    );
    const r = await svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, t.as);
    expect(r.status).toBe(200);
    expect(r.body.inbound.ok).toBe(false);
    expect(r.body.outbound.ok).toBe(false);
    expect(r.body.inbound.error).toMatch(/auth|credentials|login/i);
    expect(r.body.outbound.error).toMatch(/auth|invalid|535/i);
    expect(smtpAuth.logins.at(-1)).toEqual({ username: SMTP_USER, password: wrong });
    expect(JSON.stringify(r.body)).not.toContain(wrong);
    expect(svc.logs.join('\n')).not.toContain(wrong);

    const closed = await create(
      t,
      imapBody({
        email: 'closed@acme.test',
        config: { ...imapBody().config, imap_port: port, smtp_port: port },
      }),
    );
    const c = await svc.api.post(`/v1/mailboxes/${closed.id}/test`, undefined, t.as);
    expect(c.status).toBe(200);
    expect(c.body.inbound).toEqual({ ok: false, error: expect.stringMatching(/ECONNREFUSED/) });
    expect(c.body.outbound).toEqual({ ok: false, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('forwarding mailboxes: inbound ok; SMTP without AUTH; the system mailer (SMTP_URL)', async () => {
    const t = await newTenant(svc.api);
    const plain = await create(t, {
      outbound_kind: 'smtp',
      config: { smtp_host: '127.0.0.1', smtp_port: smtpOpen.port, smtp_tls: 'none' },
    });
    const r = await svc.api.post(`/v1/mailboxes/${plain.id}/test`, undefined, t.as);
    expect(r.body).toEqual({ inbound: { ok: true, error: null }, outbound: { ok: true, error: null } });

    const system = await create(t, { email: 'system@acme.test' });
    const s = await svc.api.post(`/v1/mailboxes/${system.id}/test`, undefined, t.as);
    expect(s.body).toEqual({ inbound: { ok: true, error: null }, outbound: { ok: true, error: null } });

    // STARTTLS demanded from a server that does not offer it: a failure, never a plain-text fallback.
    const tls = await svc.api.patch(`/v1/mailboxes/${plain.id}`, { config: { smtp_tls: 'starttls' } }, t.as);
    expect(tls.status).toBe(200);
    const t2 = await svc.api.post(`/v1/mailboxes/${plain.id}/test`, undefined, t.as);
    expect(t2.body.outbound.ok).toBe(false);
    expect(t2.body.outbound.error).toMatch(/STARTTLS/i);
  });

  it('checks the address again when connecting: without MAIL_ALLOW_PRIVATE a loopback server is never reached', async () => {
    const t = await newTenant(svc.api);
    // Its own IMAP user, and paused at once, so that a login of another file's poller (shared
    // PostgreSQL) cannot be taken for one of this check.
    const user = `${unique('nobody')}@acme.test`;
    const m = await create(t, imapBody({ config: { ...imapBody().config, imap_username: user } }));
    expect((await svc.api.patch(`/v1/mailboxes/${m.id}`, { status: 'disabled' }, t.as)).status).toBe(200);
    const logins = smtpAuth.logins.length;
    const imapLogins = imap.logins.length;
    svc.rt.deps.config.mailAllowPrivate = false;
    try {
      const r = await svc.api.post(`/v1/mailboxes/${m.id}/test`, undefined, t.as);
      expect(r.status).toBe(200);
      expect(r.body.inbound).toEqual({ ok: false, error: expect.stringContaining('loopback') });
      expect(r.body.outbound).toEqual({ ok: false, error: expect.stringContaining('loopback') });
    } finally {
      svc.rt.deps.config.mailAllowPrivate = true;
    }
    expect(smtpAuth.logins.length).toBe(logins);
    expect(imap.logins.slice(imapLogins).filter((l) => l.includes(user))).toEqual([]);
  });
});

describe('INBOUND_DOMAIN', () => {
  const base = { DATABASE_IN_MEMORY: 'true', SECRET_KEY: 'k'.repeat(40), INBOUND_SECRET: 's'.repeat(20) };
  it('defaults to the host of PUBLIC_URL (localhost for an IP address) and refuses what is not a domain', () => {
    expect(loadConfig({ ...base, PUBLIC_URL: 'https://help.example.com:8443' }).inboundDomain).toBe('help.example.com');
    expect(loadConfig({ ...base, PUBLIC_URL: 'http://127.0.0.1:3000' }).inboundDomain).toBe('localhost');
    expect(loadConfig({ ...base }).inboundDomain).toBe('localhost');
    expect(loadConfig({ ...base, INBOUND_DOMAIN: 'In.Example.com.' }).inboundDomain).toBe('in.example.com');
    for (const bad of ['not a domain', 'a@b.com', '-x.com', 'x'.repeat(64) + '.com']) {
      expect(() => loadConfig({ ...base, INBOUND_DOMAIN: bad }), bad).toThrow(ConfigError);
    }
    expect(loadConfig({ ...base }).mailAllowPrivate).toBe(false);
  });
});
