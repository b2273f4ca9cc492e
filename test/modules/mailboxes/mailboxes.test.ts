// /v1/mailboxes: the Mailbox shape with its generated forwarding address, write-only passwords
// sealed at rest (never in a response, an event, an audit entry or the log), config and kind
// rules, trusted_form_senders, sanitized HTML, status by hand, who may read and write,
// other workspaces' ids, mailbox.* events and audit entries, and POST /{id}/test against real
// servers on loopback: an SMTP server (smtp-server) with and without AUTH, a small IMAP server,
// and a closed port. The servers and the service: setup.ts.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { passwordContext, smtpPasswordContext } from '../../../src/modules/mailboxes/service.js';
import { eventsAfterOf, isErrorBody, latestSeqOf, newTenant, type Service } from '../../support/helpers.js';
import { IMAP_PASSWORD, type Imap, mailboxesSuite, SMTP_PASSWORD, SMTP_USER, type Smtp } from './setup.js';

const suite = mailboxesSuite();
const { create, imapBody, rowOf, auditOf, stateOf } = suite;
let svc: Service;
let smtpAuth: Smtp;
let imap: Imap;
beforeAll(() => {
  ({ svc, smtpAuth, imap } = suite);
});
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEYS = [
  'auto_reply_enabled',
  'auto_reply_html',
  'auto_reply_subject',
  'config',
  'created_at',
  'display_name',
  'email',
  'forwarding_address',
  'id',
  'inbound_kind',
  'last_error',
  'last_synced_at',
  'name',
  'outbound_kind',
  'signature_html',
  'status',
  'team_id',
  'trusted_form_senders',
  'updated_at',
];

describe('creating and reading mailboxes', () => {
  it('creates a forwarding mailbox with defaults, a generated forwarding address, mailbox.created and an audit entry', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/mailboxes', { name: '  Support  ', email: 'Support@Acme.TEST' }, t.as);
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/mailboxes/${r.body.id}`);
    expect(Object.keys(r.body).sort()).toEqual(KEYS);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Support',
      email: 'support@acme.test',
      display_name: 'Support',
      inbound_kind: 'forwarding',
      outbound_kind: 'system',
      forwarding_address: expect.stringMatching(/^support-[a-z2-7]{10}@in\.helpdesk\.test$/),
      config: {},
      team_id: null,
      signature_html: '',
      auto_reply_enabled: false,
      auto_reply_subject: '',
      auto_reply_html: '',
      status: 'active',
      last_error: null,
      last_synced_at: null,
      trusted_form_senders: [],
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.body.created_at,
    });
    // Another mailbox of the same name gets another address.
    const second = await create(t, { email: 'support@other.test' });
    expect(second.forwarding_address).not.toBe(r.body.forwarding_address);

    expect((await svc.api.get(`/v1/mailboxes/${r.body.id}`, t.as)).body).toEqual(r.body);
    expect((await svc.api.get(`/v1/mailboxes/${r.body.id.toUpperCase()}`, t.as)).body).toEqual(r.body);
    const list = await svc.api.get('/v1/mailboxes', t.as);
    expect(list.body).toEqual({ data: [second, r.body], next_cursor: null });
    const page = await svc.api.get('/v1/mailboxes?limit=1', t.as);
    expect(page.body.data).toEqual([second]);
    const next = await svc.api.get(`/v1/mailboxes?limit=1&cursor=${page.body.next_cursor}`, t.as);
    expect(next.body).toEqual({ data: [r.body], next_cursor: null });

    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['mailbox.created', 'mailbox.created']);
    expect(events[0].data).toEqual({ mailbox: r.body });
    expect(events[0].visibility).toBe('agents');
    const audit = await auditOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['mailbox.created']);

    // The forwarding address routes to the mailbox (what inbound mail will use), any case.
    const { mailboxForAddress } = await import('../../../src/modules/mailboxes/service.js');
    expect(await mailboxForAddress(svc.rt.deps.database.db, r.body.forwarding_address.toUpperCase())).toEqual({
      workspaceId: t.workspaceId,
      mailboxId: r.body.id,
    });
  });

  it('keeps passwords write-only: sealed in the database, never in a response, event, audit entry or log line', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/mailboxes', imapBody(), t.as);
    expect(r.status).toBe(201);
    expect(r.body.config).toEqual({
      imap_host: '127.0.0.1',
      imap_port: imap.port,
      imap_tls: 'none',
      smtp_host: '127.0.0.1',
      smtp_port: smtpAuth.port,
      smtp_username: SMTP_USER,
      smtp_tls: 'none',
    });
    const patched = await svc.api.patch(`/v1/mailboxes/${r.body.id}`, { smtp_password: `${SMTP_PASSWORD}-2` }, t.as);
    expect(patched.status).toBe(200);
    await svc.api.patch(`/v1/mailboxes/${r.body.id}`, { smtp_password: SMTP_PASSWORD }, t.as);

    const row = (await rowOf(t, r.body.id))!;
    for (const [column, plain, context] of [
      [row.password_enc, IMAP_PASSWORD, passwordContext(t.workspaceId, r.body.id)],
      [row.smtp_password_enc, SMTP_PASSWORD, smtpPasswordContext(t.workspaceId, r.body.id)],
    ] as const) {
      expect(column).toMatch(/^v1\./);
      expect(column).not.toContain(plain);
      expect(column).not.toContain(Buffer.from(plain).toString('base64'));
      expect(svc.rt.deps.secrets.open(column!, context)).toBe(plain);
      // Bound to this mailbox and field: another mailbox's context does not open it.
      expect(svc.rt.deps.secrets.open(column!, passwordContext(t.workspaceId, randomUUID()))).toBeNull();
    }
    expect(svc.rt.deps.secrets.open(row.password_enc!, smtpPasswordContext(t.workspaceId, r.body.id))).toBeNull();

    const everything = JSON.stringify([
      r.body,
      patched.body,
      (await svc.api.get(`/v1/mailboxes/${r.body.id}`, t.as)).body,
      (await svc.api.get('/v1/mailboxes', t.as)).body,
      await eventsAfterOf(svc, t, seq),
      await auditOf(t, r.body.id),
      (await svc.api.get('/v1/audit-logs', t.as)).body,
      svc.logs,
    ]);
    expect(everything).toContain(r.body.id);
    for (const secret of [IMAP_PASSWORD, SMTP_PASSWORD, `${SMTP_PASSWORD}-2`]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(everything).not.toContain('password_enc');
    const audit = await auditOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['mailbox.created', 'mailbox.updated', 'mailbox.updated']);
    expect(audit[1]!.data).toEqual({ smtp_password: 'set' });
  });

  it('sanitizes signature and auto-reply HTML and keeps subjects and From names on one line', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, {
      display_name: 'Acme\r\nBcc: victim@example.com',
      signature_html: '<p>Thanks, <b>Acme</b><script>alert(1)</script><img src=x onerror="alert(2)"></p>',
      auto_reply_enabled: true,
      auto_reply_subject: 'We got it\r\nBcc: victim@example.com',
      auto_reply_html: '<p onclick="steal()">We will answer soon.</p><iframe src="https://evil.test"></iframe>',
    });
    expect(m.signature_html).toContain('<b>Acme</b>');
    expect(m.signature_html).not.toMatch(/script|onerror|alert/);
    expect(m.auto_reply_html).toContain('We will answer soon.');
    expect(m.auto_reply_html).not.toMatch(/onclick|iframe|steal/);
    expect(m.display_name).toBe('Acme Bcc: victim@example.com');
    expect(m.auto_reply_subject).toBe('We got it Bcc: victim@example.com');
    expect(m.auto_reply_enabled).toBe(true);
    const p = await svc.api.patch(
      `/v1/mailboxes/${m.id}`,
      { signature_html: '<a href="javascript:alert(1)">x</a>' },
      t.as,
    );
    expect(p.status).toBe(200);
    expect(p.body.signature_html).not.toContain('javascript:');
  });

  it('assigns a team of the workspace; another workspace’s team is a 422; deleting the team clears it', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const team = await svc.api.post('/v1/teams', { name: 'Sales', private: false, member_ids: [] }, t.as);
    const foreign = await svc.api.post('/v1/teams', { name: 'Theirs', private: false, member_ids: [] }, other.as);
    const m = await create(t, { team_id: team.body.id });
    expect(m.team_id).toBe(team.body.id);
    const before = await stateOf(t);
    const r = await svc.api.post('/v1/mailboxes', { name: 'X', email: 'x@acme.test', team_id: foreign.body.id }, t.as);
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ location: 'body.team_id', message: 'no such team in this workspace' }]);
    expect(await stateOf(t)).toEqual(before);
    expect((await svc.api.delete(`/v1/teams/${team.body.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get(`/v1/mailboxes/${m.id}`, t.as)).body.team_id).toBeNull();
  });
});

describe('bad input', () => {
  it('answers 422 at the field for ports, TLS modes, hosts, missing settings and kinds, and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const m = await create(t, imapBody());
    const before = await stateOf(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ config: { imap_host: 'mail.acme.test', imap_port: 0 } }, 'body.config.imap_port'],
      [{ config: { smtp_port: 65536 } }, 'body.config.smtp_port'],
      [{ config: { smtp_port: 25.5 } }, 'body.config.smtp_port'],
      [{ config: { imap_tls: 'ssl' } }, 'body.config.imap_tls'],
      [{ config: { smtp_host: 'bad host!' } }, 'body.config.smtp_host'],
      [{ config: { imap_host: 'exa_mple..com' } }, 'body.config.imap_host'],
      [{ config: { smtp_host: '' } }, 'body.config.smtp_host'],
      [{ config: { pop3_host: 'x' } }, 'body.config.pop3_host'],
      [{ inbound_kind: 'pop3' }, 'body.inbound_kind'],
      [{ inbound_kind: 'imap', config: { imap_host: 'imap.acme.test' } }, 'body.password'],
      [{ inbound_kind: 'imap', password: IMAP_PASSWORD }, 'body.config.imap_host'],
      [{ outbound_kind: 'smtp' }, 'body.config.smtp_host'],
      [{ inbound_kind: 'google' }, 'body.inbound_kind'],
      [{ outbound_kind: 'microsoft' }, 'body.outbound_kind'],
      [{ email: 'not an address' }, 'body.email'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'x'.repeat(101) }, 'body.name'],
      [{ password: '' }, 'body.password'],
      [{ status: 'active' }, 'body.status'],
      [{ signature_html: 'x'.repeat(100_001) }, 'body.signature_html'],
      [{ team_id: 'not-a-uuid' }, 'body.team_id'],
    ];
    for (const [extra, location] of cases) {
      const r = await svc.api.post('/v1/mailboxes', { name: 'New', email: 'new@acme.test', ...extra }, t.as);
      expect(r.status, JSON.stringify(extra)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed'), JSON.stringify(extra)).toBe(true);
      expect(r.body.errors?.[0]?.location, JSON.stringify(extra)).toBe(location);
    }
    const patches: Array<[Record<string, unknown>, string]> = [
      [{ config: { imap_port: -1 } }, 'body.config.imap_port'],
      [{ config: { smtp_tls: 'STARTTLS' } }, 'body.config.smtp_tls'],
      [{ config: { imap_host: null } }, 'body.config.imap_host'],
      [{ password: null }, 'body.password'],
      [{ status: 'error' }, 'body.status'],
      [{ inbound_kind: 'microsoft' }, 'body.inbound_kind'],
      [{ forwarding_address: 'mine@acme.test' }, 'body.forwarding_address'],
      [{ id: randomUUID() }, 'body.id'],
      [{ config: { smtp_host: 'localhost:25' } }, 'body.config.smtp_host'],
    ];
    for (const [body, location] of patches) {
      const r = await svc.api.patch(`/v1/mailboxes/${m.id}`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors?.[0]?.location, JSON.stringify(body)).toBe(location);
    }
    expect(await stateOf(t)).toEqual(before);
  });

  it('answers 409 for an address the workspace already has (any case), and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const a = await create(t, { email: 'help@acme.test' });
    const b = await create(t, { email: 'sales@acme.test' });
    const before = await stateOf(t);
    const dup = await svc.api.post('/v1/mailboxes', { name: 'Again', email: 'HELP@acme.test' }, t.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    const move = await svc.api.patch(`/v1/mailboxes/${b.id}`, { email: 'help@acme.test' }, t.as);
    expect(move.status).toBe(409);
    expect(await stateOf(t)).toEqual(before);
    // Another workspace may use the same address.
    const other = await newTenant(svc.api);
    expect((await create(other, { email: 'help@acme.test' })).id).not.toBe(a.id);
  });

  it('refuses loopback and private servers unless MAIL_ALLOW_PRIVATE is on', async () => {
    const t = await newTenant(svc.api);
    svc.rt.deps.config.mailAllowPrivate = false;
    try {
      // Other spellings of a loopback address, and a name that resolves to one (this machine's
      // own names in /etc/hosts): refused when saved, not only when the service connects.
      const loopbackName = readFileSync('/etc/hosts', 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim().split(/\s+/))
        .filter(([address]) => address?.startsWith('127.'))
        .flatMap(([, ...names]) => names)
        .find((n) => n && !/localhost/i.test(n));
      expect(loopbackName, 'a name for a loopback address in /etc/hosts').toBeDefined();
      const otherSpellings = ['2130706433', '127.1', '0x7f.1'];
      const spellings = [...otherSpellings, loopbackName!];
      for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '[::1]', ...spellings]) {
        const r = await svc.api.post(
          '/v1/mailboxes',
          { name: 'L', email: 'l@acme.test', outbound_kind: 'smtp', config: { smtp_host: host } },
          t.as,
        );
        expect(r.status, host).toBe(422);
        expect(r.body.errors[0].location, host).toBe('body.config.smtp_host');
        expect(r.body.errors[0].message, host).toMatch(
          otherSpellings.includes(host) ? /IP address written another way/ : /MAIL_ALLOW_PRIVATE/,
        );
      }
      const ok = await svc.api.post(
        '/v1/mailboxes',
        { name: 'L', email: 'l@acme.test', outbound_kind: 'smtp', config: { smtp_host: 'smtp.example.com' } },
        t.as,
      );
      expect(ok.status).toBe(201);
      // A change to such a host is refused the same way, and changes nothing.
      for (const host of spellings) {
        const r = await svc.api.patch(`/v1/mailboxes/${ok.body.id}`, { config: { smtp_host: host } }, t.as);
        expect(r.status, host).toBe(422);
        expect(r.body.errors[0].location, host).toBe('body.config.smtp_host');
      }
      const after = await svc.api.get(`/v1/mailboxes/${ok.body.id}`, t.as);
      expect(after.body.config.smtp_host).toBe('smtp.example.com');
    } finally {
      svc.rt.deps.config.mailAllowPrivate = true;
    }
  });
});
