// The integrations screens of the agent web app in a real browser (test/support/app-harness.ts): a
// forwarding mailbox made in Mailboxes and a customer's mail to its forwarding address arriving
// live in the inbox; an automation made in the builder (a refused label shown at its action
// first) acting on a new ticket; an API key made, used once with its secret, revoked; a webhook
// to a loopback receiver: a delivery in its log with its body, a failed one retried from the
// screen; the audit log listing these, filtered; a notification (the owner assigned a ticket by a
// colleague over the API) arriving live in the bell, marked read. axe-core on each screen; the
// webhook's page at 360 px. SCREENSHOTS=1 writes settings-automations (the builder).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../src/webhooks.js';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { addMember } from '../../support/helpers.js';
import { CLIENT, type Provider, startProvider } from '../../support/oauth-provider.js';

const INBOUND_SECRET = 'test-inbound-secret-0123456789';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

describe.runIf(browserAvailable())('the integrations settings in a browser', () => {
  let h: AppHarness;
  let page: Page;
  let provider: Provider;
  let receiver: Server;
  let hookUrl = '';
  const received: Received[] = [];
  let failing = false;
  const as = () => h.tenant.as;
  const settings = async (rest: string) => {
    await page.goto(`${h.svc.url}/settings/${rest}`);
  };
  const noViolations = async () => expect(await h.violations(page)).toBe('[]');

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = failing ? 500 : 200;
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(failing ? 'broken' : 'ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    provider = await startProvider(0);
    h = await startAppHarness(
      'app_integrations',
      {
        INBOUND_DOMAIN: 'in.helpdesk.test',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // Google's OAuth at the stand-in (test/support/oauth-provider.ts); no IMAP poll of the mailbox made.
        GOOGLE_CLIENT_ID: CLIENT.id,
        GOOGLE_CLIENT_SECRET: CLIENT.secret,
        GOOGLE_AUTH_URL: `${provider.base}/google/authorize`,
        GOOGLE_TOKEN_URL: `${provider.base}/google/token`,
        GOOGLE_USERINFO_URL: `${provider.base}/google/userinfo`,
      },
      // One attempt per delivery: a failure is final at once (and can be retried from the screen).
      {
        webhooks: { retryDelaysMs: [], jitter: 0, pollSeconds: 0.5, batchWindowMs: 5 },
        imap: { maxPerProcess: 0 },
      },
    );
    const label = await h.svc.api.post('/v1/tags', { name: 'refund' }, as());
    expect(label.status, label.text).toBe(201);
    ({ page } = await h.newPage());
    await h.signIn(page, h.tenant.owner);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    receiver?.close();
    provider?.server.close();
  });

  it('makes a forwarding mailbox; mail to its forwarding address arrives live in the inbox', async () => {
    await settings('mailboxes');
    await page.getByText('No mailboxes yet.').waitFor();
    await noViolations();
    await page.getByLabel('Forwarding', { exact: true }).check();
    await page.getByLabel('Name', { exact: true }).fill('Support');
    await page.getByLabel('Email address').fill('support@acme.test');
    await page.getByRole('button', { name: 'Add mailbox' }).click();
    const address = page.getByLabel('Forwarding address');
    await address.waitFor();
    const forwarding = await address.inputValue();
    expect(forwarding).toMatch(/@in\.helpdesk\.test$/);
    await page.getByRole('link', { name: 'Support' }).waitFor();
    const list = await h.svc.api.get('/v1/mailboxes', as());
    expect(
      list.body.data.map((m: { email: string; forwarding_address: string }) => [m.email, m.forwarding_address]),
    ).toEqual([['support@acme.test', forwarding]]);
    await noViolations();

    // The connection check says what it found, in the row.
    await page.getByRole('button', { name: 'Check connection of Support' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /receiving/ })
      .waitFor();

    await page.goto(`${h.svc.url}/inbox`);
    await page.getByText('No tickets here.').waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    const raw = [
      'From: Casey Customer <casey@customer.test>',
      'To: support@acme.test',
      'Subject: Printer on fire',
      `Message-ID: <${randomUUID()}@customer.test>`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'My printer is on fire.',
      '',
    ].join('\r\n');
    const r = await h.svc.api.req('POST', `/v1/inbound/email?to=${encodeURIComponent(forwarding)}`, {
      raw,
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': INBOUND_SECRET },
    });
    expect(r.status, r.text).toBe(202);
    await page.getByRole('link', { name: /Printer on fire/ }).waitFor({ timeout: 20_000 });
  });

  it('connects a Google mailbox through the provider’s sign-in and back, and says why one is refused', async () => {
    provider.account = 'sales@acme-mail.test';
    await settings('mailboxes');
    await page.getByLabel('Google (Gmail, Workspace)').check();
    await page.getByLabel('Name', { exact: true }).fill('Sales');
    await page.getByRole('button', { name: 'Continue to Google' }).click();
    // The provider signs the account in and sends the browser back; the callback to the settings.
    await page.getByRole('status').filter({ hasText: 'Mailbox connected: Sales (sales@acme-mail.test)' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/settings/mailboxes');
    const made = (await h.svc.api.get('/v1/mailboxes', as())).body.data.find(
      (m: { email: string }) => m.email === 'sales@acme-mail.test',
    );
    expect(made).toMatchObject({ name: 'Sales', inbound_kind: 'google', outbound_kind: 'google' });
    expect(provider.requests).toContainEqual({ grant: 'authorization_code', ok: true });
    await page.getByRole('link', { name: 'Sales' }).waitFor();
    await noViolations();

    // An account whose address is the forwarding mailbox's: refused, and the page says why.
    provider.account = 'support@acme.test';
    await page.getByLabel('Google (Gmail, Workspace)').check();
    await page.getByLabel('Name', { exact: true }).fill('Sales again');
    await page.getByRole('button', { name: 'Continue to Google' }).click();
    await page.getByRole('alert').filter({ hasText: 'a mailbox for this account already exists' }).waitFor();
    expect((await h.svc.api.get('/v1/mailboxes', as())).body.data).toHaveLength(2);
  });

  it('builds an automation: the API’s refusal at its entry, then it labels a new ticket', async () => {
    await settings('automations');
    await page.getByText('No automations yet.', { exact: false }).waitFor();
    await noViolations();
    await page.getByRole('link', { name: 'New automation' }).click();
    await page.getByRole('heading', { name: 'New automation' }).waitFor();
    await page.getByLabel('Name').fill('Label refunds');
    await page.getByLabel('Trigger').selectOption('ticket_created');
    await page.getByRole('button', { name: 'Add a condition' }).click();
    await page.getByLabel('Condition 1: field').selectOption('subject');
    await page.getByLabel('Condition 1: operator').selectOption('contains');
    await page.getByLabel('Condition 1: value').fill('refund');
    await page.getByLabel('Action 1', { exact: true }).selectOption('add_tag');
    const labelField = page.getByLabel('Action 1: label');
    await labelField.fill('refund');
    await noViolations();
    await docsScreenshot(page, 'settings-automations');
    // A label that does not exist: the 422 names body.actions.0.value, and the message sits there.
    await labelField.fill('no such label');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await expect.poll(() => labelField.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.builder-row .field-error').first().textContent()).toContain('no label');
    await page.getByText('one entry needs a change').waitFor();
    await noViolations();
    await labelField.fill('refund');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('link', { name: 'Label refunds' }).waitFor();
    await expect.poll(() => page.getByRole('switch', { name: 'Label refunds enabled' }).isChecked()).toBe(true);

    const saved = (await h.svc.api.get('/v1/automations', as())).body.data;
    expect(saved).toMatchObject([
      {
        name: 'Label refunds',
        trigger: 'ticket_created',
        enabled: true,
        conditions: [{ field: 'subject', op: 'contains', value: 'refund' }],
        actions: [{ type: 'add_tag', value: 'refund' }],
      },
    ]);
    const t = await h.svc.api.post(
      '/v1/tickets',
      { subject: 'A refund for order 42', contact: { email: 'dana@customer.test', name: 'Dana' } },
      as(),
    );
    expect(t.status, t.text).toBe(201);
    await expect
      .poll(async () =>
        (await h.svc.api.get(`/v1/tickets/${t.body.id}`, as())).body.tags.map((x: { name: string }) => x.name),
      )
      .toEqual(['refund']);
    // Switched off in the list: the API has it disabled.
    await page.getByRole('switch', { name: 'Label refunds enabled' }).click();
    await expect.poll(async () => (await h.svc.api.get('/v1/automations', as())).body.data[0].enabled).toBe(false);
    await expect.poll(() => page.getByRole('switch', { name: 'Label refunds enabled' }).isChecked()).toBe(false);
  });

  it('makes an API key, shows its secret once, which works; revokes it after asking', async () => {
    await settings('api-keys');
    await page.getByText('No API keys yet.').waitFor();
    await page.getByLabel('Name').fill('CRM sync');
    await page.getByLabel('tickets:read').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByRole('textbox', { name: 'API key (shown once)' });
    await secret.waitFor();
    const key = await secret.inputValue();
    expect(key).toMatch(/^svc_live_/);
    await noViolations();
    const me = await h.svc.api.get('/v1/me', { token: key });
    expect(me.status, me.text).toBe(200);
    const row = page.getByRole('row', { name: /CRM sync/ });
    await expect
      .poll(async () => {
        await page.reload();
        await row.waitFor();
        return row.textContent();
      })
      .toContain('just now');
    expect(await row.textContent()).toContain(key.slice(0, 15));
    await page.getByRole('button', { name: 'Revoke CRM sync' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('No API keys yet.').waitFor();
    expect((await h.svc.api.get('/v1/api-keys', as())).body.data).toEqual([]);
    expect((await h.svc.api.get('/v1/me', { token: key })).status).toBe(401);
  });

  it('makes a webhook; its deliveries are logged with their body; a failed one is retried from the screen; its secret rolled', async () => {
    await settings('webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    await page.getByLabel('URL').fill(hookUrl);
    await page.getByLabel('Description').fill('Our test receiver');
    await expect.poll(() => page.getByLabel('ticket.created').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await noViolations();
    await page.getByRole('link', { name: 'Open the webhook and its deliveries' }).click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await page.getByText('No deliveries yet.', { exact: false }).waitFor();

    const first = await h.svc.api.post(
      '/v1/tickets',
      { subject: 'Where is my parcel?', contact: { email: 'eli@customer.test', name: 'Eli' } },
      as(),
    );
    expect(first.status).toBe(201);
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(1);
    const row = page.getByRole('row', { name: /ticket\.created/ });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('Delivered');
    expect(await row.textContent()).toContain('200');
    await row.getByRole('button', { name: /Body/ }).click();
    await expect.poll(() => page.locator('pre.payload').textContent()).toContain('Where is my parcel?');
    await noViolations();

    // A failure (the receiver answers 500): final at once here; retried from the screen.
    failing = true;
    const second = await h.svc.api.post(
      '/v1/tickets',
      { subject: 'Broken zipper', contact: { email: 'fay@customer.test', name: 'Fay' } },
      as(),
    );
    expect(second.status).toBe(201);
    const failed = page.getByRole('row', { name: /Failed/ });
    await failed.waitFor({ timeout: 10_000 });
    expect(await failed.textContent()).toContain('500');
    failing = false;
    await failed.getByRole('button', { name: /^Retry/ }).click();
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(3);
    const [, broken, again] = received;
    expect(again!.status).toBe(200);
    expect(again!.headers['svc-event-id']).toBe(broken!.headers['svc-event-id']);
    expect(JSON.parse(again!.body).data.ticket.subject).toBe('Broken zipper');
    await expect.poll(() => page.getByRole('row', { name: /Delivered/ }).count(), { timeout: 10_000 }).toBe(2);
    const hooks = (await h.svc.api.get('/v1/webhooks', as())).body.data;
    const deliveries = (await h.svc.api.get(`/v1/webhooks/${hooks[0].id}/deliveries`, as())).body.data;
    expect(deliveries.map((d: { status: string }) => d.status)).toEqual(['succeeded', 'failed', 'succeeded']);

    // Rolling the signing secret: the new one shown once; the next delivery carries both.
    await page.getByRole('button', { name: 'Roll the secret…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Roll the secret' }).click();
    const fresh = await page.getByLabel('New signing secret').inputValue();
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await page.getByText(/Deliveries carry a signature with the old one too until/).waitFor();
    await noViolations();
    const third = await h.svc.api.post(
      '/v1/tickets',
      { subject: 'Lost voucher', contact: { email: 'gus@customer.test', name: 'Gus' } },
      as(),
    );
    expect(third.status).toBe(201);
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(4);
    const signed = received[3]!;
    const header = signed.headers['svc-signature'] as string;
    expect(verifyWebhook(fresh, header, signed.body)).toBe(true);
    expect(verifyWebhook(secret, header, signed.body)).toBe(true);

    // 360 px: nothing overflows sideways.
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
      ).toBeLessThanOrEqual(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('lists these actions in the audit log, filtered by action', async () => {
    await settings('audit-log');
    const table = page.getByRole('table');
    await expect.poll(() => table.textContent()).toContain('webhook.created');
    const text = (await table.textContent()) ?? '';
    for (const action of ['mailbox.created', 'automation.created', 'api_key.created', 'api_key.deleted']) {
      expect(text).toContain(action);
    }
    expect(text).toContain('Olivia Owner');
    await noViolations();
    await page.getByLabel('Action').fill('api_key.deleted');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('table.audit tbody tr').count()).toBe(1);
    expect(await table.textContent()).toContain('api_key.deleted');
  });

  it('shows a notification live in the bell, and marks it read', async () => {
    await page.goto(`${h.svc.url}/inbox`);
    await page.getByText('Live', { exact: true }).waitFor();
    const bell = page.getByRole('button', { name: /^Notifications/ });
    await bell.waitFor();
    expect(await bell.textContent()).not.toContain('unread');
    const bob = await addMember(h.svc, h.tenant, 'agent', 'Bob Agent');
    const t = (await h.svc.api.get('/v1/tickets?q=parcel', as())).body.data[0];
    const assigned = await h.svc.api.patch(`/v1/tickets/${t.id}`, { assignee_id: h.tenant.owner.userId }, bob.as);
    expect(assigned.status, assigned.text).toBe(200);
    await expect.poll(() => bell.textContent(), { timeout: 10_000 }).toContain('1 unread');
    await bell.click();
    const item = page.getByRole('link', { name: /Bob Agent assigned you a ticket: #\d+ Where is my parcel\?/ });
    await item.waitFor();
    await noViolations();
    await page.getByRole('button', { name: 'Mark all read' }).click();
    await expect.poll(() => bell.textContent()).not.toContain('unread');
    // The bell clears at once; the server has it when the request lands (a CI run read it first).
    await expect.poll(async () => (await h.svc.api.get('/v1/notifications', as())).body.unread_count).toBe(0);
    await page.keyboard.press('Escape');

    // The section lists them, read.
    await settings('notifications');
    await page.getByRole('link', { name: /Where is my parcel\?/ }).waitFor();
    expect(await page.getByRole('button', { name: /^Mark read/ }).count()).toBe(0);
    await noViolations();

    // Unticking "Assigned" mutes it in this workspace: the next assignment tells nobody.
    const assignedBox = page.getByLabel('Assigned', { exact: true });
    expect(await assignedBox.isChecked()).toBe(true);
    await assignedBox.uncheck();
    await page.getByText('Saved: no more “Assigned” notifications here.').waitFor();
    expect((await h.svc.api.get('/v1/notifications/settings', as())).body).toEqual({ muted: ['assigned'] });
    await h.svc.api.patch(`/v1/tickets/${t.id}`, { assignee_id: bob.userId }, bob.as);
    const again = await h.svc.api.patch(`/v1/tickets/${t.id}`, { assignee_id: h.tenant.owner.userId }, bob.as);
    expect(again.status, again.text).toBe(200);
    expect((await h.svc.api.get('/v1/notifications', as())).body.data).toHaveLength(1);
    await page.reload();
    await page.getByLabel('Mentioned', { exact: true }).waitFor();
    expect(await page.getByLabel('Assigned', { exact: true }).isChecked()).toBe(false);
    expect(await page.getByLabel('Mentioned', { exact: true }).isChecked()).toBe(true);
    await noViolations();
    // Logged by the browser and expected: the refused automation's 422, and the 401s a reload's
    // first requests get before the session is refreshed.
    expect(h.errors.filter((e) => !/status of (422|401)/.test(e))).toEqual([]);
  });
});
