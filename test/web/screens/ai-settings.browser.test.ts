// Settings → AI in a real browser (test/support/app-harness.ts), against a service whose provider is
// the OpenAI stand-in: the status, the models with their typical cost, tone, instructions, reply
// language and the widget's cap saved and read back through the API; the API's 422 shown at its
// field with nothing changed; the workspace's own key saved (its last 4 shown), refused by the
// provider on its first call and then explained, replaced, removed; an agent sees the status only.
// Then a second service without any provider: no AI action anywhere (composer, details, thread,
// a solved ticket, the shortcuts, Settings for an agent), the owner told how to turn it on.
// axe-core on each screen; SCREENSHOTS=1 writes docs/screenshots/ai-settings.png.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AI_APP_KEY, dismissMailNotice, startAiApp } from '../../support/ai-app.js';
import type { OpenAiStandIn } from '../../support/ai-standin/index.js';
import type { AppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { uniqueEmail } from '../../support/builders.js';
import { addMember, type Member, newTenant, type ReqOpts, type Service, startService } from '../../support/helpers.js';

/** A customer's chat: a ticket whose first message is theirs. */
async function customerTicket(svc: Service, as: ReqOpts, text: string): Promise<{ id: string; number: number }> {
  const key = (await svc.api.get('/v1/workspace', as)).body.widget_key as string;
  const s = await svc.api.post('/v1/widget/session', { key, name: 'Pat Client', email: uniqueEmail('pat') });
  expect(s.status, s.text).toBe(200);
  const conv = await svc.api.post(
    '/v1/widget/conversations',
    { body: text },
    { headers: { authorization: `Visitor ${s.body.visitor_token}` } },
  );
  expect(conv.status, conv.text).toBe(201);
  const t = await svc.api.get(`/v1/tickets/${conv.body.id}`, as);
  return { id: t.body.id, number: t.body.number };
}

async function signInAt(page: Page, url: string, who: { email: string; password: string }) {
  await page.goto(`${url}/login`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/inbox');
}

describe.runIf(browserAvailable())('Settings → AI, and no AI anywhere without a provider', () => {
  let ai: OpenAiStandIn;
  let h: AppHarness;
  let page: Page;
  let as: ReqOpts;
  let agent: Member;

  const api = () => h.svc.api;
  const config = async () => (await api().get('/v1/ai/config', as)).body;
  const field = (label: string) => page.getByLabel(label, { exact: true });

  beforeAll(async () => {
    // The own key's address is the stand-in on loopback.
    ({ ai, h } = await startAiApp('app_ai_settings', { WEBHOOK_ALLOW_PRIVATE: 'true' }));
    as = h.tenant.as;
    agent = await addMember(h.svc, h.tenant, 'agent', 'Alex Agent');
    ({ page } = await h.newPage());
    await h.signIn(page, h.tenant.owner);
    await dismissMailNotice(page);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await ai?.stop();
  });

  it('shows the provider and the models with their cost, and saves the choices', async () => {
    await page.goto(`${h.svc.url}/settings`);
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'AI', exact: true }).click();
    await page.getByRole('heading', { name: 'AI', level: 1 }).waitFor();
    const status = page.getByRole('region', { name: 'Status' });
    await status.getByText('On', { exact: true }).waitFor();
    await status.getByText("OpenAI-compatible, the server's").waitFor();
    const models = field('Drafts and answers');
    await expect.poll(() => models.locator('option').count()).toBeGreaterThan(1);
    expect(await models.locator('option').first().textContent()).toMatch(/^The server's default/);
    expect(await models.locator('option').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/a reply$|price not known$/)]),
    );
    expect(await h.violations(page)).toBe('[]');

    await field('Tone').selectOption('professional');
    await field('Instructions').fill('Sign off as the Acme team.');
    await field('Reply language').selectOption('fr');
    await field("Chat widget's monthly limit (US dollars)").fill('25');
    await field('Summarize tickets as they change').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const c = await config();
    expect(c.features).toMatchObject({
      tone: 'professional',
      instructions: 'Sign off as the Acme team.',
      reply_language: 'fr',
      auto_summarize: true,
    });
    expect((await api().patch('/v1/ai/settings', {}, as)).body.widget_monthly_cap_usd).toBe(25);
    await docsScreenshot(page, 'ai-settings');
  });

  it('shows the API’s refusal at its field and changes nothing', async () => {
    const cap = field("Chat widget's monthly limit (US dollars)");
    await cap.fill('20000');
    await field('Tone').selectOption('concise');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => cap.getAttribute('aria-invalid')).toBe('true');
    const message = page.locator(`#${await cap.getAttribute('id')}-error`);
    expect(await message.textContent()).toMatch(/10000|10,000/);
    expect((await config()).features.tone).toBe('professional');
    expect(await h.violations(page)).toBe('[]');
    await cap.fill('25');
    await field('Tone').selectOption('professional');
  });

  it('saves an own key, explains it once the provider refused it, replaces and removes it', async () => {
    const key = page.getByRole('region', { name: 'Your own provider key' });
    await key.getByLabel('Server address (optional)').fill('ftp://example.com');
    await key.getByLabel('API key').fill('sk-wrong-key-9876');
    await key.getByRole('button', { name: 'Save the key' }).click();
    await key.getByText('must be an http or https URL').waitFor();
    expect((await config()).own_key).toBeNull();

    await key.getByLabel('Server address (optional)').fill(ai.url);
    await key.getByRole('button', { name: 'Save the key' }).click();
    await key.getByRole('status').filter({ hasText: 'Key ending in 9876 saved' }).waitFor();
    await key.getByText('In use', { exact: true }).waitFor();
    expect(await key.getByLabel('API key').inputValue()).toBe('');
    // Its first call: the stand-in refuses the key, which is turned off.
    const call = await api().post('/v1/ai/rewrite', { html: '<p>hello there</p>', mode: 'shorter' }, as);
    expect(call.status).not.toBe(200);
    await expect.poll(async () => (await config()).own_key?.status).toBe('failed');
    await page.reload();
    await key.getByText(/Turned off: the provider refused it/).waitFor();
    expect(await h.violations(page)).toBe('[]');

    await key.getByLabel('API key').fill(AI_APP_KEY);
    await key.getByRole('button', { name: 'Replace the key' }).click();
    await key.getByRole('status').filter({ hasText: 'Key ending in 0000 saved' }).waitFor();
    await key.getByText('In use', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Status' }).getByText('OpenAI-compatible, your own key').waitFor();

    await key.getByRole('button', { name: 'Remove the key' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove the key' }).click();
    await key.getByRole('status').filter({ hasText: 'Key removed.' }).waitFor();
    expect((await config()).own_key).toBeNull();
  });

  it('shows an agent the status only', async () => {
    const { page: p } = await h.newPage();
    await h.signIn(p, agent);
    await p.goto(`${h.svc.url}/settings/ai`);
    await p.getByText('Only owners and admins can change the AI settings.').waitFor();
    expect(await p.getByRole('button', { name: 'Save', exact: true }).count()).toBe(0);
    expect(await h.violations(p)).toBe('[]');
    await p.context().close();
  });

  describe('a service without a provider', () => {
    let bare: Service;
    let p: Page;
    let owner: { email: string; password: string };
    let bareAgent: Member;
    let t: { id: string; number: number };

    beforeAll(async () => {
      bare = await startService({ WEBHOOK_ALLOW_PRIVATE: 'true' });
      const tenant = await newTenant(bare.api);
      owner = tenant.owner;
      bareAgent = await addMember(bare, tenant, 'agent', 'Sam Agent');
      t = await customerTicket(bare, tenant.as, 'Hola, mi pedido no ha llegado.');
      const solved = await customerTicket(bare, tenant.as, 'Thanks, it works now.');
      expect((await bare.api.patch(`/v1/tickets/${solved.id}`, { status: 'solved' }, tenant.as)).status).toBe(200);
      const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
      p = await context.newPage();
      p.on('pageerror', (e) => h.errors.push(`pageerror: ${e.message}`));
      await signInAt(p, bare.url, owner);
      await p.goto(`${bare.url}/tickets/${solved.number}`);
      await p.getByRole('button', { name: /^Solve/ }).waitFor();
      expect(await p.getByRole('link', { name: /Draft an article/ }).count()).toBe(0);
    }, 60_000);

    afterAll(async () => {
      await p?.context().close();
      await bare?.stop();
    });

    it('offers no AI action on the ticket page, in the shortcuts or in an agent’s settings', async () => {
      await p.goto(`${bare.url}/tickets/${t.number}`);
      await p.getByRole('button', { name: 'Send', exact: true }).waitFor();
      await p.locator('.message-inbound').first().getByText('Hola, mi pedido').waitFor();
      for (const name of [/^Draft a reply/, /^Rewrite/, /^Translate/, /^Summarize/, /^Ask/]) {
        expect(await p.getByRole('button', { name }).count()).toBe(0);
      }
      expect(await p.getByRole('region', { name: 'AI', exact: true }).count()).toBe(0);
      expect(await p.getByRole('group', { name: 'AI', exact: true }).count()).toBe(0);
      await p.keyboard.press('?');
      await p.getByRole('dialog', { name: 'Keyboard shortcuts' }).getByText('Solve the ticket').waitFor();
      expect(await p.getByText('Draft a reply with AI').count()).toBe(0);
      await p.keyboard.press('Escape');
      expect(await h.violations(p)).toBe('[]');

      // The owner may still bring a key of the workspace's own: the section says so.
      await p.goto(`${bare.url}/settings/ai`);
      await p.getByText(/No AI provider/).waitFor();
      expect(await p.getByRole('region', { name: 'Your own provider key' }).count()).toBe(1);
      expect(await p.getByRole('form', { name: 'Settings' }).count()).toBe(0);

      // An agent is not shown the section at all.
      const other = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
      const q = await other.newPage();
      await signInAt(q, bare.url, bareAgent);
      await q.goto(`${bare.url}/settings`);
      await q.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Labels' }).waitFor();
      expect(await q.getByRole('link', { name: 'AI', exact: true }).count()).toBe(0);
      await other.close();
    });
  });

  it('reported no page errors', () => {
    // The sign-in screen's refresh without a session (401), and the API's refusals on purpose (422).
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)|422 \(Unprocessable/.test(e))).toEqual([]);
  });
});
