// The agents' AI in a real browser (test/support/app-harness.ts) against a service whose provider is
// the OpenAI stand-in (test/support/ai-standin/): a drafted reply streams into the composer (the
// stand-in holds the answer after its first words, which show before the rest), its sources are
// links under the editor and one undo brings back what was written before; Escape stops a draft
// (the provider's request is closed) and the reply is as it was; a selection rewritten, the reply
// translated into the customer's language; a customer's message translated and back; the summary
// made with `s` and refreshed live when someone else summarizes; a question asked about the
// ticket, answered as it streams, with its sources; the provider failing said in words; an article
// drafted from the solved ticket opening the knowledge base's editor prefilled and saved only when
// saved. axe-core on each screen; SCREENSHOTS=1 writes docs/screenshots/ai-*.png.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dismissMailNotice, startAiApp } from '../../support/ai-app.js';
import { gate, type OpenAiStandIn } from '../../support/ai-standin/index.js';
import type { AppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { uniqueEmail } from '../../support/builders.js';
import type { ReqOpts } from '../../support/helpers.js';

describe.runIf(browserAvailable())('AI on the ticket page and in the knowledge base', () => {
  let ai: OpenAiStandIn;
  let h: AppHarness;
  let page: Page;
  let as: ReqOpts;
  let ticket: { id: string; number: number };
  let refunds: { id: string; title: string };

  const api = () => h.svc.api;
  const editor = () => page.locator('#composer-text');
  const chats = () => ai.requests.filter((r) => r.path.endsWith('/chat/completions'));
  /** The user message of the n-th chat request the stand-in received (0-based). */
  const promptOf = async (n: number): Promise<string> => {
    const r = await ai.request(n);
    return (r.body.messages as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === 'user')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
      .join('\n');
  };
  const openTicket = async () => {
    await page.goto(`${h.svc.url}/tickets/${ticket.number}`);
    await page.getByRole('heading', { name: new RegExp(`^#${ticket.number} `) }).waitFor();
    await page.getByRole('button', { name: /^Draft a reply/ }).waitFor();
  };
  /** Nothing has the focus: the page's single keys work. */
  const blur = () => page.evaluate('document.activeElement && document.activeElement.blur()');
  /** Writes `text` in the emptied composer (its keys go to the editor once it has the focus). */
  const write = async (text: string) => {
    await editor().click();
    await expect.poll(() => editor().evaluate((el) => el.contains(el.ownerDocument.activeElement))).toBe(true);
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text);
  };

  beforeAll(async () => {
    ({ ai, h } = await startAiApp('app_ai'));
    as = h.tenant.as;
    const ws = await api().patch('/v1/workspace', { settings: { help_center_enabled: true } }, as);
    expect(ws.status, ws.text).toBe(200);
    const a = await api().post(
      '/v1/kb/articles',
      {
        title: 'Refunds and returns',
        // The customer writes in French: the search that finds the sources matches these words.
        body_html:
          '<p>Refunds reach your card within five days.</p><p>Le remboursement de la commande arrive sous cinq jours.</p>',
        status: 'published',
      },
      as,
    );
    expect(a.status, a.text).toBe(201);
    refunds = a.body;
    // A customer writes through the chat widget, in French: a chat ticket whose first message is theirs.
    const key = (await api().get('/v1/workspace', as)).body.widget_key as string;
    const s = await api().post('/v1/widget/session', { key, name: 'Jeanne Client', email: uniqueEmail('jeanne') });
    expect(s.status, s.text).toBe(200);
    const conv = await api().post(
      '/v1/widget/conversations',
      { body: 'Bonjour, où en est le remboursement de ma commande 1001 ?' },
      { headers: { authorization: `Visitor ${s.body.visitor_token}` } },
    );
    expect(conv.status, conv.text).toBe(201);
    const t = await api().patch(`/v1/tickets/${conv.body.id}`, { custom: { language: 'fr' } }, as);
    expect(t.status, t.text).toBe(200);
    ticket = { id: t.body.id, number: t.body.number };
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

  it('streams a drafted reply into the editor, lists its sources, and one undo restores what was there', async () => {
    await openTicket();
    await write('Let me check.');
    const held = gate();
    ai.answer({
      gate: held,
      text: 'Bonjour Jeanne,\n\nVotre remboursement arrive sur votre carte sous cinq jours [1].',
      chunks: ['Bonjour Jeanne,', '\n\nVotre remboursement arrive sur votre carte sous cinq jours [1].'],
    });
    const before = chats().length;
    await page.keyboard.press('Escape'); // out of the text box: the page's keys work
    await page.keyboard.press('d');
    // The first words are in the editor while the stand-in holds the rest.
    await held.reached;
    await expect.poll(() => editor().textContent()).toBe('Bonjour Jeanne,');
    await page.getByRole('status').filter({ hasText: 'Drafting a reply…' }).waitFor();
    expect(await page.getByRole('button', { name: /^Send/ }).isDisabled()).toBe(true);
    expect(await h.violations(page)).toBe('[]');
    held.release();
    await expect
      .poll(() => editor().textContent())
      .toBe('Bonjour Jeanne,Votre remboursement arrive sur votre carte sous cinq jours.');
    const sources = page.getByRole('list', { name: 'Sources of the draft:' });
    const link = sources.getByRole('link', { name: /Refunds and returns/ });
    await link.waitFor();
    expect(await link.getAttribute('href')).toContain('/hc/');
    expect(await promptOf(before)).toContain('remboursement');
    await docsScreenshot(page, 'ai-draft');
    expect(await h.violations(page)).toBe('[]');

    // One undo: what was written before the draft.
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect.poll(() => editor().textContent()).toBe('Let me check.');
    await sources.waitFor({ state: 'detached' });
    void refunds;
  });

  it('stops a draft on Escape: the provider’s request is closed and the reply is as it was', async () => {
    const held = gate();
    ai.answer({ gate: held, text: 'Bonjour, un instant je vérifie tout cela.', chunks: ['Bonjour,', ' un instant.'] });
    const n = chats().length;
    await page.getByRole('button', { name: /^Draft a reply/ }).click();
    await held.reached;
    await expect.poll(() => editor().textContent()).toBe('Bonjour,');
    await page.keyboard.press('Escape');
    const req = await ai.request(n);
    await req.done;
    expect(req.closedEarly).toBe(true);
    held.release();
    await expect.poll(() => editor().textContent()).toBe('Let me check.');
    await page.getByRole('status').filter({ hasText: 'Stopped: the reply is as it was.' }).waitFor();
    // Still on the ticket: Escape stopped the draft, it did not leave the page.
    expect(new URL(page.url()).pathname).toBe(`/tickets/${ticket.number}`);

    // Leaving the page stops a draft too.
    const again = gate();
    ai.answer({ gate: again, text: 'Bonjour, je regarde.', chunks: ['Bonjour,', ' je regarde.'] });
    await page.getByRole('button', { name: /^Draft a reply/ }).click();
    await again.reached;
    await page.getByRole('link', { name: '← Inbox' }).click();
    const left = await ai.request(n + 1);
    await left.done;
    expect(left.closedEarly).toBe(true);
    again.release();
    await openTicket();
  });

  it('rewrites the selection only, and translates the reply into the customer’s language', async () => {
    await write('thanks for waiting. your refund left today.');
    // Select "your refund left today." with the keyboard.
    await page.keyboard.press('End');
    for (let i = 0; i < 'your refund left today.'.length; i++) await page.keyboard.press('Shift+ArrowLeft');
    ai.answer({ text: '<p>Good news: your refund left today!</p>' });
    const n = chats().length;
    await page.getByRole('button', { name: /^Rewrite/ }).click();
    await page.getByRole('menuitem', { name: 'Friendlier' }).click();
    await expect.poll(() => editor().textContent()).toBe('thanks for waiting. Good news: your refund left today!');
    const asked = await promptOf(n);
    expect(asked).toContain('your refund left today.');
    expect(asked).not.toContain('thanks for waiting');
    await page.getByRole('status').filter({ hasText: 'Rewritten (friendlier)' }).waitFor();

    ai.answer({
      json: {
        html: '<p>Merci de votre patience. Bonne nouvelle : votre remboursement est parti !</p>',
        source_language: 'en',
      },
    });
    await page.getByRole('button', { name: /^Translate to French/ }).click();
    await expect
      .poll(() => editor().textContent())
      .toBe('Merci de votre patience. Bonne nouvelle : votre remboursement est parti !');
    expect((await ai.request(n + 1)).body.messages.map((m: { content: string }) => m.content).join('\n')).toContain(
      'Good news',
    );
    await page.keyboard.press('Control+z');
    await expect.poll(() => editor().textContent()).toBe('thanks for waiting. Good news: your refund left today!');
    // Undone: its note goes with it.
    await page.getByText('Translated to French.').waitFor({ state: 'detached' });
  });

  it('translates the customer’s message on request, the original one click away', async () => {
    const message = page.locator('.message-inbound').first();
    ai.answer({ json: { html: '<p>Hello, where is the refund for my order 1001?</p>', source_language: 'fr' } });
    await message.getByRole('button', { name: 'Translate' }).click();
    await message.getByText('Hello, where is the refund for my order 1001?').waitFor();
    await message.getByText(/Translated from French into English/).waitFor();
    expect(await h.violations(page)).toBe('[]');
    await message.getByRole('button', { name: 'Show original' }).click();
    await message.getByText('Bonjour, où en est le remboursement').waitFor();
    // Back again without asking the provider twice.
    const n = chats().length;
    await message.getByRole('button', { name: 'Translate' }).click();
    await message.getByText('Hello, where is the refund for my order 1001?').waitFor();
    expect(chats().length).toBe(n);
  });

  it('summarizes with s, and shows a summary made elsewhere live', async () => {
    const panel = page.getByRole('region', { name: 'AI', exact: true });
    await panel.getByText('No summary yet.').waitFor();
    ai.answer({
      json: {
        summary: 'Jeanne asks where the refund of order 1001 is.',
        key_points: ['Order 1001', 'Refund not received yet'],
        sentiment: 'neutral',
      },
    });
    await blur();
    await page.keyboard.press('s');
    await panel.getByText('Jeanne asks where the refund of order 1001 is.').waitFor();
    await panel.getByRole('list', { name: 'Key points' }).getByText('Refund not received yet').waitFor();
    await panel.getByText('Customer: Neutral').waitFor();
    expect((await api().get(`/v1/tickets/${ticket.id}`, as)).body.custom.ai_summary.summary).toBe(
      'Jeanne asks where the refund of order 1001 is.',
    );
    // Someone else (the API) summarizes again: ticket.updated brings it here.
    ai.answer({
      json: { summary: 'Refund asked twice; customer waiting.', key_points: ['Order 1001'], sentiment: 'frustrated' },
    });
    const r = await api().post(`/v1/tickets/${ticket.id}/ai/summary`, {}, as);
    expect(r.status, r.text).toBe(200);
    await panel.getByText('Refund asked twice; customer waiting.').waitFor();
    await panel.getByText('Customer: Frustrated').waitFor();
    await panel.getByRole('button', { name: /^Refresh summary/ }).waitFor();
  });

  it('answers a question about the ticket as it streams, with its sources', async () => {
    const held = gate();
    ai.answer({
      gate: held,
      text: 'The customer wants the refund of order 1001; refunds take five days [1].',
      chunks: ['The customer wants', ' the refund of order 1001; refunds take five days [1].'],
    });
    await blur();
    await page.keyboard.press('a');
    const box = page.getByRole('textbox', { name: 'Question about this ticket' });
    await expect.poll(() => box.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await box.fill('What does the customer want?');
    await box.press('Enter');
    const answer = page.getByLabel('Answer');
    await held.reached;
    await answer.getByText('The customer wants').waitFor();
    held.release();
    await answer.getByText('refunds take five days').waitFor();
    await page
      .getByRole('list', { name: 'Sources of the answer' })
      .getByRole('link', { name: /Refunds and returns/ })
      .waitFor();
    await docsScreenshot(page, 'ai-ticket');
    expect(await h.violations(page)).toBe('[]');
    // At 360 px the AI's buttons wrap: nothing runs off the side, and axe finds nothing.
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await page.getByRole('button', { name: /^Draft a reply/ }).scrollIntoViewIfNeeded();
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
      ).toBeLessThanOrEqual(0);
      expect(await h.violations(page)).toBe('[]');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('says in words when the provider fails, and the editor keeps the reply', async () => {
    await write('Keep this text.');
    ai.answer({ status: 500 });
    await page.getByRole('button', { name: /^Draft a reply/ }).click();
    await page.getByRole('alert').filter({ hasText: 'The AI provider did not answer' }).waitFor();
    await expect.poll(() => editor().textContent()).toBe('Keep this text.');
  });

  it('drafts an article from the solved ticket: the editor opens prefilled, saved only when saved', async () => {
    const solved = await api().patch(`/v1/tickets/${ticket.id}`, { status: 'solved' }, as);
    expect(solved.status, solved.text).toBe(200);
    await openTicket();
    const before = (await api().get('/v1/kb/articles', as)).body.data.length;
    ai.answer({
      json: {
        title: 'Where is my refund?',
        excerpt: 'How long refunds take.',
        body_html: '<h2>Refund times</h2><p>Refunds reach the card within five days.</p>',
        language: 'en',
      },
    });
    await page.getByRole('link', { name: /^Draft an article/ }).click();
    await page.getByRole('heading', { name: 'New article', level: 1 }).waitFor();
    await expect.poll(() => page.getByLabel('Title').inputValue()).toBe('Where is my refund?');
    const body = page.getByRole('textbox', { name: 'Body' });
    await body.locator('h2', { hasText: 'Refund times' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: `Drafted by AI from ticket #${ticket.number}` })
      .waitFor();
    expect((await api().get('/v1/kb/articles', as)).body.data.length).toBe(before);
    await docsScreenshot(page, 'ai-article-draft');
    expect(await h.violations(page)).toBe('[]');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    const saved = (await api().get('/v1/kb/articles', as)).body.data.find(
      (x: { title: string }) => x.title === 'Where is my refund?',
    );
    expect(saved?.status).toBe('draft');
    expect(saved?.excerpt).toBe('How long refunds take.');
  });

  it('reported no page errors', () => {
    // The sign-in screen's refresh without a session (401) and the provider's failure (502) are expected.
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)|502 \(Bad Gateway\)/.test(e))).toEqual([]);
  });
});
