// Settings → Billing in a real browser (test/support/app-harness.ts) against a service with Stripe
// configured to the stand-in (test/support/stripe-standin: its checkout page has Pay (Subscribe,
// Save card) and Cancel, Pay sends the signed events to the service's webhook unless the test holds
// them back, then both go back to the app; its portal page links back) and the OpenAI stand-in as
// its AI provider. A draft that costs more than the free allowance empties the balance; the next
// one is refused (402 ai_balance_empty) and the composer says what to do: buy more in Settings →
// Billing (a link, owners) or ask an admin (an agent). The owner sees the free plan, the AI balance
// and the usage report; buys AI credit through the stand-in's Pay page and comes back to
// ?top_up=success, where the page says the payment was received and, once the webhook credited it,
// shows the credit; a canceled checkout says nothing was charged; auto-recharge without a saved
// card is refused with the API's words (409), a threshold out of range at its field (422), nothing
// changed. An agent sees the plan only. Save a card and Upgrade (monthly, yearly) and Manage
// subscription send the browser to exactly the url the API answered; ?payment_method= and
// ?checkout= returns say what happened; a paid subscription shows Pro only once Stripe's signed
// events arrive (held back, then sent), past_due keeps Pro with what to do. A self-hosted instance
// (no Stripe) says so, AI unlimited, with the usage report and nothing to buy. axe-core on each
// screen; SCREENSHOTS=1 writes docs/screenshots/settings-billing.png.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerTicket } from '../../modules/ai/features-setup.js';
import { addPrices } from '../../modules/billing/stripe-setup.js';
import { dismissMailNotice } from '../../support/ai-app.js';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { addMember, type Member, type ReqOpts } from '../../support/helpers.js';
import { type StripeStandIn, startStripeStandIn } from '../../support/stripe-standin/index.js';

const KEY = 'sk-standin-billing-app-0000';

describe.runIf(browserAvailable())('Settings → Billing', () => {
  let stripe: StripeStandIn;
  let ai: OpenAiStandIn;
  let ticketNumber: number;
  let agent: Member;
  let h: AppHarness;
  let page: Page;
  let as: ReqOpts;

  const billing = async () => {
    const r = await h.svc.api.get('/v1/billing', as);
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const region = (p: Page, name: string) => p.getByRole('region', { name, exact: true });
  const openBilling = async (p: Page) => {
    await p.goto(`${h.svc.url}/settings`);
    await p.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Billing', exact: true }).click();
    await p.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    await region(p, 'Plan').waitFor();
  };

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    addPrices(stripe);
    ai = await startOpenAiStandIn({ keys: [KEY] });
    h = await startAppHarness('app_billing', {
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: KEY,
      AI_MODEL: 'gpt-4.1',
      AI_FAST_MODEL: 'gpt-4.1-mini',
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      STRIPE_API_BASE: stripe.url,
      STRIPE_PRICE_PRO_MONTH: 'price_pro_month',
      STRIPE_PRICE_PRO_YEAR: 'price_pro_year',
      STRIPE_PRICE_AI_TOP_UP: 'price_ai_top_up',
    });
    stripe.webhookUrl = `${h.svc.url}/v1/billing/webhook`;
    as = h.tenant.as;
    const off = await h.svc.api.patch('/v1/triage', { auto_triage: false }, as);
    expect(off.status, off.text).toBe(200);
    const { id } = await customerTicket(h.svc, h.tenant, 'Where is the refund for my order 1001?');
    ticketNumber = (await h.svc.api.get(`/v1/tickets/${id}`, as)).body.number;
    ({ page } = await h.newPage());
    await h.signIn(page, h.tenant.owner);
    await dismissMailNotice(page);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await stripe?.stop();
    await ai?.stop();
  });

  const openTicket = async (p: Page) => {
    await p.goto(`${h.svc.url}/tickets/${ticketNumber}`);
    await p.getByRole('heading', { name: new RegExp(`^#${ticketNumber} `) }).waitFor();
    await p.getByRole('button', { name: /^Draft a reply/ }).waitFor();
  };

  it('out of AI credit, a draft says what to do: buy more in Settings → Billing (owners), ask an admin (others)', async () => {
    // One draft whose tokens cost more than the free allowance: the balance goes to 0.
    await openTicket(page);
    ai.answer({ text: 'Hello Jane, your refund left today.', usage: { input_tokens: 2_000_000, output_tokens: 1000 } });
    await page.getByRole('button', { name: /^Draft a reply/ }).click();
    await page.getByRole('status').filter({ hasText: 'Draft ready' }).waitFor();
    await expect.poll(async () => (await billing()).ai.remaining_usd).toBe(0);
    // The next one is refused before the model is called (402 ai_balance_empty).
    const calls = ai.requests.length;
    await page.getByRole('button', { name: /^Draft a reply/ }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Your workspace is out of AI credit — buy more in' });
    await alert.waitFor();
    expect(ai.requests.length).toBe(calls);
    expect(await h.violations(page)).toBe('[]');
    await alert.getByRole('link', { name: 'Settings → Billing' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing');
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();

    agent = await addMember(h.svc, h.tenant, 'agent', 'Alex Agent');
    const other = await h.newPage();
    await h.signIn(other.page, agent);
    await openTicket(other.page);
    await other.page.getByRole('button', { name: /^Draft a reply/ }).click();
    const told = other.page.getByRole('alert').filter({ hasText: 'Your workspace is out of AI credit — ask an admin' });
    await told.waitFor();
    expect(await told.getByRole('link').count()).toBe(0);
    await other.context.close();
  });

  it('the owner sees the free plan and the AI balance, buys AI credit at Stripe and sees it once Stripe confirms it', async () => {
    const before = await billing();
    expect(before).toMatchObject({ plan: 'free', billing_enabled: true });
    expect(before.ai).toMatchObject({ purchased_usd: 0, remaining_usd: 0 });
    await openBilling(page);
    const plan = region(page, 'Plan');
    expect(await plan.textContent()).toMatch(/PlanFree/);
    await plan.getByRole('button', { name: /^Upgrade to Pro monthly/ }).waitFor();
    await plan.getByRole('button', { name: /^Upgrade to Pro yearly/ }).waitFor();
    const balance = region(page, 'AI balance');
    expect(await balance.textContent()).toMatch(/Allowance this month\$0\.50/);
    expect(await balance.textContent()).toMatch(/Purchased\$0\.00/);
    expect(await balance.textContent()).toMatch(/Remaining\$0\.00/);
    // The usage report: the draft above, by day (a chart and its table), feature, member and model.
    const usage = region(page, 'AI usage this month');
    await usage.getByRole('table', { name: 'By day' }).waitFor();
    expect(await usage.getByRole('table', { name: 'By feature' }).textContent()).toMatch(/Reply drafts/);
    expect(await usage.getByRole('table', { name: 'By member' }).textContent()).toMatch(/Olivia Owner/);
    expect(await usage.getByRole('table', { name: 'By model' }).textContent()).toMatch(/gpt-4\.1This service/);
    expect(await h.violations(page)).toBe('[]');

    // Two top-ups: Stripe's page, Pay, and back to the app.
    await page.getByLabel(/^AI credit to buy/).fill('2');
    await page.getByRole('button', { name: 'Buy AI credit' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${stripe.url}/checkout/`));
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing' && u.search === '?top_up=success');
    await page
      .getByRole('status')
      .filter({ hasText: 'Payment received; the AI credit shows here once Stripe confirms it.' })
      .waitFor();
    // The credit shows once the webhook has credited it (the page fetches again until it does).
    await expect.poll(async () => (await billing()).ai.purchased_usd, { timeout: 30_000 }).toBe(20);
    await expect.poll(() => region(page, 'AI balance').textContent(), { timeout: 30_000 }).toMatch(/Purchased\$20\.00/);
    expect(await region(page, 'AI balance').textContent()).toMatch(/Remaining\$20\.00/);
    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'settings-billing');

    // A checkout canceled at Stripe: back with nothing charged.
    await page.getByRole('button', { name: 'Buy AI credit' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${stripe.url}/checkout/`));
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((u) => u.search === '?top_up=canceled');
    await page
      .getByRole('status')
      .filter({ hasText: 'Checkout canceled: nothing was charged for the AI credit.' })
      .waitFor();
    expect((await billing()).ai.purchased_usd).toBe(20);
  });

  it('auto-recharge: refused without a saved card, a threshold out of range at its field; nothing changed', async () => {
    await openBilling(page);
    const form = page.getByRole('form', { name: 'Auto-recharge' });
    await form.getByLabel('Recharge automatically').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').filter({ hasText: 'Save a card first' }).waitFor();
    expect((await billing()).auto_recharge.enabled).toBe(false);

    await form.getByLabel('Recharge automatically').uncheck();
    const threshold = form.getByLabel('When the balance is under (dollars)');
    await threshold.fill('2000');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => threshold.getAttribute('aria-invalid')).toBe('true');
    expect((await billing()).auto_recharge.threshold_usd).not.toBe(2000);
    expect(await h.violations(page)).toBe('[]');

    await threshold.fill('3');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await billing()).auto_recharge).toMatchObject({ enabled: false, threshold_usd: 3 });
  });

  it('an agent sees the plan only', async () => {
    const other = await h.newPage();
    await h.signIn(other.page, agent);
    await other.page.goto(`${h.svc.url}/settings/billing`);
    await other.page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    const plan = region(other.page, 'Plan');
    await plan.waitFor();
    expect(await plan.textContent()).toMatch(/PlanFree/);
    await other.page.getByText('Owners and admins see the AI balance and usage, and manage billing.').waitFor();
    expect(await other.page.getByRole('button', { name: /Upgrade|Buy AI credit|Save a card|Manage/ }).count()).toBe(0);
    expect(await region(other.page, 'AI balance').count()).toBe(0);
    expect(await region(other.page, 'AI usage this month').count()).toBe(0);
    expect(await h.violations(other.page)).toBe('[]');
    await other.context.close();
  });

  /**
   * Clicks a button that asks the API for one of Stripe's pages: the browser goes to exactly the
   * url the API answered (the answer read on its way to the page, passed on unchanged).
   */
  const follow = async (p: Page, button: ReturnType<Page['getByRole']>, path: string): Promise<string> => {
    let answered: string | null = null;
    const pattern = `${h.svc.url}${path}`;
    await p.route(pattern, async (route) => {
      const r = await route.fetch();
      const text = await r.text();
      if (r.status() === 200) answered = (JSON.parse(text) as { url: string }).url;
      await route.fulfill({ response: r, body: text });
    });
    try {
      await button.click();
      await p.waitForURL((u) => answered !== null && u.href === answered);
    } finally {
      await p.unroute(pattern);
    }
    return answered as unknown as string;
  };

  it('Save a card: the setup checkout at Stripe; canceled says no card was saved; saved, auto-recharge can use it', async () => {
    await openBilling(page);
    const save = page.getByRole('button', { name: 'Save a card' });
    const url = await follow(page, save, '/v1/billing/payment-method');
    expect(url.startsWith(`${stripe.url}/checkout/`)).toBe(true);
    expect(stripe.sessions.get(url.split('/').pop() as string)?.mode).toBe('setup');
    await page.getByRole('heading', { name: 'Save card' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing' && u.search === '?payment_method=canceled');
    await page.getByRole('status').filter({ hasText: 'Checkout canceled: no card was saved.' }).waitFor();
    expect(await h.violations(page)).toBe('[]');

    await follow(page, page.getByRole('button', { name: 'Save a card' }), '/v1/billing/payment-method');
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing' && u.search === '?payment_method=success');
    await page
      .getByRole('status')
      .filter({ hasText: 'Card received; auto-recharge can use it once Stripe confirms it.' })
      .waitFor();
    // Stripe confirmed the card (its events came with Pay): auto-recharge now turns on.
    const form = page.getByRole('form', { name: 'Auto-recharge' });
    await form.getByLabel('Recharge automatically').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await billing()).auto_recharge).toMatchObject({ enabled: true, failure: null });
    // Off again: nothing below charges the card.
    await form.getByLabel('Recharge automatically').uncheck();
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await billing()).auto_recharge.enabled).toBe(false);
  });

  it('Upgrade monthly and yearly go to Stripe; canceled says so; paid, the plan turns Pro only when Stripe’s signed event arrives', async () => {
    await openBilling(page);
    const plan = region(page, 'Plan');
    // Monthly: Stripe's checkout for the monthly price, canceled there.
    const monthly = await follow(
      page,
      plan.getByRole('button', { name: /^Upgrade to Pro monthly \(\$15\.00 a seat a month\)/ }),
      '/v1/billing/checkout',
    );
    expect(stripe.sessions.get(monthly.split('/').pop() as string)).toMatchObject({
      mode: 'subscription',
      line_items: [{ price: 'price_pro_month' }],
    });
    await page.getByRole('heading', { name: 'Subscribe' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing' && u.search === '?checkout=canceled');
    await page
      .getByRole('status')
      .filter({ hasText: 'Checkout canceled: nothing was charged for the subscription.' })
      .waitFor();
    expect(await region(page, 'Plan').textContent()).toMatch(/PlanFree/);

    // Yearly, paid; Stripe's events held back: the return alone changes nothing.
    const hook = stripe.webhookUrl;
    stripe.webhookUrl = null;
    const yearly = await follow(
      page,
      region(page, 'Plan').getByRole('button', { name: /^Upgrade to Pro yearly \(\$150\.00 a seat a year\)/ }),
      '/v1/billing/checkout',
    );
    const session = yearly.split('/').pop() as string;
    expect(stripe.sessions.get(session)).toMatchObject({ line_items: [{ price: 'price_pro_year' }] });
    const mark = stripe.events.length;
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing' && u.search === '?checkout=success');
    await page
      .getByRole('status')
      .filter({ hasText: 'Subscription paid; the plan changes to Pro here once Stripe confirms it.' })
      .waitFor();
    await region(page, 'Plan').waitFor();
    expect(await region(page, 'Plan').textContent()).toMatch(/PlanFree/);
    expect((await billing()).plan).toBe('free');
    expect(await h.violations(page)).toBe('[]');

    // Stripe's signed events arrive: the page (fetching again) turns Pro.
    stripe.webhookUrl = hook;
    const held = stripe.events.slice(mark);
    expect(held.map((e) => e.type)).toEqual(['customer.subscription.created', 'checkout.session.completed']);
    for (const e of held) expect((await stripe.send(e)).status).toBe(200);
    await page
      .getByRole('status')
      .filter({ hasText: 'Stripe confirmed the subscription: the workspace is on Pro.' })
      .waitFor({ timeout: 30_000 });
    const pro = await region(page, 'Plan').textContent();
    expect(pro).toMatch(/PlanPro/);
    expect(pro).toMatch(/StatusActive/);
    expect(pro).toMatch(/BilledYearly/);
    expect(pro).toMatch(/Members unlimited · Mailboxes unlimited/);
    expect(
      await region(page, 'Plan')
        .getByRole('button', { name: /^Upgrade/ })
        .count(),
    ).toBe(0);
    expect(await h.violations(page)).toBe('[]');
  });

  it('Pro: Manage subscription opens Stripe’s portal and comes back; past_due keeps Pro and says what to do; an agent sees Pro only', async () => {
    await openBilling(page);
    expect(await region(page, 'Plan').textContent()).toMatch(/PlanPro/);
    // Manage subscription: Stripe's customer portal, which returns to the page.
    const portal = await follow(
      page,
      region(page, 'Plan').getByRole('button', { name: 'Manage subscription' }),
      '/v1/billing/portal',
    );
    expect(portal.startsWith(`${stripe.url}/portal/`)).toBe(true);
    await page.getByRole('heading', { name: 'Customer portal' }).waitFor();
    await page.getByRole('link', { name: 'Return' }).click();
    await page.waitForURL((u) => u.pathname === '/settings/billing' && u.search === '');
    await region(page, 'Plan').waitFor();
    expect(await region(page, 'Plan').textContent()).toMatch(/PlanPro/);

    // A renewal's payment failed and Stripe retries it (past_due): still Pro, and the page says what to do.
    const subId = [...stripe.subscriptions.keys()].at(-1) as string;
    expect((await stripe.send(stripe.updateSubscription(subId, { status: 'past_due' }))).status).toBe(200);
    await page.reload();
    await page.getByText('The last payment failed and Stripe is retrying it: the workspace stays on Pro').waitFor();
    expect(await region(page, 'Plan').textContent()).toMatch(/PlanPro.*StatusPayment past due/);
    expect(await h.violations(page)).toBe('[]');

    // An agent sees the plan, Pro, and nothing to manage.
    const other = await h.newPage();
    await h.signIn(other.page, agent);
    await other.page.goto(`${h.svc.url}/settings/billing`);
    await region(other.page, 'Plan').waitFor();
    expect(await region(other.page, 'Plan').textContent()).toMatch(/PlanPro/);
    expect(await other.page.getByRole('button', { name: /Upgrade|Buy AI credit|Save a card|Manage/ }).count()).toBe(0);
    expect(await region(other.page, 'AI balance').count()).toBe(0);
    expect(await h.violations(other.page)).toBe('[]');
    await other.context.close();
  });

  it('reported no page errors', () => {
    // 401: the sign-in page asking who is signed in; 402/409/422: refused on purpose above.
    expect(
      h.errors.filter(
        (e) => !/401 \(Unauthorized\)|402 \(Payment Required\)|409 \(Conflict\)|422 \(Unprocessable/.test(e),
      ),
    ).toEqual([]);
  });
});

describe.runIf(browserAvailable())('Settings → Billing on a self-hosted instance (no Stripe)', () => {
  let h: AppHarness;

  beforeAll(async () => {
    h = await startAppHarness('app_billing_self');
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('says the instance is self-hosted with AI unlimited, shows the usage report, and offers nothing to buy', async () => {
    const { page } = await h.newPage();
    await h.signIn(page, h.tenant.owner);
    await page.goto(`${h.svc.url}/settings/billing`);
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    await page.getByText('This instance is self-hosted: there is no plan to buy, and AI is unlimited').waitFor();
    expect(await page.getByRole('region', { name: 'Plan', exact: true }).textContent()).toMatch(/PlanSelf-hosted/);
    const usage = page.getByRole('region', { name: 'AI usage this month', exact: true });
    await usage.getByText('No AI calls this month yet.').waitFor();
    expect(await page.getByRole('button', { name: /Upgrade|Buy AI credit|Save a card|Manage/ }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'AI balance', exact: true }).count()).toBe(0);
    expect(await h.violations(page)).toBe('[]');
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)/.test(e))).toEqual([]);
  });
});
