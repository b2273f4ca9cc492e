// AI triage in a real browser (test/support/app-harness.ts) against a service whose provider is the
// OpenAI stand-in (the language model is the triage engine): Shift+T runs triage on the ticket and
// its suggestions show with what decided them; y accepts the focused one (PATCH: the field set,
// the suggestion gone), x dismisses (DELETE), the mouse does the same; a suggestion another agent
// dismisses, or a new one a run writes with its confidence, shows live (ticket.updated). The
// decisions triage applied read in the thread as sentences with their model. Settings → Triage:
// the engine's status, fields, threshold, automatic runs and assignment saved and read back
// through the API, the API's 422 at its field with nothing changed, read-only for an agent.
// The dedicated engine in Settings → Triage: learning (39 of 40), then ready with its held-out
// accuracy once trained. The chat view marks the assistant's answers (its name, an AI mark).
// axe-core on each screen; SCREENSHOTS=1 writes docs/screenshots/ai-suggestions.png,
// settings-triage.png, settings-triage-trained.png and ai-chat-answer.png.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { article, customerTicket } from '../../modules/ai/features-setup.js';
import { triageAnswer, workspaceData } from '../../modules/triage/triage-setup.js';
import { dismissMailNotice, startAiApp } from '../../support/ai-app.js';
import type { OpenAiStandIn } from '../../support/ai-standin/index.js';
import type { AppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { uniqueEmail } from '../../support/builders.js';
import { addMember, type Member, newTenant, type ReqOpts } from '../../support/helpers.js';

describe.runIf(browserAvailable())('AI triage on the ticket page and in Settings → Triage', () => {
  let ai: OpenAiStandIn;
  let h: AppHarness;
  let page: Page;
  let as: ReqOpts;
  let teamId: string;
  let agent: Member;

  const api = () => h.svc.api;
  const ticketOf = async (id: string) => (await api().get(`/v1/tickets/${id}`, as)).body;
  const pendingOf = async (id: string) => Object.keys((await ticketOf(id)).custom?.ai_suggestions ?? {}).sort();
  const suggestions = () => page.getByRole('list', { name: 'AI suggestions' });
  const rows = () => suggestions().getByRole('listitem');
  const triageSettings = async (body: Record<string, unknown>) => {
    const r = await api().patch('/v1/triage', body, as);
    expect(r.status, r.text).toBe(200);
  };
  /** The words of what has the focus. */
  const focused = () =>
    page.evaluate('document.activeElement && document.activeElement.textContent') as Promise<string | null>;
  const openTicket = async (id: string) => {
    const t = await ticketOf(id);
    await page.goto(`${h.svc.url}/tickets/${t.number}`);
    await page.getByRole('heading', { name: new RegExp(`^#${t.number} `) }).waitFor();
    await page
      .getByRole('region', { name: 'Triage' })
      .getByRole('button', { name: /^Triage/ })
      .waitFor();
    return t;
  };

  beforeAll(async () => {
    ({ ai, h } = await startAiApp('app_ai_triage'));
    as = h.tenant.as;
    ({ teamId } = await workspaceData(h.svc, h.tenant));
    agent = await addMember(h.svc, h.tenant, 'agent', 'Alex Agent');
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

  it('Shift+T triages; y accepts and x dismisses the focused suggestion, the mouse too; changes show live', async () => {
    // Triage may set nothing on its own: every decision is a suggestion.
    await triageSettings({ fields: [] });
    const { id } = await customerTicket(h.svc, h.tenant, 'I was charged twice for order 1001, please refund one.');
    await openTicket(id);
    expect(await suggestions().count()).toBe(0);
    ai.answer({ json: triageAnswer({ team_id: teamId, spam_probability: 0.9 }) });
    await page.keyboard.press('Shift+T');
    await expect.poll(() => rows().count()).toBe(5);
    expect((await rows().allTextContents()).map((t) => t.replace(/Accept.*$/, '').trim())).toEqual([
      expect.stringMatching(/^Priority High language model · gpt-4\.1/),
      expect.stringMatching(/^Severity Sev 2 language model · gpt-4\.1/),
      expect.stringMatching(/^Labels Bug, payments language model · gpt-4\.1/),
      expect.stringMatching(/^Team Billing language model · gpt-4\.1/),
      expect.stringMatching(/^Spam Mark as spam language model · gpt-4\.1/),
    ]);
    expect(await pendingOf(id)).toEqual(['labels', 'priority', 'severity', 'spam', 'team']);
    // The run left the focus on the first suggestion: y accepts it.
    await expect.poll(() => focused()).toBe('Accept priority: High');
    expect(await h.violations(page)).toBe('[]');
    // ↓ and ↑ move between suggestions.
    await page.keyboard.press('ArrowDown');
    await expect.poll(focused).toBe('Accept severity: Sev 2');
    await page.keyboard.press('ArrowUp');
    await expect.poll(focused).toBe('Accept priority: High');
    await page.keyboard.press('y');
    await expect.poll(async () => (await ticketOf(id)).priority).toBe('high');
    expect(await pendingOf(id)).toEqual(['labels', 'severity', 'spam', 'team']);
    await expect.poll(() => rows().count()).toBe(4);
    // The focus went on to the next one: x dismisses it, the field stays as it was.
    await expect.poll(() => focused()).toBe('Accept severity: Sev 2');
    await page.keyboard.press('x');
    await expect.poll(() => pendingOf(id)).toEqual(['labels', 'spam', 'team']);
    expect((await ticketOf(id)).severity).toBeNull();
    await expect.poll(() => rows().count()).toBe(3);

    // The mouse: the team accepted.
    await page.getByRole('button', { name: 'Accept team: Billing' }).click();
    await expect.poll(async () => (await ticketOf(id)).team_id).toBe(teamId);
    await expect.poll(() => rows().count()).toBe(2);
    expect(await pendingOf(id)).toEqual(['labels', 'spam']);

    // Live: another agent dismisses spam; a run of the dedicated engine (its stored shape) brings a
    // suggestion with its confidence.
    const gone = await api().delete(`/v1/tickets/${id}/ai/suggestions/spam`, agent.as);
    expect(gone.status, gone.text).toBe(204);
    await expect.poll(() => rows().count()).toBe(1);
    const labels = (await ticketOf(id)).custom.ai_suggestions.labels;
    const decided_at = new Date().toISOString();
    const stored = await api().patch(
      `/v1/tickets/${id}`,
      {
        custom: {
          ai_suggestions: {
            labels,
            priority: {
              value: 'urgent',
              confidence: 0.78,
              probability: 0.78,
              model: 'dedicated-linear-v1',
              decided_at,
            },
          },
        },
      },
      agent.as,
    );
    expect(stored.status, stored.text).toBe(200);
    await expect.poll(() => rows().count()).toBe(2);
    expect(await rows().first().textContent()).toMatch(/^Priority Urgent 78 % · dedicated-linear-v1/);
    await docsScreenshot(page, 'ai-suggestions');
    expect(await h.violations(page)).toBe('[]');

    // The labels accepted by mouse: both added.
    await page.getByRole('button', { name: 'Accept labels: Bug, payments' }).click();
    await expect
      .poll(async () => ((await ticketOf(id)).tags as Array<{ name: string }>).map((t) => t.name).sort())
      .toEqual(['Bug', 'payments']);
    await page.getByRole('button', { name: 'Dismiss priority: Urgent' }).click();
    await expect.poll(() => pendingOf(id)).toEqual([]);
    await page.getByRole('region', { name: 'Triage' }).getByText('No suggestions.').waitFor();
    expect((await ticketOf(id)).priority).toBe('high');
  });

  it("shows triage's decisions in the thread as sentences with their model", async () => {
    await triageSettings({ fields: ['priority', 'labels', 'team'] });
    const { id } = await customerTicket(h.svc, h.tenant, 'The checkout page shows an error 500 since this morning.');
    await openTicket(id);
    ai.answer({ json: triageAnswer({ team_id: teamId, priority: 'urgent', label: '' }) });
    await page
      .getByRole('region', { name: 'Triage' })
      .getByRole('button', { name: /^Triage/ })
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Triage done: \d+ applied/ })
      .waitFor();
    const thread = page.getByRole('region', { name: 'Conversation' });
    const aiEntries = thread.locator('li.activity-ai');
    await expect.poll(() => aiEntries.count()).toBe(3);
    const texts = (await aiEntries.allTextContents()).map((t) => t.replace(/ · [^·]*$/, ''));
    expect(texts.sort()).toEqual([
      expect.stringMatching(/^AI Triage added the label Bug · gpt-4\.1/),
      expect.stringMatching(/^AI Triage set priority to Urgent · gpt-4\.1/),
      expect.stringMatching(/^AI Triage set team to Billing · gpt-4\.1/),
    ]);
    // What the API holds says the same: actor ai, via triage, the model.
    const acts = (await api().get(`/v1/tickets/${id}/activities`, as)).body.data as Array<{
      actor: { type: string };
      data: { via?: string; model?: string };
    }>;
    expect(acts.filter((a) => a.actor.type === 'ai').every((a) => a.data.via === 'triage')).toBe(true);
    // Severity was not the triage's to set: it stays a suggestion.
    expect(await pendingOf(id)).toEqual(['severity']);
    expect(await h.violations(page)).toBe('[]');
  });

  it('Settings → Triage: the engine, and the settings saved; a bad threshold refused at its field', async () => {
    await triageSettings({ fields: ['priority', 'severity', 'labels'], threshold: 0.7, auto_triage: false });
    await page.goto(`${h.svc.url}/settings`);
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Triage', exact: true }).click();
    await page.getByRole('heading', { name: 'Triage', level: 1 }).waitFor();
    const engine = page.getByRole('region', { name: 'Engine' });
    await engine.getByText('The language model').waitFor();
    await engine.getByText('gpt-4.1-mini').waitFor();
    // The runs above reached the model: connected.
    await engine.getByText('Connected', { exact: true }).waitFor();
    const threshold = page.getByLabel('Confidence needed to set a field (%)');
    expect(await threshold.inputValue()).toBe('70');
    expect(await h.violations(page)).toBe('[]');

    await page.getByLabel('Triage new tickets automatically').check();
    await page.getByLabel('Labels (only added)').uncheck();
    await page.getByLabel('Team (only when the ticket has none)').check();
    await threshold.fill('85');
    await page.getByLabel('Assign after triage').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await api().get('/v1/triage', as)).body;
    expect(saved).toMatchObject({
      auto_triage: true,
      fields: ['priority', 'severity', 'team'],
      threshold: 0.85,
      assign_after_triage: true,
    });
    await docsScreenshot(page, 'settings-triage');

    // 40 % is below the API's 0.5: its words at the field, nothing changed.
    await threshold.fill('40');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => threshold.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#triage-threshold-error').textContent()).toMatch(/\S/);
    expect((await api().get('/v1/triage', as)).body.threshold).toBe(0.85);
    expect(await h.violations(page)).toBe('[]');

    // An agent reads it; nothing to change.
    const other = await h.newPage();
    await h.signIn(other.page, agent);
    await other.page.goto(`${h.svc.url}/settings/triage`);
    await other.page.getByRole('heading', { name: 'Triage', level: 1 }).waitFor();
    await other.page.getByRole('region', { name: 'Engine' }).getByText('The language model').waitFor();
    expect(await other.page.getByLabel('Triage new tickets automatically').isDisabled()).toBe(true);
    expect(await other.page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(await h.violations(other.page)).toBe('[]');
    await other.context.close();
  });

  it("marks the assistant's answers in the chat view: its name and an AI mark", async () => {
    // Automatic triage (switched on above) would take the stand-in's answer meant for the chat.
    await triageSettings({ auto_triage: false });
    const on = await api().patch('/v1/ai/settings', { widget_answers: true }, as);
    expect(on.status, on.text).toBe(200);
    await article(
      h.svc,
      h.tenant,
      'Resetting your password',
      'To reset your password, open Settings, choose Security and press Reset password.',
    );
    ai.answer({
      json: { answer: 'Open Settings, choose Security and press Reset password [1].', confident: true, sources: [1] },
    });
    const { id } = await customerTicket(h.svc, h.tenant, 'How do I reset my password?');
    // The assistant answers in a job after the visitor's message.
    await expect
      .poll(async () => ((await api().get(`/v1/tickets/${id}/messages`, as)).body.data as unknown[]).length, {
        timeout: 30_000,
      })
      .toBe(2);
    await page.goto(`${h.svc.url}/chats/${(await ticketOf(id)).number}`);
    const log = page.getByRole('log', { name: 'Messages' });
    const answer = log.getByRole('listitem').filter({ hasText: 'press Reset password' });
    await answer.waitFor();
    expect(await answer.textContent()).toMatch(/^Ollie\s*AI\s*·/);
    const question = log.getByRole('listitem').filter({ hasText: 'How do I reset my password?' });
    expect(await question.textContent()).not.toMatch(/\bAI\b/);
    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'ai-chat-answer');
    const off = await api().patch('/v1/ai/settings', { widget_answers: false }, as);
    expect(off.status, off.text).toBe(200);
  });

  it("Settings → Triage: the dedicated engine learning from the workspace's tickets, then ready with its accuracy", async () => {
    // A workspace of its own: once trained, its engine is the dedicated one, not the language model.
    const t = await newTenant(h.svc.api, 'Trained Co');
    const make = async (subject: string, priority: string, text: string) => {
      const r = await h.svc.api.post(
        '/v1/tickets',
        { subject, priority, contact: { email: uniqueEmail('c') }, body_html: `<p>${text}</p>` },
        t.as,
      );
      expect(r.status, r.text).toBe(201);
      const solved = await h.svc.api.patch(`/v1/tickets/${r.body.id}`, { status: 'solved' }, t.as);
      expect(solved.status, solved.text).toBe(200);
    };
    for (let i = 0; i < 20; i++) await make('Production database is down', 'urgent', 'Every request fails with a 500.');
    for (let i = 0; i < 19; i++) await make('Invoice PDF layout', 'low', 'Could the PDF show our VAT number?');
    const { page: p, context } = await h.newPage();
    await h.signIn(p, t.owner);
    await p.goto(`${h.svc.url}/settings/triage`);
    await p.getByRole('heading', { name: 'Triage', level: 1 }).waitFor();
    const training = p.getByRole('region', { name: 'Learning from your tickets' });
    await training.getByText('Learning: 39 of 40 solved tickets', { exact: false }).waitFor();
    expect(await training.getByRole('progressbar', { name: 'Solved tickets learned from' }).getAttribute('value')).toBe(
      '39',
    );
    expect(await h.violations(p)).toBe('[]');

    // The 40th solve: the engine trains within a minute; the page shows it ready with its accuracy.
    await make('Invoice PDF layout', 'low', 'Could the PDF show our VAT number?');
    await expect
      .poll(async () => (await h.svc.api.get('/v1/triage', t.as)).body.engine.training?.status, { timeout: 60_000 })
      .toBe('ready');
    await p.reload();
    await p.getByRole('heading', { name: 'Triage', level: 1 }).waitFor();
    await p.getByRole('region', { name: 'Engine' }).getByText("The workspace's own engine", { exact: false }).waitFor();
    await training.getByText('Ready: learned from 32 of 40 solved tickets', { exact: false }).waitFor();
    const table = training.getByRole('table', { name: /Accuracy on your own held-out tickets/ });
    await table.waitFor();
    expect(await table.getByRole('row').count()).toBeGreaterThanOrEqual(2);
    expect(await table.textContent()).toMatch(/Priority/);
    expect(await h.violations(p)).toBe('[]');
    await docsScreenshot(p, 'settings-triage-trained');
    await context.close();
  });

  it('reported no page errors', () => {
    // 401: the sign-in page asking who is signed in; 422: the threshold refused on purpose.
    expect(h.errors.filter((e) => !/401 \(Unauthorized\)|422 \(Unprocessable/.test(e))).toEqual([]);
  });
});
