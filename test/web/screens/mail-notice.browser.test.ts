// Outgoing mail in the agent web app, in a real browser (test/support/app-harness.ts), on a service with no
// SMTP_URL: the owner is told at the top of every screen that outgoing mail is not set up (until
// dismissed, remembered after a reload) with a link to how to set it up; an agent sees on an email
// ticket that its replies are not leaving, and the composer says its reply was saved, not sent;
// the owner reads that reply in Settings → Outgoing mail, body and links; once the mailbox sends
// through a server of its own, the notice goes, "Send again" sends the reply (Sending…, then
// Sent, live), and a new reply is confirmed as queued, then sent. The SMTP server holds each mail
// until the test lets it through, so the in-between states are seen, not raced. axe-core on each
// screen; the actions by keyboard.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable } from '../../support/browser.js';
import { addMember, type Member } from '../../support/helpers.js';
import { readable } from '../../support/mail-catcher.js';

/** An SMTP server that takes each mail's data and answers only once the gate is open. */
async function gatedSmtp() {
  const received: Array<{ to: string[]; text: string }> = [];
  let open = true;
  let waiting: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const done = () => {
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            text: readable(Buffer.concat(chunks).toString('utf8')),
          });
          callback();
        };
        if (open) done();
        else waiting.push(done);
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    /** Mail is held from now on. */
    hold() {
      open = false;
    },
    /** Held mail goes through, and mail is taken at once again. */
    release() {
      open = true;
      const held = waiting;
      waiting = [];
      for (const done of held) done();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.runIf(browserAvailable())('outgoing mail in the app, without SMTP_URL', () => {
  let h: AppHarness;
  let owner: Page;
  let agentPage: Page;
  let agent: Member;
  let smtp: Awaited<ReturnType<typeof gatedSmtp>>;
  let mailboxId = '';
  let ticketNumber = 0;
  const contact = 'casey@customer.test';
  const api = () => h.svc.api;
  const as = () => h.tenant.as;

  beforeAll(async () => {
    smtp = await gatedSmtp();
    h = await startAppHarness(
      'app_mail',
      { MAIL_ALLOW_PRIVATE: 'true' },
      { email: { workers: 1, pollSeconds: 0.5, sweepMs: 500, jitter: 0, retryDelaysMs: [500], timeoutMs: 20_000 } },
    );
    // A mailbox that sends through the system mailer (the default kind), and an email ticket on it.
    const mb = await api().post(
      '/v1/mailboxes',
      { name: 'Support', display_name: 'Acme Support', email: 'support@acme.test' },
      as(),
    );
    expect(mb.status, mb.text).toBe(201);
    mailboxId = mb.body.id;
    const t = await api().post(
      '/v1/tickets',
      {
        subject: 'Printer on fire',
        channel: 'email',
        mailbox_id: mailboxId,
        contact: { email: contact, name: 'Casey' },
        kind: 'note',
        body_html: '<p>Casey called: the printer is on fire.</p>',
      },
      as(),
    );
    expect(t.status, t.text).toBe(201);
    ticketNumber = t.body.number;
    agent = await addMember(h.svc, h.tenant, 'agent', 'Ann Agent');
    ({ page: owner } = await h.newPage());
    ({ page: agentPage } = await h.newPage());
    await h.signIn(owner, h.tenant.owner);
    await h.signIn(agentPage, agent);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await smtp?.close();
  });

  it('tells the owner on every screen that mail is not set up, links to how, and stays dismissed', async () => {
    const notice = owner.getByRole('region', { name: 'Outgoing mail is not set up' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('kept in the outbox instead of being sent');
    expect(await h.violations(owner)).toBe('[]');
    // An agent is not shown it (they cannot set mail up).
    await agentPage.getByRole('navigation', { name: 'Views' }).waitFor();
    expect(await agentPage.getByRole('region', { name: 'Outgoing mail is not set up' }).count()).toBe(0);

    await notice.getByRole('link', { name: 'How to set up outgoing mail' }).click();
    await owner.waitForURL((u) => u.pathname === '/settings/outgoing-mail');
    await owner.getByRole('heading', { name: 'How to set up outgoing mail' }).waitFor();
    await owner.getByText('No mail kept.').waitFor();
    expect(await owner.getByRole('main').textContent()).toContain('SMTP_URL');
    expect(await h.violations(owner)).toBe('[]');

    // Dismissed by keyboard; gone after a reload too.
    await notice.getByRole('button', { name: 'Dismiss' }).focus();
    await owner.keyboard.press('Enter');
    await notice.waitFor({ state: 'detached' });
    await owner.reload();
    await owner.getByRole('heading', { name: 'Outgoing mail', exact: true }).waitFor();
    expect(await notice.count()).toBe(0);
  });

  it('shows an agent that replies are not leaving; the reply is saved, not sent; the owner reads it', async () => {
    await agentPage.goto(`${h.svc.url}/tickets/${ticketNumber}`);
    await agentPage.getByRole('heading', { name: `#${ticketNumber} Printer on fire` }).waitFor();
    const warning = agentPage.getByRole('note').filter({ hasText: 'Replies on this ticket are not leaving' });
    await warning.waitFor();
    expect(await warning.textContent()).toContain('Ask an admin to set up outgoing mail.');
    expect(await h.violations(agentPage)).toBe('[]');

    await agentPage.locator('#composer-text').click();
    await agentPage.keyboard.type('Unplug it. The manual is at https://example.com/manual');
    await agentPage.keyboard.press('Control+Enter');
    await agentPage
      .getByRole('status')
      .filter({ hasText: 'Reply saved, not sent: outgoing mail is not set up.' })
      .waitFor({ timeout: 20_000 });
    const reply = agentPage.locator('.message-outbound', { hasText: 'Unplug it.' });
    await reply.locator('.delivery-failed', { hasText: 'Saved, not sent: outgoing mail is not set up' }).waitFor();
    // Nothing to send again while mail is not set up.
    expect(await reply.getByRole('button', { name: 'Send again' }).count()).toBe(0);
    expect(await h.violations(agentPage)).toBe('[]');

    // The owner finds it in Settings → Outgoing mail, by subject and recipient, and opens it.
    await owner.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Outgoing mail' }).click();
    const row = owner.getByRole('row').filter({ hasText: 'Casey <casey@customer.test>' });
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('Reply');
    expect(await h.violations(owner)).toBe('[]');
    await row.getByRole('link', { name: /^Printer on fire \[#\d+-[a-z2-7]{10}\]$/ }).click();
    await owner.getByRole('heading', { name: /^Printer on fire \[#/ }).waitFor();
    const links = owner.getByRole('list', { name: 'Links in this mail' });
    expect(await links.getByRole('link').getAttribute('href')).toBe('https://example.com/manual');
    expect(await owner.getByRole('main').textContent()).toContain('Unplug it.');
    expect(await owner.getByRole('main').textContent()).toContain('Acme Support <support@acme.test>');
    expect(await h.violations(owner)).toBe('[]');
  });

  it('once the mailbox sends, "Send again" sends the reply live, and a new reply is queued, then sent', async () => {
    smtp.hold();
    const patched = await api().patch(
      `/v1/mailboxes/${mailboxId}`,
      { outbound_kind: 'smtp', config: { smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_tls: 'none' } },
      as(),
    );
    expect(patched.status, patched.text).toBe(200);
    // The mailbox's change reaches the page: the notice goes, the action comes.
    const warning = agentPage.getByRole('note').filter({ hasText: 'Replies on this ticket are not leaving' });
    await warning.waitFor({ state: 'detached', timeout: 10_000 });
    const reply = agentPage.locator('.message-outbound', { hasText: 'Unplug it.' });
    const again = reply.getByRole('button', { name: 'Send again' });
    await again.focus();
    await agentPage.keyboard.press('Enter');
    // Pending while the server holds the mail, then sent: both seen live.
    await reply.locator('.delivery-pending', { hasText: 'Sending…' }).waitFor();
    smtp.release();
    await reply.locator('.delivery-sent', { hasText: 'Sent' }).waitFor({ timeout: 20_000 });
    expect(smtp.received.filter((m) => m.to.includes(contact))).toHaveLength(1);
    expect(smtp.received[0]!.text).toContain('Unplug it.');

    // A new reply: queued while the server holds it, then sent.
    smtp.hold();
    await agentPage.locator('#composer-text').click();
    await agentPage.keyboard.type('A technician comes at 3 pm.');
    await agentPage.getByRole('button', { name: 'Send', exact: true }).click();
    await agentPage.getByRole('status').filter({ hasText: 'Reply queued: sending it now…' }).waitFor();
    smtp.release();
    await agentPage.getByRole('status').filter({ hasText: 'Reply sent.' }).waitFor({ timeout: 20_000 });
    expect(smtp.received.filter((m) => m.to.includes(contact))).toHaveLength(2);
    expect(await h.violations(agentPage)).toBe('[]');
  });

  it('logged no error in the pages', () => {
    // Signing in first tries the refresh cookie there is not yet: its 401 is the one failure expected.
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)/.test(e))).toEqual([]);
  });
});
