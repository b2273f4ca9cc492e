// The ticket page and the inbox in a real browser (test/support/app-harness.ts), against one service:
// a second agent sees the first one's presence and typing and gets a new ticket live; labels with
// an exclusive group, priority, assignee, a custom field and solve through the ticket page; a
// filter kept in the address and a bulk change in the inbox; a saved reply with its placeholder
// filled; an image attached in the composer and shown as a thumbnail with the sent reply; an
// @mention notifying the colleague; send-and-next; a merge; a reply formatted in the rich-text
// composer (bold by keyboard, a link and italic from the toolbar) and a saved reply keeping its
// bold and list, both sent so; pictures (avatars) on rows and in the customer panel; rows of two
// lines with an unread mark, the assignee's picture and the status only in a view of several; a
// chat visitor named "Visitor"; a long conversation opened at its newest message with the
// composer in view, the details folded away; icons from one set; axe-core on both screens
// (filters open, the composer's toolbar, dark mode) and 360 px on the ticket page and the inbox.
// Every change is checked through the API as well as on screen.
import { deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable } from '../../support/browser.js';
import { addMember, type Member, type ReqOpts } from '../../support/helpers.js';

/** A w×h PNG of one colour (pictures must be at least 16 px a side). */
function png(w: number, h: number, rgb: [number, number, number]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const row = Buffer.concat([Buffer.from([0]), Buffer.concat(Array.from({ length: w }, () => Buffer.from(rgb)))]);
  const raw = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe.runIf(browserAvailable())('the ticket page and the inbox', () => {
  let h: AppHarness;
  let page: Page;
  let as: ReqOpts;
  let bob: Member;
  const n: Record<string, number> = {};

  const api = () => h.svc.api;
  const ticket = async (num: number) => (await api().get(`/v1/tickets/${num}`, as)).body;
  const newTicket = async (subject: string, extra: Record<string, unknown>) => {
    const r = await api().post('/v1/tickets', { subject, body_html: `<p>${subject}: please help.</p>`, ...extra }, as);
    expect(r.status, r.text).toBe(201);
    return r.body.number as number;
  };
  const openTicket = async (num: number, subject: string) => {
    await page.goto(`${h.svc.url}/tickets/${num}`);
    await page.getByRole('heading', { name: `#${num} ${subject}` }).waitFor();
  };

  beforeAll(async () => {
    h = await startAppHarness('app_tickets');
    as = h.tenant.as;
    bob = await addMember(h.svc, h.tenant, 'agent', 'Bob Agent');
    // Labels: an exclusive group (Plan: free, pro) and a free-standing one; a custom field; a saved reply.
    const group = await api().post('/v1/tag-groups', { name: 'Plan', exclusive: true }, as);
    expect(group.status, group.text).toBe(201);
    for (const name of ['free', 'pro']) {
      const t = await api().post('/v1/tags', { name, group_id: group.body.id }, as);
      expect(t.status, t.text).toBe(201);
    }
    expect((await api().post('/v1/tags', { name: 'vip' }, as)).status).toBe(201);
    const field = await api().post(
      '/v1/custom-fields',
      { entity: 'ticket', type: 'select', name: 'Region', options: [{ label: 'EU' }, { label: 'US' }] },
      as,
    );
    expect(field.status, field.text).toBe(201);
    const reply = await api().post(
      '/v1/saved-replies',
      { title: 'Greeting', body_html: '<p>Hello {{contact.first_name}}, thanks for writing.</p>' },
      as,
    );
    expect(reply.status, reply.text).toBe(201);
    // A customer with a picture, at a company.
    const company = await api().post('/v1/companies', { name: 'Buyer Inc', domain: 'buyer.test' }, as);
    expect(company.status, company.text).toBe(201);
    const dana = await api().post(
      '/v1/contacts',
      { email: 'dana@buyer.test', name: 'Dana Buyer', company_id: company.body.id },
      as,
    );
    expect(dana.status, dana.text).toBe(201);
    const form = new FormData();
    form.append('file', new Blob([png(48, 48, [200, 60, 60])], { type: 'image/png' }), 'dana.png');
    const pic = await fetch(`${h.svc.url}/v1/contacts/${dana.body.id}/avatar`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${as.token}`, 'svc-workspace': String(as.workspace) },
      body: form,
    });
    expect(pic.status, await pic.clone().text()).toBe(200);

    n.refund = await newTicket('Refund for order 1001', {
      contact: { email: 'eli@customer.test', name: 'Eli Shopper' },
      tags: ['vip'],
    });
    n.login = await newTicket('Cannot log in', {
      contact: { email: 'fay@customer.test', name: 'Fay User' },
      tags: ['vip'],
    });
    n.copy = await newTicket('Printer jams again', { contact: { email: 'fay@customer.test', name: 'Fay User' } });
    n.printer = await newTicket('Printer jams', { contact_id: dana.body.id });

    ({ page } = await h.newPage());
    await h.signIn(page, h.tenant.owner);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('shows a second agent’s presence and typing on the ticket, and a new ticket live in their inbox', async () => {
    await openTicket(n.printer!, 'Printer jams');
    const { page: page2 } = await h.newPage();
    await h.signIn(page2, bob);
    await page2.goto(`${h.svc.url}/tickets/${n.printer}`);
    await page2.getByRole('heading', { name: `#${n.printer} Printer jams` }).waitFor();
    await page.getByText('Also here: Bob Agent').waitFor({ timeout: 5000 });
    await page2.getByRole('textbox', { name: /Reply to/ }).fill('Checking the paper tray');
    await page.getByText('Bob Agent is typing…').waitFor({ timeout: 5000 });
    await page.getByText('Also here: Bob Agent (replying)').waitFor({ timeout: 5000 });

    await page2.getByRole('link', { name: '← Inbox' }).click();
    await page2.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    await page.getByText('Also here: Bob Agent').waitFor({ state: 'detached', timeout: 5000 });
    n.toner = await newTicket('Toner smells of smoke', { contact: { email: 'gus@customer.test', name: 'Gus' } });
    await page2.getByRole('link', { name: /Toner smells of smoke/ }).waitFor({ timeout: 5000 });
    await page2.context().close();
  });

  it('shows the customer with their picture, company and other tickets', async () => {
    const panel = page.getByRole('complementary', { name: 'Ticket details' });
    await panel.getByText('Buyer Inc').waitFor();
    await panel.getByText('dana@buyer.test').waitFor();
    const face = panel.locator('.person img').first();
    await face.waitFor();
    expect(await face.getAttribute('src')).toMatch(/^\/v1\/images\//);
    await expect
      .poll(() => face.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
  });

  it('adds labels (an exclusive group keeps one), sets priority, assignee and a custom field, and solves', async () => {
    const addLabel = async (name: string) => {
      await page.getByRole('button', { name: 'Add label' }).click();
      // An exclusive group's label says which one it replaces ("pro replaces free").
      await page.getByRole('button', { name: new RegExp(`^${name}\\b`) }).click();
    };
    await addLabel('free');
    await expect
      .poll(async () => (await ticket(n.printer!)).tags.map((t: { name: string }) => t.name))
      .toEqual(['free']);
    await addLabel('pro');
    await expect
      .poll(async () => (await ticket(n.printer!)).tags.map((t: { name: string }) => t.name))
      .toEqual(['pro']);
    await page.getByRole('list', { name: 'Labels' }).first().getByText('pro').waitFor();
    expect(await page.locator('.ticket-meta .labels').getByText('free').count()).toBe(0);

    await page.getByLabel('Priority').selectOption('high');
    await expect.poll(async () => (await ticket(n.printer!)).priority).toBe('high');
    await page.getByLabel('Assignee').selectOption({ label: 'Bob Agent' });
    await expect.poll(async () => (await ticket(n.printer!)).assignee?.id).toBe(bob.userId);
    await page.getByText('Assigned to Bob Agent').waitFor();
    await page.getByLabel('Region').selectOption({ label: 'EU' });
    await expect.poll(async () => (await ticket(n.printer!)).fields.region).toBe('eu');

    expect(await h.violations(page)).toBe('[]');
    await page.getByRole('button', { name: /^Solve/ }).click();
    await page.locator('.ticket-meta .status').filter({ hasText: 'Solved' }).waitFor();
    expect((await ticket(n.printer!)).status).toBe('solved');
  });

  it('filters the inbox (kept in the address) and solves two tickets at once', async () => {
    await page.goto(`${h.svc.url}/inbox`);
    await page.getByRole('button', { name: 'Filters' }).click();
    await page.getByLabel('Label', { exact: true }).selectOption('vip');
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(2);
    expect(new URL(page.url()).searchParams.get('label')).toBe('vip');
    await page.reload();
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(2);
    await page.getByLabel('Label', { exact: true }).waitFor(); // still open: a filter is set
    expect(await h.violations(page)).toBe('[]');

    // A click, then Shift+click: the range.
    const checks = page.locator('.row-check');
    await checks.nth(0).click();
    await checks.nth(1).click({ modifiers: ['Shift'] });
    await page.getByText('2 tickets selected').waitFor();
    await page.getByRole('button', { name: 'Set status' }).click();
    await page.getByRole('menuitem', { name: 'Solved' }).click();
    await page.getByRole('status').filter({ hasText: '2 tickets updated.' }).waitFor();
    for (const num of [n.refund!, n.login!]) expect((await ticket(num)).status).toBe('solved');
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(0);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(2);
  });

  it('shows the contact’s picture on their inbox row', async () => {
    await page.goto(`${h.svc.url}/inbox?view=solved`);
    const row = page.locator('li[data-ticket-id]', { hasText: `#${n.printer} Printer jams` });
    const img = row.locator('.avatar img').first();
    await img.waitFor();
    expect(await img.getAttribute('src')).toMatch(/^\/v1\/images\//);
  });

  it('inserts a saved reply with its placeholder filled, and sends an attached image with the reply', async () => {
    await openTicket(n.copy!, 'Printer jams again');
    await page.getByRole('button', { name: 'Saved replies' }).click();
    await page.getByLabel('Find a saved reply').fill('greet');
    await page.getByRole('button', { name: /Greeting/ }).click();
    await expect.poll(() => page.locator('#composer-text').textContent()).toBe('Hello Fay, thanks for writing.');

    await page.getByLabel('Attach files').setInputFiles({
      name: 'tray.png',
      mimeType: 'image/png',
      buffer: png(40, 30, [40, 120, 200]),
    });
    await page.getByRole('list', { name: 'Attached files' }).getByText('tray.png').waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Reply sent.' }).waitFor();
    const sent = page.locator('.message-outbound', { hasText: 'Hello Fay, thanks for writing.' });
    const thumb = sent.locator('img.thumb');
    await thumb.waitFor();
    await expect
      .poll(() => thumb.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(40);
    const messages = (await api().get(`/v1/tickets/${n.copy}/messages`, as)).body.data;
    const last = messages[messages.length - 1];
    expect(last.attachments.map((a: { filename: string }) => a.filename)).toEqual(['tray.png']);
    expect(last.body_text).toContain('Hello Fay, thanks for writing.');
  });

  it('mentions a colleague in a note, who is notified', async () => {
    await page.getByLabel('Internal note').check();
    const box = page.locator('#composer-text');
    await box.click();
    await box.pressSequentially('Can you look, @Bo');
    const list = page.getByRole('listbox', { name: 'Mention a colleague' });
    await list.getByRole('option', { name: /Bob Agent/ }).waitFor();
    expect(await box.getAttribute('aria-activedescendant')).toBe(
      await list.getByRole('option').first().getAttribute('id'),
    );
    // Escape closes the list and stays in the text box; the word typed again opens it again.
    await box.press('Escape');
    await list.waitFor({ state: 'detached' });
    expect(await page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    for (let i = 0; i < 3; i++) await box.press('Backspace');
    await box.pressSequentially('@Bo');
    await list.getByRole('option', { name: /Bob Agent/ }).waitFor();
    await box.press('Enter');
    await expect.poll(() => box.textContent()).toBe('Can you look, @Bob Agent ');
    await box.pressSequentially('please?');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByRole('status').filter({ hasText: 'Note added.' }).waitFor();
    await page.locator('.message-note a', { hasText: '@Bob Agent' }).waitFor();
    await expect
      .poll(async () => (await api().get('/v1/notifications', bob.as)).body.data.map((x: { type: string }) => x.type))
      .toContain('mentioned');
  });

  it('merges a ticket into another', async () => {
    await page.getByRole('button', { name: 'Merge into another ticket…' }).click();
    await page.getByLabel('Ticket number or subject').fill(String(n.printer));
    await page.getByRole('radio', { name: `#${n.printer} Printer jams` }).check();
    await page.getByRole('button', { name: `Merge #${n.copy} into #${n.printer}` }).click();
    await page.getByRole('heading', { name: `#${n.printer} Printer jams` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/tickets/${n.printer}`);
    const moved = (await api().get(`/v1/tickets/${n.printer}/messages`, as)).body.data;
    expect(moved.some((m: { body_text: string }) => m.body_text.includes('Hello Fay'))).toBe(true);
    await page.getByText('Hello Fay, thanks for writing.').waitFor();
  });

  it('sends a reply and opens the next ticket of the list', async () => {
    for (const subject of ['Where is my parcel?', 'Wrong size delivered']) {
      await newTicket(subject, { contact: { email: 'hal@customer.test', name: 'Hal Buyer' } });
    }
    await page.goto(`${h.svc.url}/inbox`);
    await page.getByRole('link', { name: /Wrong size delivered/ }).waitFor();
    await expect.poll(() => page.locator('.ticket-row').count()).toBeGreaterThan(1);
    const numbers = (await page.locator('.ticket-row .number').allTextContents()).map((t) => Number(t.slice(1)));
    await page.locator('.ticket-row').first().click();
    await page.getByRole('heading', { name: new RegExp(`^#${numbers[0]} `) }).waitFor();
    await page.locator('#composer-text').fill('On it.');
    await page.locator('#composer-text').press('Control+Shift+Enter');
    await page.getByRole('heading', { name: new RegExp(`^#${numbers[1]} `) }).waitFor();
    const first = (await api().get(`/v1/tickets/${numbers[0]}/messages`, as)).body.data;
    expect(first.at(-1).body_text).toContain('On it.');
  });

  it('formats a reply with the toolbar and the keyboard (bold, a link), and sends it so', async () => {
    const num = await newTicket('Router keeps dropping', { contact: { email: 'ida@customer.test', name: 'Ida' } });
    await openTicket(num, 'Router keeps dropping');
    const box = page.getByRole('textbox', { name: 'Reply to Ida' });
    await box.click();
    await page.keyboard.type('Please ');
    await page.keyboard.press('Control+b');
    await page.keyboard.type('restart it');
    await page.keyboard.press('Control+b');
    await page.keyboard.type(' and read ');
    // Bold is pressed at the cursor inside bold text only.
    const tools = page.getByRole('toolbar', { name: 'Formatting' });
    await expect.poll(() => tools.getByRole('button', { name: 'Bold' }).getAttribute('aria-pressed')).toBe('false');
    // A link from the toolbar: with nothing selected the address goes in as its own text.
    await tools.getByRole('button', { name: 'Link' }).click();
    await page.getByLabel('Link address').fill('example.com/router');
    await page.getByLabel('Link address').press('Enter');
    await expect.poll(() => page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    await page.keyboard.type(' first.');
    // Italic from the toolbar, reached with the keyboard (one tab stop, then the arrow keys).
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.press('Control+k'); // the link's box opens from the text box too
    await page.getByLabel('Link address').press('Escape');
    await expect.poll(() => page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    const focused = () => page.evaluate<string>("document.activeElement?.getAttribute('aria-label') ?? ''");
    await page.keyboard.press('Shift+Tab'); // the toolbar is one tab stop before the text box
    await expect.poll(focused).toBe('Bold');
    await page.keyboard.press('ArrowRight');
    await expect.poll(focused).toBe('Italic');
    await page.keyboard.press('Enter');
    await expect.poll(() => tools.getByRole('button', { name: 'Italic' }).getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    await page.keyboard.type('Ida');
    expect(await box.innerHTML()).toContain('<strong>restart it</strong>');
    expect(await h.violations(page)).toBe('[]');
    await box.press('Control+Enter');
    await page.getByRole('status').filter({ hasText: 'Reply sent.' }).waitFor();
    await page.locator('.message-outbound strong', { hasText: 'restart it' }).waitFor();
    expect(await box.textContent()).toBe('');
    const last = (await api().get(`/v1/tickets/${num}/messages`, as)).body.data.at(-1);
    expect(last.body_html).toContain('<strong>restart it</strong>');
    expect(last.body_html).toMatch(/<a [^>]*href="https:\/\/example\.com\/router"[^>]*>example\.com\/router<\/a>/);
    expect(last.body_html).toMatch(/<em>Ida<\/em>/);
  });

  it('inserts a saved reply with its formatting (bold, a list) and sends it so', async () => {
    const saved = await api().post(
      '/v1/saved-replies',
      {
        title: 'Restart steps',
        body_html:
          '<p>Hi {{contact.first_name}}, <strong>two steps</strong>:</p><ul><li><p>Unplug the router</p></li><li><p>Wait a minute</p></li></ul>',
      },
      as,
    );
    expect(saved.status, saved.text).toBe(201);
    const num = await newTicket('Router still dropping', { contact: { email: 'ida@customer.test', name: 'Ida' } });
    await openTicket(num, 'Router still dropping');
    await page.getByRole('button', { name: 'Saved replies' }).click();
    await page.getByLabel('Find a saved reply').fill('restart');
    await page.getByRole('button', { name: /Restart steps/ }).click();
    const box = page.locator('#composer-text');
    await expect.poll(() => box.innerHTML()).toContain('<strong>two steps</strong>');
    expect(await box.textContent()).toContain('Hi Ida, two steps:');
    expect(await box.locator('ul li').count()).toBe(2);
    await expect.poll(() => page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    // Dark mode keeps the contrast, toolbar and all.
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      expect(await h.violations(page)).toBe('[]');
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Reply sent.' }).waitFor();
    const last = (await api().get(`/v1/tickets/${num}/messages`, as)).body.data.at(-1);
    expect(last.body_html).toContain('<strong>two steps</strong>');
    expect(last.body_html).toMatch(/<ul>\s*<li>(?:<p>)?Unplug the router/);
    expect(last.body_text).toContain('Hi Ida');
  });

  it('fits 360 px on the ticket page', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await page.getByRole('complementary', { name: 'Ticket details' }).waitFor();
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
      ).toBeLessThanOrEqual(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a private team’s new ticket live to its member (the team’s topic, not the stand-in)', async () => {
    const team = await api().post('/v1/teams', { name: 'Escalations', private: true, member_ids: [bob.userId] }, as);
    expect(team.status, team.text).toBe(201);
    const { page: page2 } = await h.newPage();
    await h.signIn(page2, bob);
    await page2.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    const r = await api().post(
      '/v1/tickets',
      {
        subject: 'Legal hold on account 77',
        body_html: '<p>Only the escalations team may see this.</p>',
        contact: { email: 'hal@customer.test', name: 'Hal' },
        team_id: team.body.id,
      },
      as,
    );
    expect(r.status, r.text).toBe(201);
    await page2.getByRole('link', { name: /Legal hold on account 77/ }).waitFor({ timeout: 10_000 });
    await page2.context().close();
  });

  it('links a closed ticket and its follow-up both ways', async () => {
    const closed = await newTicket('Invoice address wrong', { contact: { email: 'ivy@customer.test', name: 'Ivy' } });
    const later = await newTicket('Invoice address still wrong', {
      contact: { email: 'ivy@customer.test', name: 'Ivy' },
    });
    const closedId = (await api().get(`/v1/tickets/${closed}`, as)).body.id;
    expect((await api().patch(`/v1/tickets/${closed}`, { status: 'closed' }, as)).status).toBe(200);
    // What mail, the portal and the widget write on a follow-up (their own tests cover that path).
    const link = await api().patch(
      `/v1/tickets/${later}`,
      { custom: { follow_up_of: { id: closedId, number: closed } } },
      as,
    );
    expect(link.status, link.text).toBe(200);
    await openTicket(closed, 'Invoice address wrong');
    await page
      .locator('.follow-up', { hasText: 'Followed up in' })
      .getByRole('link', { name: `#${later}` })
      .click();
    await page.getByRole('heading', { name: `#${later} Invoice address still wrong` }).waitFor();
    await page
      .locator('.follow-up', { hasText: 'Follow-up of' })
      .getByRole('link', { name: `#${closed}` })
      .waitFor();
  });

  it('lists tickets in rows of two lines: unread, the assignee’s picture, the status only where the view mixes them', async () => {
    // A chat visitor who gives neither a name nor an address writes: the customer wrote last.
    const key = (await api().get('/v1/workspace', as)).body.widget_key as string;
    const widget = (path: string, body: unknown, token?: string) =>
      fetch(`${h.svc.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Visitor ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    const session = await widget('/v1/widget/session', { key });
    expect(session.status).toBe(200);
    const { visitor_token } = (await session.json()) as { visitor_token: string };
    const started = await widget('/v1/widget/conversations', { body: 'Is the shop open on Sunday?' }, visitor_token);
    expect(started.status, await started.clone().text()).toBe(201);
    const chat = (await api().get('/v1/tickets?channel=chat', as)).body.data[0] as { number: number; subject: string };
    await newTicket('Label printer offline', {
      contact: { email: 'jo@customer.test', name: 'Jo' },
      assignee_id: bob.userId,
    });

    await page.goto(`${h.svc.url}/inbox`); // the Open view
    const row = page.locator('li[data-ticket-id]', { hasText: `#${chat.number} ` });
    await row.waitFor();
    expect(await row.locator('.who').textContent()).toBe('Visitor');
    await expect.poll(() => row.locator('.unread-mark').count()).toBe(1);
    expect(await row.getByRole('link').textContent()).toMatch(/^Unread: Visitor/);
    // Two lines, not three (78 px before).
    expect((await row.boundingBox())?.height).toBeLessThan(60);
    // Every row of the Open view is open: none says so.
    expect(await page.locator('.ticket-list .status').count()).toBe(0);
    const assigned = page.locator('li[data-ticket-id]', { hasText: 'Label printer offline' });
    await assigned.getByRole('img', { name: 'Assigned to Bob Agent' }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await assigned.getByRole('img', { name: 'Assigned to Bob Agent' }).waitFor();
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBe(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    // Unassigned mixes open, pending and on hold: each row says its status.
    await page.goto(`${h.svc.url}/inbox?view=unassigned`);
    await row.waitFor();
    expect(await row.locator('.status').textContent()).toBe('Open');

    // Opened, it is read; the page calls the visitor the same.
    await openTicket(chat.number, chat.subject);
    await page.locator('.person-name', { hasText: 'Visitor' }).waitFor();
    await page.locator('.message-inbound header strong', { hasText: 'Visitor' }).waitFor();
    await page.getByRole('textbox', { name: 'Reply to Visitor' }).waitFor();
    await page.goto(`${h.svc.url}/inbox`);
    await row.waitFor();
    expect(await row.locator('.unread-mark').count()).toBe(0);
    // The visitor writes again: unread again, live.
    const conv = (await (
      await fetch(`${h.svc.url}/v1/widget/conversations`, { headers: { authorization: `Visitor ${visitor_token}` } })
    ).json()) as { data: Array<{ id: string }> };
    const again = await widget(
      `/v1/widget/conversations/${conv.data[0]!.id}/messages`,
      { body: 'And Monday?' },
      visitor_token,
    );
    expect(again.status, await again.clone().text()).toBeLessThan(300);
    await expect.poll(() => row.locator('.unread-mark').count()).toBe(1);
  });

  it('opens a long conversation at its newest message with the composer in view, and folds the details away', async () => {
    const num = await newTicket('Scanner driver crashes', { contact: { email: 'kim@customer.test', name: 'Kim' } });
    for (let i = 1; i <= 8; i++) {
      const r = await api().post(
        `/v1/tickets/${num}/messages`,
        {
          kind: i % 3 ? 'reply' : 'note',
          body_html: `<p>Update ${i}: ${'the driver still crashes at start. '.repeat(8)}</p>`,
        },
        as,
      );
      expect(r.status, r.text).toBe(201);
    }
    await openTicket(num, 'Scanner driver crashes');
    const inView = async (selector: string) => {
      const b = await page.locator(selector).last().boundingBox();
      return !!b && b.y >= 0 && b.y + b.height <= 800;
    };
    await page.locator('.message', { hasText: 'Update 8:' }).waitFor();
    await expect.poll(() => inView('.message')).toBe(true);
    expect(await inView('#composer-text')).toBe(true);
    expect(await inView('.composer button[type=submit]')).toBe(true);
    expect(await inView('.message >> nth=0')).toBe(false); // the thread scrolls, not the page
    expect(await page.evaluate<number>('document.documentElement.scrollHeight - window.innerHeight')).toBe(0);

    const details = page.getByRole('button', { name: 'Details', exact: true });
    expect(await details.getAttribute('aria-expanded')).toBe('true');
    const thread = page.getByRole('list', { name: 'Conversation' });
    const narrow = (await thread.boundingBox())?.width ?? 0;
    await details.click();
    await page.getByRole('complementary', { name: 'Ticket details' }).waitFor({ state: 'detached' });
    expect(await details.getAttribute('aria-expanded')).toBe('false');
    expect((await thread.boundingBox())?.width).toBeGreaterThan(narrow + 200);
    // Kept for the next ticket opened in this browser.
    await page.reload();
    await page.getByRole('heading', { name: `#${num} Scanner driver crashes` }).waitFor();
    await expect.poll(() => inView('.message')).toBe(true);
    expect(await page.getByRole('complementary', { name: 'Ticket details' }).count()).toBe(0);
    expect(await h.violations(page)).toBe('[]');
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      expect(await h.violations(page)).toBe('[]');
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await details.click();
    await page.getByRole('complementary', { name: 'Ticket details' }).waitFor();
  });

  it('draws icons from one set, decorative, beside unchanged names', async () => {
    const icons = async (name: string) =>
      page.getByRole('button', { name, exact: true }).locator('svg.lucide[aria-hidden="true"]').count();
    expect(await icons('Send')).toBe(1);
    expect(await icons('Attach files')).toBe(0); // a label, not a button: its icon is checked below
    expect(await page.locator('label.attach svg.lucide[aria-hidden="true"]').count()).toBe(1);
    expect(await icons('Keyboard shortcuts')).toBe(1);
    const tools = page.getByRole('toolbar', { name: 'Formatting' });
    for (const name of ['Bold', 'Italic', 'Link', 'Bulleted list', 'Numbered list', 'Quote']) {
      expect(await tools.getByRole('button', { name, exact: true }).locator('svg.lucide').count(), name).toBe(1);
    }
    const nav = page.getByRole('navigation', { name: 'Workspace tools' });
    for (const name of ['Chats', 'Knowledge base', 'Reports', 'Settings']) {
      expect(await nav.getByRole('link', { name, exact: true }).locator('svg.lucide').count(), name).toBe(1);
    }
    expect(
      await page
        .getByRole('link', { name: /^Open\b/ })
        .first()
        .locator('svg.lucide')
        .count(),
    ).toBe(1);
  });

  it('logged no error in the pages', () => {
    // Signing in first tries the refresh cookie there is not yet: its 401 is the one failure expected.
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)/.test(e))).toEqual([]);
  });
});
