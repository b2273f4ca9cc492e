// The agent web app's knowledge base, help center and widget settings, and chats, in a real
// browser (test/support/app-harness.ts): a collection and an article written in the TipTap editor (a word
// made bold with the toolbar), saved as a draft, published, and read on the public help center
// with the bold word; the help center's title changed in its settings and shown on the public
// pages; the widget's greeting and allowed origin saved in its settings and the greeting shown in
// the widget; a visitor on a test page (a loopback server on another origin, embedding /widget.js)
// starts a chat, and the agent, signed in in another browser context, sees it arrive live at
// /chats, sees the visitor typing, types (the visitor sees it), answers (the visitor sees the
// answer), solves it, and sees the visitor's rating. axe-core on every screen; the article editor
// at 360 px. SCREENSHOTS=1 writes app-kb-editor and app-chat into docs/screenshots/.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';

const run = browserAvailable();

/** The customer's website: one page embedding the widget. */
function hostSite(script: () => string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.url !== '/') {
      // The browser's /favicon.ico among them: none, without a 404 in the console.
      res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme Shop</title></head>
<body><main><h1>Acme Shop</h1><p>Our products.</p></main>${script()}</body></html>`);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

describe.runIf(run)('the knowledge base, help center, widget settings and chats in the app', () => {
  let h: AppHarness;
  let page: Page;
  let slug = '';
  let key = '';
  let site: { server: Server; port: number };
  let siteOrigin = '';
  let articleId = '';
  let visitor: { context: BrowserContext; page: Page };

  const noOverflow = () => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

  beforeAll(async () => {
    h = await startAppHarness('app_hc_chat');
    const ws = await h.svc.api.patch(
      '/v1/workspace',
      // The help center stays off (the default) until the article is published: the editor says so.
      { settings: { csat_enabled: true } },
      h.tenant.as,
    );
    expect(ws.status, ws.text).toBe(200);
    slug = ws.body.slug;
    key = ws.body.widget_key;
    site = await hostSite(() => `<script src="${h.svc.url}/widget.js" data-key="${key}" async></script>`);
    siteOrigin = `http://127.0.0.1:${site.port}`;
    ({ page } = await h.newPage());
    await h.signIn(page, h.tenant.owner);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await new Promise<void>((r) => (site ? site.server.close(() => r()) : r()));
  });

  it('writes an article in the editor, saves a draft, publishes it, and the help center shows it with the bold word', async () => {
    await page.getByRole('link', { name: 'Knowledge base' }).click();
    await page.getByRole('heading', { name: 'Knowledge base', level: 1 }).waitFor();
    // A collection, made on the screen.
    await page.getByLabel('New collection').fill('Billing');
    await page.getByRole('button', { name: 'Add collection' }).click();
    await page.getByRole('link', { name: /^Billing/ }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    await page.getByRole('link', { name: /^Billing/ }).click();
    await page.getByRole('heading', { name: 'Articles in Billing' }).waitFor();

    await page.getByRole('link', { name: 'New article' }).click();
    await page.getByRole('heading', { name: 'New article' }).waitFor();
    expect(await page.getByLabel('Collection').inputValue()).not.toBe('');
    await page.getByLabel('Title').fill('How refunds work');
    const body = page.getByRole('textbox', { name: 'Body' });
    await body.click();
    await expect.poll(() => body.evaluate((el) => el.contains(el.ownerDocument.activeElement))).toBe(true);
    await page.keyboard.type('Refunds take five working days.');
    // Select "five" with the keyboard and make it bold with the toolbar.
    await page.keyboard.press('Home');
    for (let i = 0; i < 'Refunds take '.length; i++) await page.keyboard.press('ArrowRight');
    for (let i = 0; i < 'five'.length; i++) await page.keyboard.press('Shift+ArrowRight');
    const bold = page.getByRole('button', { name: 'Bold' });
    await bold.click();
    await expect.poll(() => bold.getAttribute('aria-pressed')).toBe('true');
    expect(await body.locator('strong').textContent()).toBe('five');
    // The command gives the focus back to the text in an animation frame: let it land first.
    await expect.poll(() => body.evaluate((el) => el.contains(el.ownerDocument.activeElement))).toBe(true);

    // The toolbar is one tab stop; the arrow keys move along it.
    await bold.focus();
    await page.keyboard.press('ArrowRight');
    // Radix's toolbar moves the focus in a timer after the key (a busy machine reads before it ran).
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null"))
      .toBe('Italic');
    // Under the title (the page's h1), the first heading of the body is an h2: the Subheading.
    await body.click();
    // The keys go to the editor only once it has the focus (a click on a busy machine lands later).
    await expect.poll(() => body.evaluate((el) => el.contains(el.ownerDocument.activeElement))).toBe(true);
    await page.keyboard.press('Control+End');
    // ProseMirror takes the caret the key moved from the next selection change, not at once: the
    // Enter waits until the editor's own selection is at the end of the text (a run pressed it
    // while the editor still had "five" selected and split the sentence there).
    await expect
      .poll(() =>
        body.evaluate((el) => {
          // TipTap keeps its editor on the editable element.
          const pm = (el.closest('.ProseMirror') ?? el.querySelector('.ProseMirror')) as unknown as {
            editor?: { state: { selection: { empty: boolean; to: number }; doc: { content: { size: number } } } };
          } | null;
          const st = pm?.editor?.state;
          return st ? st.selection.empty && st.selection.to === st.doc.content.size - 1 : null;
        }),
      )
      .toBe(true);
    await page.keyboard.press('Enter');
    await page.keyboard.type('Who pays the postage');
    await page.getByRole('button', { name: 'Subheading', exact: true }).click();
    expect(await body.locator('h2').textContent()).toBe('Who pays the postage');
    await page.getByRole('button', { name: 'Minor heading', exact: true }).click();
    expect(await body.locator('h3').textContent()).toBe('Who pays the postage');
    await page.getByRole('button', { name: 'Subheading', exact: true }).click();
    expect(await body.locator('h2').textContent()).toBe('Who pays the postage');

    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    await page.waitForURL((u) => /^\/knowledge-base\/articles\/[0-9a-f-]{36}$/.test(u.pathname));
    articleId = page.url().split('/').pop() ?? '';
    const draft = await h.svc.api.get(`/v1/kb/articles/${articleId}`, h.tenant.as);
    expect(draft.body.status).toBe('draft');
    expect(draft.body.body_html).toContain('<strong>five</strong>');
    expect(draft.body.slug).toBe('how-refunds-work');
    // A draft is not on the help center; its preview renders here.
    expect((await fetch(`${h.svc.url}/hc/${slug}/articles/how-refunds-work`)).status).toBe(404);
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('dialog', { name: 'Preview: How refunds work' });
    await preview.locator('strong', { hasText: 'five' }).waitFor();
    await page.getByRole('button', { name: 'Close preview' }).click();

    // A slug another article has is the API's 409, said at the field.
    const other = await h.svc.api.post('/v1/kb/articles', { title: 'Taken', slug: 'taken-slug' }, h.tenant.as);
    expect(other.status).toBe(201);
    await page.getByLabel('Address (slug)').fill('taken-slug');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('An article with this slug already exists.').waitFor();
    await page.getByLabel('Address (slug)').fill('refunds');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    expect((await h.svc.api.get(`/v1/kb/articles/${articleId}`, h.tenant.as)).body.slug).toBe('refunds');

    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'app-kb-editor');

    await page.getByRole('button', { name: 'Publish' }).click();
    const said = page.getByRole('status').filter({ hasText: 'Published, but the help center is off' });
    await said.waitFor();
    expect(await said.textContent()).toBe(
      'Published, but the help center is off: turn it on in Settings → Help center.',
    );
    expect((await h.svc.api.get(`/v1/kb/articles/${articleId}`, h.tenant.as)).body.status).toBe('published');
    expect(await page.getByText('it is on the help center').count()).toBe(0);
    // Its link leads to the switch.
    await said.getByRole('link', { name: 'Settings → Help center' }).click();
    await page.getByRole('heading', { name: 'Help center', level: 1 }).waitFor();
    await page.getByLabel('Help center on').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^Saved\./).waitFor();
    expect((await h.svc.api.get('/v1/workspace', h.tenant.as)).body.settings.help_center_enabled).toBe(true);
    await page.goto(`${h.svc.url}/knowledge-base/articles/${articleId}`);
    const view = page.getByRole('link', { name: /View on the help center/ });
    const href = await view.getAttribute('href');
    expect(href).toBe(`${h.svc.url}/hc/${slug}/articles/refunds`);
    expect(await view.getAttribute('target')).toBe('_blank');
    const [pub] = await Promise.all([page.context().waitForEvent('page'), view.click()]);
    await pub.waitForLoadState();
    await pub.getByRole('heading', { name: 'How refunds work' }).waitFor();
    expect(await pub.locator('strong', { hasText: 'five' }).count()).toBe(1);
    expect(await pub.getByText('Refunds take five working days.').count()).toBe(1);
    await pub.close();

    // 360 px: the editor fits.
    await page.setViewportSize({ width: 360, height: 740 });
    await page.getByRole('button', { name: 'Bold' }).waitFor();
    expect(await noOverflow()).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 800 });

    // The article list shows it published, with its views.
    await page.getByRole('link', { name: '← Knowledge base' }).click();
    const row = page.getByRole('row', { name: /How refunds work/ });
    await row.waitFor();
    expect(await row.getByText('Published').count()).toBe(1);
  }, 120_000);

  it('changes the help center title in its settings, and the public help center shows it', async () => {
    await page.goto(`${h.svc.url}/settings/help-center`);
    await page.getByRole('heading', { name: 'Help center', level: 1 }).waitFor();
    // The heading is drawn before the workspace arrives: wait for the form's address.
    await page.getByRole('link', { name: new RegExp(`/hc/${slug}`) }).waitFor();
    expect(await page.getByLabel('Help center on').isChecked()).toBe(true);
    await page.getByLabel('Title').fill('Acme Answers');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^Saved\./).waitFor();
    expect((await h.svc.api.get('/v1/workspace', h.tenant.as)).body.settings.help_center_title).toBe('Acme Answers');
    expect(await h.violations(page)).toBe('[]');
    const pub = await page.context().newPage();
    await pub.goto(`${h.svc.url}/hc/${slug}`);
    await pub.getByText('Acme Answers').first().waitFor();
    expect(await pub.title()).toContain('Acme Answers');
    await pub.close();
  });

  it('saves the widget settings (greeting, an allowed website) and the widget greets with it', async () => {
    await page.goto(`${h.svc.url}/settings/widget`);
    await page.getByRole('heading', { name: 'Chat widget', level: 1 }).waitFor();
    await page.getByText(`data-key="${key}"`).waitFor();
    await page.getByLabel('Greeting').fill('Hello! How can we help with your order?');
    await page.getByLabel('Add a website').fill('ftp://nope');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('An origin is scheme://host[:port]').waitFor();
    await page.getByLabel('Add a website').fill(`${siteOrigin}/`);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('code', { hasText: siteOrigin }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^Saved\./).waitFor();
    const settings = (await h.svc.api.get('/v1/widget/settings', h.tenant.as)).body;
    expect(settings.greeting).toBe('Hello! How can we help with your order?');
    expect(settings.allowed_origins).toEqual([siteOrigin]);
    expect(await h.violations(page)).toBe('[]');

    visitor = await h.newPage();
    await visitor.page.goto(`${siteOrigin}/`);
    await visitor.page.getByRole('button', { name: 'Open chat' }).click();
    await visitor.page.getByText('Hello! How can we help with your order?').first().waitFor();
  });

  it('a visitor starts a chat: it arrives live in Chats, typing goes both ways, the answer reaches the widget', async () => {
    await page.getByRole('navigation', { name: 'Workspace tools' }).getByRole('link', { name: 'Chats' }).click();
    await page.getByRole('heading', { name: 'Chats', level: 1 }).waitFor();
    await page.getByText('No chats yet.').waitFor();
    expect(await h.violations(page)).toBe('[]');

    const v = visitor.page;
    const composer = v.getByLabel('Message', { exact: true });
    await composer.fill('Where is my order 1042?');
    await v.getByRole('button', { name: 'Send' }).click();

    // Live: the conversation appears, unread, without a reload.
    const row = page.getByRole('link', { name: /Visitor.*Unread.*Where is my order 1042\?/ });
    await row.waitFor({ timeout: 10_000 });
    await row.click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Where is my order 1042?').waitFor();
    expect(await page.getByText('Unread').count()).toBe(0);

    // The visitor types: the agent sees it.
    await composer.pressSequentially('Also', { delay: 20 });
    await page.getByText('Visitor is typing…').waitFor({ timeout: 5000 });
    // The agent types: the visitor sees it.
    const reply = page.getByLabel('Reply to Visitor');
    await reply.pressSequentially('It left', { delay: 20 });
    await v.getByText('Olivia Owner is typing…').waitFor({ timeout: 5000 });
    await reply.fill('It left our warehouse this morning.');
    await reply.press('Enter');
    await v.getByText('It left our warehouse this morning.').waitFor({ timeout: 5000 });
    await page.getByRole('log', { name: 'Messages' }).getByText('It left our warehouse this morning.').waitFor();

    // The visitor's next message arrives live in the open conversation.
    await composer.fill('Thanks!');
    await v.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Thanks!').waitFor({ timeout: 5000 });

    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'app-chat');

    // Solve it; the visitor rates the help (the rating link the widget shows), and the agent sees it.
    const number = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('button', { name: 'Solve' }).click();
    await expect
      .poll(async () => (await h.svc.api.get(`/v1/tickets/${number}`, h.tenant.as)).body.status)
      .toBe('solved');
    const visitorToken = await v.evaluate<string | null>(`localStorage.getItem('helpdesk-widget:${key}')`);
    const convs = await fetch(`${h.svc.url}/v1/widget/conversations`, {
      headers: { authorization: `Visitor ${visitorToken}` },
    }).then((r) => r.json() as Promise<{ data: Array<{ csat_url: string | null }> }>);
    const csatUrl = convs.data[0]?.csat_url;
    expect(csatUrl).toBeTruthy();
    const rated = await fetch(`${h.svc.url}/v1/csat/${csatUrl?.split('/').pop()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ score: 5, comment: 'Quick and kind' }),
    });
    expect(rated.status).toBeLessThan(300);
    await page.getByText('Rated 5 out of 5 (Very happy): “Quick and kind”').waitFor({ timeout: 5000 });

    // The full ticket says the rating in the same words, and names the visitor as Chats does.
    await page.goto(`${h.svc.url}/tickets/${number}`);
    const details = page.getByRole('complementary', { name: 'Ticket details' });
    await details.getByText('Customer rating: 5 out of 5 (Very happy): “Quick and kind”').waitFor();
    await page.getByText('The customer rated the support 5 out of 5 (Very happy)', { exact: false }).waitFor();
    await details.locator('.person-name', { hasText: /^Visitor$/ }).waitFor();
    await page
      .locator('.message-inbound header strong', { hasText: /^Visitor$/ })
      .first()
      .waitFor();
    await page.goto(`${h.svc.url}/inbox?view=solved`);
    expect(await page.locator('li[data-ticket-id] .who').first().textContent()).toBe('Visitor');
    // The sign-in screen's refresh without a session (401) and the slug taken on purpose (409) are expected.
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)|409 \(Conflict\)/.test(e))).toEqual([]);
  });
});
