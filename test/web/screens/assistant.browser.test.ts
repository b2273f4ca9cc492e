// The assistant's panel in a real browser (test/support/app-harness.ts) against the service and its
// loop, with the OpenAI stand-in (test/support/ai-standin/) scripted to call tools: Shift+A opens
// the panel into its message box with the tips (a tip sends its prompt), Escape closes it and gives
// the focus back; a question runs a read tool whose step streams in with its tickets linked, then
// the text, with the person's screen in the model's prompt; a write comes back as an approval card
// (what, which ticket, status from → to) and Approve changes the ticket and shows the run's last
// words; a reply asked for shows its body and "This reaches the customer", and Deny sends nothing;
// the conversation renamed and deleted; everything done with the keyboard alone; the provider
// failing said in words with the message given back; the panel as the whole window at 360 px; the
// assistant turned off says how an admin turns it on. axe-core on each state; SCREENSHOTS=1 writes
// docs/screenshots/assistant-approval.png.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dismissMailNotice, startAiApp } from '../../support/ai-app.js';
import { gate, type OpenAiStandIn } from '../../support/ai-standin/index.js';
import type { AppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { uniqueEmail } from '../../support/builders.js';
import type { ReqOpts } from '../../support/helpers.js';

describe.runIf(browserAvailable())('the assistant panel', () => {
  let ai: OpenAiStandIn;
  let h: AppHarness;
  let page: Page;
  let as: ReqOpts;
  /** An email ticket about a refund. */
  let refund: { id: string; number: number; subject: string };

  const api = () => h.svc.api;
  const panel = (): Locator => page.getByRole('complementary', { name: 'Ollie' });
  /** The conversation's turns (the panel's header also shows its title). */
  const log = (): Locator => panel().getByRole('region', { name: 'Conversation' });
  const box = () => panel().getByRole('textbox', { name: 'Message Ollie' });
  const chats = () => ai.requests.filter((r) => r.path.endsWith('/chat/completions'));
  /** The user messages of the n-th chat request the stand-in received (0-based). */
  const promptOf = async (n: number): Promise<string> => {
    const r = await ai.request(n);
    return (r.body.messages as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === 'user')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
      .join('\n');
  };
  /** Nothing has the focus: the app's single keys work. */
  const blur = () => page.evaluate('document.activeElement && document.activeElement.blur()');
  /** The focused element: its tag and its words (or aria-label). */
  const focused = () =>
    page.evaluate(
      `(() => { const el = document.activeElement; return el ? el.tagName.toLowerCase() + ':' + (el.getAttribute('aria-label') ?? el.textContent.trim()) : ''; })()`,
    );
  /** Types a message in the panel's box and sends it with Enter. */
  const ask = async (text: string) => {
    await box().focus();
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
  };
  const ticketNow = async (id: string) => {
    const r = await api().get(`/v1/tickets/${id}`, as);
    expect(r.status, r.text).toBe(200);
    return r.body as { status: string };
  };

  beforeAll(async () => {
    ({ ai, h } = await startAiApp('app_assistant'));
    as = h.tenant.as;
    const on = await api().patch('/v1/ai/settings', { assistant: true }, as);
    expect(on.status, on.text).toBe(200);
    // A customer writes through the chat widget; the ticket is the owner's and waits for a reply.
    const key = (await api().get('/v1/workspace', as)).body.widget_key as string;
    const s = await api().post('/v1/widget/session', { key, name: 'Jeanne Client', email: uniqueEmail('jeanne') });
    expect(s.status, s.text).toBe(200);
    const conv = await api().post(
      '/v1/widget/conversations',
      { body: 'Hello, where is the refund of my order 1001?' },
      { headers: { authorization: `Visitor ${s.body.visitor_token}` } },
    );
    expect(conv.status, conv.text).toBe(201);
    const mine = await api().patch(`/v1/tickets/${conv.body.id}`, { assignee_id: h.tenant.owner.userId }, as);
    expect(mine.status, mine.text).toBe(200);
    const t = await api().post(
      '/v1/tickets',
      {
        subject: 'Refund not received',
        contact: { email: uniqueEmail('ravi'), name: 'Ravi Customer' },
        body_html: '<p>My refund for order 2002 has not arrived.</p>',
      },
      as,
    );
    expect(t.status, t.text).toBe(201);
    refund = { id: t.body.id, number: t.body.number, subject: t.body.subject };
    ({ page } = await h.newPage());
    await h.signIn(page, h.tenant.owner);
    await dismissMailNotice(page);
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await ai?.stop();
  });

  beforeEach(() => {
    expect(ai.pending()).toBe(0);
  });

  it('opens with Shift+A into the message box with the tips; Escape closes it and gives the focus back', async () => {
    await page.getByRole('button', { name: 'Ask Ollie' }).waitFor();
    await blur();
    await page.keyboard.press('Shift+A');
    await panel().waitFor();
    await expect.poll(() => box().evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    const tips = panel().getByRole('list', { name: 'Suggestions' });
    await tips.getByRole('button', { name: '1 of your tickets is waiting for your reply.' }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'hidden' });
    // Still the inbox: Escape closed the panel, nothing else.
    expect(new URL(page.url()).pathname).toBe('/inbox');

    // Opened by its button, closed by Escape: the focus is back on the button.
    const button = page.getByRole('button', { name: 'Ask Ollie' });
    await button.focus();
    await page.keyboard.press('Enter');
    await panel().waitFor();
    await expect.poll(() => box().evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'hidden' });
    await expect.poll(() => button.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    // The ? list names the key.
    await blur();
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.getByText('Open or close the assistant').waitFor();
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
  });

  it('a tip sends its prompt; a read tool’s step streams in with its tickets linked, then the text', async () => {
    await blur();
    await page.keyboard.press('Shift+A');
    await panel().waitFor();
    // A tip, chosen with the keyboard: its prompt is the message.
    const held = gate();
    ai.answer(
      { toolCalls: [{ name: 'search_tickets', arguments: { query: 'refund' } }] },
      { gate: held, text: 'Two tickets mention a refund.', chunks: ['Two tickets', ' mention a refund.'] },
    );
    const n = chats().length;
    const tip = panel().getByRole('button', { name: '1 of your tickets is waiting for your reply.' });
    await tip.focus();
    await page.keyboard.press('Enter');
    // The person's words, then the step: its label, Done, the tickets it found as links.
    await log().getByText('Which of my tickets are waiting for my reply?').waitFor();
    const steps = panel().getByRole('list', { name: 'Steps' });
    const found = steps.getByRole('link', { name: `#${refund.number} ${refund.subject}` });
    await found.waitFor();
    expect(await found.getAttribute('href')).toBe(`/tickets/${refund.number}`);
    await steps.getByText('Done', { exact: true }).first().waitFor();
    // The text streams: its first words while the stand-in holds the rest.
    await held.reached;
    await log().getByText('Two tickets', { exact: true }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    held.release();
    await log().getByText('Two tickets mention a refund.', { exact: true }).waitFor();
    // The model read the tip's prompt and the person's screen (the inbox).
    const prompt = await promptOf(n);
    expect(prompt).toContain('Which of my tickets are waiting for my reply?');
    expect(prompt).toContain('"page":"inbox"');
    // The conversation is titled from its first message.
    await panel().getByRole('heading', { level: 3 }).waitFor();
  });

  it('a write comes back as an approval card; Approve changes the ticket and the run’s last words show', async () => {
    // On the ticket's page: its id is in the screen the model reads.
    await page.goto(`${h.svc.url}/tickets/${refund.number}`);
    await page.getByRole('heading', { name: new RegExp(`^#${refund.number} `) }).waitFor();
    await blur();
    await page.keyboard.press('Shift+A');
    await panel().waitFor();
    await expect.poll(() => box().evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    ai.answer({ toolCalls: [{ name: 'update_ticket', arguments: { ticket: refund.id, status: 'solved' } }] });
    const n = chats().length;
    await ask('Solve this ticket');
    const card = panel()
      .getByRole('region')
      .filter({ has: page.getByRole('button', { name: 'Approve' }) })
      .last();
    await card.getByRole('button', { name: 'Approve' }).waitFor();
    await card.getByRole('link', { name: `#${refund.number} ${refund.subject}` }).waitFor();
    const row = card.getByRole('row', { name: /Status/ });
    expect(await row.textContent()).toBe('StatusOpenSolved');
    await card.getByText('This reaches the customer.').waitFor({ state: 'detached' });
    expect(await promptOf(n)).toContain(refund.id);
    // Nothing changed yet.
    expect((await ticketNow(refund.id)).status).toBe('open');
    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'assistant-approval');

    // Approve with the keyboard alone: back from the message box to the card's buttons (enabled
    // once the run has ended and the stored approval is shown).
    await expect.poll(() => card.getByRole('button', { name: 'Approve' }).isEnabled()).toBe(true);
    ai.answer({ text: `Done: #${refund.number} is solved.` });
    await box().focus();
    await page.keyboard.press('Shift+Tab'); // Deny
    await page.keyboard.press('Shift+Tab'); // Approve
    expect(await focused()).toBe('button:Approve');
    await page.keyboard.press('Enter');
    await log().getByText(`Done: #${refund.number} is solved.`).waitFor();
    await expect.poll(async () => (await ticketNow(refund.id)).status).toBe('solved');
    await panel().getByRole('button', { name: 'Approve' }).waitFor({ state: 'detached' });
    await panel().getByRole('list', { name: 'Steps' }).getByText('Approved', { exact: true }).first().waitFor();
    expect(await h.violations(page)).toBe('[]');
  });

  it('a reply shows its body and that it reaches the customer; Deny sends nothing', async () => {
    const before = (await api().get(`/v1/tickets/${refund.id}/messages`, as)).body.data.length as number;
    ai.answer({
      toolCalls: [
        {
          name: 'reply_to_ticket',
          arguments: { ticket: refund.id, body: 'Your refund was sent today; it reaches your card within five days.' },
        },
      ],
    });
    await ask('Tell the customer the refund is on its way');
    const card = panel()
      .getByRole('region')
      .filter({ has: page.getByRole('button', { name: 'Deny' }) })
      .last();
    await card.getByText('This reaches the customer.').waitFor();
    await card.getByText('Your refund was sent today; it reaches your card within five days.').waitFor();
    await card.getByRole('link', { name: `#${refund.number} ${refund.subject}` }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    ai.answer({ text: 'All right, I did not send it.' });
    await card.getByRole('button', { name: 'Deny' }).click();
    // The run's words, once: streamed, then as stored when the run ends (a run read both for a
    // moment on a loaded machine; what stays is one).
    await expect.poll(() => log().getByText('All right, I did not send it.').count()).toBe(1);
    await log().locator('[aria-busy="true"]').waitFor({ state: 'detached' });
    expect(await log().getByText('All right, I did not send it.').count()).toBe(1);
    await panel().getByRole('list', { name: 'Steps' }).getByText('Denied', { exact: true }).first().waitFor();
    const after = (await api().get(`/v1/tickets/${refund.id}/messages`, as)).body.data.length as number;
    expect(after).toBe(before);
  });

  it('renames and deletes a conversation, with the keyboard alone', async () => {
    const title = panel().getByRole('heading', { level: 3 });
    await title.waitFor();
    await panel().getByRole('button', { name: 'Rename' }).focus();
    await page.keyboard.press('Enter');
    const field = panel().getByRole('textbox', { name: 'Conversation title' });
    await expect.poll(() => field.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Refund follow-ups');
    await page.keyboard.press('Enter');
    await panel().getByRole('heading', { name: 'Refund follow-ups' }).waitFor();
    // Listed under its new name; the first conversation too.
    await panel().getByRole('button', { name: 'Conversations' }).click();
    const list = panel().getByRole('list', { name: 'Conversations' });
    await list.getByRole('button', { name: /Refund follow-ups/ }).waitFor();
    expect(await list.getByRole('listitem').count()).toBe(2);
    expect(await h.violations(page)).toBe('[]');
    await list.getByRole('button', { name: /Refund follow-ups/ }).click();

    await panel().getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await panel()
      .getByText(/Delete “Refund follow-ups”\?/)
      .waitFor();
    await panel().getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    // Gone: a new conversation with the tips, one conversation left.
    await panel().getByRole('list', { name: 'Suggestions' }).waitFor();
    const left = await api().get('/v1/assistant/sessions', as);
    expect(left.status, left.text).toBe(200);
    expect((left.body.data as Array<{ title: string }>).map((s) => s.title)).not.toContain('Refund follow-ups');
    expect(left.body.data).toHaveLength(1);
    await panel().getByRole('button', { name: 'Conversations' }).click();
    expect(await panel().getByRole('list', { name: 'Conversations' }).getByRole('listitem').count()).toBe(1);
    // Escape closes the list first (the panel stays).
    await page.keyboard.press('Escape');
    await panel().getByRole('list', { name: 'Conversations' }).waitFor({ state: 'detached' });
    await panel().waitFor();
  });

  it('says a failure in words and gives the message back; at 360 px the panel is the whole window', async () => {
    ai.answer({ status: 500 });
    await ask('Find the refund tickets');
    await panel().getByRole('alert').filter({ hasText: 'The AI provider did not answer.' }).waitFor();
    await expect.poll(() => box().inputValue()).toBe('Find the refund tickets');
    expect(await h.violations(page)).toBe('[]');
    try {
      await page.setViewportSize({ width: 360, height: 740 });
      await expect.poll(() => panel().evaluate((el) => Math.round(el.getBoundingClientRect().width))).toBe(360);
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
      ).toBeLessThanOrEqual(0);
      expect(await h.violations(page)).toBe('[]');
      // Closed, then opened from the Menu's drawer: the drawer goes, the message box has the focus.
      await page.keyboard.press('Escape');
      await panel().waitFor({ state: 'hidden' });
      await page.getByRole('button', { name: 'Menu' }).click();
      const drawer = page.getByRole('dialog', { name: 'Menu' });
      await drawer.getByRole('button', { name: 'Ask Ollie' }).click();
      await drawer.waitFor({ state: 'detached' });
      await panel().waitFor();
      await expect.poll(() => box().evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('says how an admin turns the assistant on when it is off', async () => {
    const off = await api().patch('/v1/ai/settings', { assistant: false }, as);
    expect(off.status, off.text).toBe(200);
    await page.goto(`${h.svc.url}/assistant`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/inbox');
    await panel().waitFor();
    await panel().getByText('Ollie is off in this workspace.').waitFor();
    await panel()
      .getByText(/under Features, check “The assistant \(Ollie\)”/)
      .waitFor();
    await panel().getByRole('link', { name: 'Open Settings → AI' }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    // The sign-in screen's refresh without a session (401) and the provider's failure (502) are
    // expected; so is the 403 assistant_off of the panel's own reads once it is off (how the panel
    // learns it, whether it asked before or after the page loaded).
    expect(
      h.errors.filter(
        (e) => !/401 \(Unauthorized\)|502 \(Bad Gateway\)|403 \(Forbidden\) \(\S+\/v1\/assistant\//.test(e),
      ),
    ).toEqual([]);
  });
});
