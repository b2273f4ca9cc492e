// CSAT: a solved ticket's customer gets the rating link by email (when the workspace has CSAT on),
// reads and rates through /v1/csat/{token}; the rating is the ticket's csat, with a csat_received
// activity, ticket.updated and the reports' figures. Bad tokens are 404, bad scores 422.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rate } from '../../../src/modules/csat/service.js';
import { contrast } from '../../../src/modules/help-center/look.js';
import {
  browserAvailable,
  coloursOf,
  docsScreenshot,
  launchBrowser,
  seriousViolations,
} from '../../support/browser.js';
import { makeTicket } from '../../support/builders.js';
import {
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { type CaughtMail, type MailCatcher, startMailCatcher } from '../../support/mail-catcher.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

let svc: Service;
let db: OwnDatabase;
let mail: MailCatcher;

beforeAll(async () => {
  mail = await startMailCatcher();
  // Its own database on PostgreSQL: the rating-request queue is the database's, and another file's
  // service would take its jobs and send them its own way.
  db = await ownDatabase('csat');
  svc = await startService({
    ...db.env,
    SMTP_URL: mail.smtpUrl('Acme Help <help@acme.test>'),
    PUBLIC_URL: 'https://help.acme.test',
  });
});

afterAll(async () => {
  await svc?.stop();
  await db?.drop();
  await mail?.close();
});

async function csatOn(t: Tenant, on = true) {
  const r = await svc.api.patch('/v1/workspace', { settings: { csat_enabled: on } }, t.as);
  expect(r.status).toBe(200);
}

async function solvedTicket(t: Tenant, email: string, subject = 'Printer on fire') {
  const ticket = await makeTicket(svc.api, t, { subject, contact: { email }, body_html: '<p>Help</p>' });
  const solved = await svc.api.patch(`/v1/tickets/${ticket.id}`, { status: 'solved' }, t.as);
  expect(solved.status).toBe(200);
  return ticket;
}

/** The rating link's token from the mail sent to this address. */
async function tokenMailedTo(email: string): Promise<string> {
  let found: CaughtMail | undefined;
  await expect.poll(() => (found = mail.received.find((m) => m.to.includes(email))), { timeout: 30_000 }).toBeTruthy();
  const link = /https:\/\/help\.acme\.test\/csat\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(found!.text);
  expect(link).not.toBeNull();
  return link![1]!;
}

describe('CSAT', () => {
  it('mails the rating link when a ticket is solved, and only while CSAT is on', async () => {
    const t = await newTenant(svc.api);
    // Off (the default): no mail for this solve.
    await solvedTicket(t, 'quiet@example.com');
    await csatOn(t);
    const ticket = await solvedTicket(t, 'rater@example.com', 'Invoice missing');
    const token = await tokenMailedTo('rater@example.com');
    const sent = mail.received.find((m) => m.to.includes('rater@example.com'))!;
    expect(sent.text).toContain(`Your request #${ticket.number}`);
    expect(sent.text).toContain('Invoice missing');
    // The queue is first in, first out: the later solve's mail came, the earlier one never will.
    expect(mail.received.filter((m) => m.to.includes('quiet@example.com'))).toEqual([]);

    const r = await svc.api.get(`/v1/csat/${token}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ number: ticket.number, subject: 'Invoice missing', score: null, comment: null });
  });

  it('stores a rating: the ticket shows it, with a csat_received activity, ticket.updated and the reports', async () => {
    const t = await newTenant(svc.api);
    await csatOn(t);
    const ticket = await solvedTicket(t, 'happy@example.com');
    const token = await tokenMailedTo('happy@example.com');
    const seq = await latestSeqOf(svc, t);

    const r = await svc.api.post(`/v1/csat/${token}`, { score: 4, comment: '  Quick and kind  ' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ number: ticket.number, subject: 'Printer on fire', score: 4, comment: 'Quick and kind' });
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toEqual({
      score: 4,
      comment: 'Quick and kind',
    });
    const acts = (await svc.api.get(`/v1/tickets/${ticket.id}/activities`, t.as)).body.data as any[];
    expect(acts.filter((a) => a.type === 'csat_received').map((a) => a.data)).toEqual([
      { score: 4, comment: 'Quick and kind' },
    ]);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.filter((e) => e.type === 'ticket.updated').map((e) => e.data.changes)).toEqual([['csat']]);

    // Rated again within 7 days: the new rating replaces the first.
    const again = await svc.api.post(`/v1/csat/${token}`, { score: 5 });
    expect(again.status).toBe(200);
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toEqual({ score: 5, comment: null });
    expect((await svc.api.get(`/v1/csat/${token}`)).body).toMatchObject({ score: 5, comment: null });
    // The token is a secret: the request log names the route's parameter instead.
    expect(svc.logs.filter((l) => l.includes(token.slice(-20)))).toEqual([]);
    expect(svc.logs.some((l) => l.includes('"path":"/v1/csat/:token"'))).toBe(true);

    // The last 30 days, up to the start of tomorrow.
    const report = await svc.api.get('/v1/reports/overview', t.as);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ csat_avg: 5, csat_count: 1 });
  });

  it('refuses a new rating more than 7 days after the first, changing nothing', async () => {
    const t = await newTenant(svc.api);
    await csatOn(t);
    const ticket = await solvedTicket(t, 'late@example.com');
    const token = await tokenMailedTo('late@example.com');
    expect((await svc.api.post(`/v1/csat/${token}`, { score: 2 })).status).toBe(200);
    // The first rating, eight days ago.
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
    await svc.rt.deps.database.db
      .updateTable('tickets')
      .set({ csat: JSON.stringify({ score: 2, comment: null, rated_at: eightDaysAgo, first_rated_at: eightDaysAgo }) })
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', ticket.id)
      .execute();
    const late = await svc.api.post(`/v1/csat/${token}`, { score: 5 });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('conflict');
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toEqual({ score: 2, comment: null });
  });

  it('answers 422 for a score of 0 or 6 or a comment over 2,000 characters, and stores nothing', async () => {
    const t = await newTenant(svc.api);
    await csatOn(t);
    const ticket = await solvedTicket(t, 'picky@example.com');
    const token = await tokenMailedTo('picky@example.com');
    for (const body of [
      { score: 0 },
      { score: 6 },
      { score: 3.5 },
      { score: 3, comment: 'x'.repeat(2001) },
      {},
      { score: 3, extra: 1 },
    ]) {
      const r = await svc.api.post(`/v1/csat/${token}`, body);
      expect(r.status, JSON.stringify(body).slice(0, 40)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toBeNull();
  });

  it('the rating service itself refuses a score off the scale, whoever calls it, and stores nothing', async () => {
    const t = await newTenant(svc.api);
    await csatOn(t);
    const ticket = await solvedTicket(t, 'direct@example.com');
    const token = await tokenMailedTo('direct@example.com');
    for (const score of [0, 6, -1, 2.5, Number.NaN]) {
      await expect(rate(svc.rt.deps, token, { score }), String(score)).rejects.toMatchObject({
        status: 422,
        code: 'validation_failed',
        errors: [{ location: 'body.score' }],
      });
    }
    await expect(rate(svc.rt.deps, token, { score: 3, comment: '😀'.repeat(2001) })).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ location: 'body.comment' }],
    });
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toBeNull();
    // 2,000 characters of emoji are 4,000 UTF-16 units: still within the limit, as the API counts.
    const saved = await rate(svc.rt.deps, token, { score: 1, comment: '😀'.repeat(2000) });
    expect(saved.score).toBe(1);
  });

  it('answers 404 for a tampered, expired or other-purpose token, and for a deleted ticket', async () => {
    const t = await newTenant(svc.api);
    await csatOn(t);
    const ticket = await solvedTicket(t, 'forger@example.com');
    const token = await tokenMailedTo('forger@example.com');
    const [head, body, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const other = await makeTicket(svc.api, t, { subject: 'Someone else', contact: { email: 'other@example.com' } });
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...claims, sub: other.id })).toString('base64url')}.${sig}`;
    const tokens = svc.rt.deps.tokens;
    const expired = (await tokens.sign({ purpose: 'csat', sub: ticket.id, wid: t.workspaceId }, -60)).token;
    const wrongPurpose = (await tokens.sign({ purpose: 'ws', sub: ticket.id, wid: t.workspaceId })).token;
    for (const bad of [forged, `${token.slice(0, -2)}xx`, expired, wrongPurpose]) {
      expect((await svc.api.get(`/v1/csat/${bad}`)).status).toBe(404);
      const r = await svc.api.post(`/v1/csat/${bad}`, { score: 1 });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
    expect((await svc.api.get('/v1/csat/not-a-token')).status).toBe(404);
    expect((await svc.api.get(`/v1/tickets/${other.id}`, t.as)).body.csat).toBeNull();
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toBeNull();

    expect((await svc.api.delete(`/v1/tickets/${ticket.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get(`/v1/csat/${token}`)).status).toBe(404);
    expect((await svc.api.post(`/v1/csat/${token}`, { score: 5 })).status).toBe(404);
  });
});

describe('the rating page (/csat/{token})', () => {
  const form = (token: string, body: Record<string, string>) =>
    fetch(`${svc.url}/csat/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));

  it('shows the request and five choices, saves a rating sent as a plain form, and says when it cannot', async () => {
    const t = await newTenant(svc.api, 'Acme <Support>');
    await csatOn(t);
    const ticket = await solvedTicket(t, 'page@example.com', 'Card <b>declined</b>');
    const token = await tokenMailedTo('page@example.com');

    const page = await fetch(`${svc.url}/csat/${token}?score=4`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'none'");
    const html = await page.text();
    // Names are text, never markup; the choice of the link is preselected.
    expect(html).toContain('Card &lt;b&gt;declined&lt;/b&gt;');
    expect(html).toContain('Acme &lt;Support&gt;');
    expect(html.match(/type="radio"/g)).toHaveLength(5);
    expect(html).toMatch(/value="4" checked/);

    const none = await form(token, { comment: 'no score' });
    expect(none.status).toBe(422);
    expect(none.text).toContain('role="alert"');
    expect(none.text).toContain('no score');
    // What the form's fields let through but the scale does not: the same error state.
    for (const score of ['0', '6', '-1', '10', '3.5', 'five']) {
      const off = await form(token, { score, comment: 'off the scale' });
      expect(off.status, score).toBe(422);
      expect(off.text, score).toContain('Please choose one of the five ratings.');
      expect(off.text).toContain('off the scale');
    }
    const long = await form(token, { score: '3', comment: 'x'.repeat(2001) });
    expect(long.status).toBe(422);
    expect(long.text).toContain('The comment is too long');
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toBeNull();

    const saved = await form(token, { score: '2', comment: 'Took <i>long</i>' });
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Thank you');
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toEqual({
      score: 2,
      comment: 'Took <i>long</i>',
    });

    // A link's score off the scale preselects nothing of its own: the saved rating shows.
    expect(await (await fetch(`${svc.url}/csat/${token}?score=9`)).text()).toMatch(/value="2" checked/);

    const bad = await fetch(`${svc.url}/csat/${token.slice(0, -3)}abc`);
    expect(bad.status).toBe(404);
    expect(await bad.text()).toContain('This rating link is not valid');
    expect((await form(`${token.slice(0, -3)}abc`, { score: '5' })).status).toBe(404);
  });

  describe.runIf(browserAvailable())('in a browser', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('a customer rates from the mailed link with the keyboard-reachable form; axe finds nothing serious', async () => {
      const t = await newTenant(svc.api);
      await csatOn(t);
      const ticket = await solvedTicket(t, 'browser@example.com', 'The app will not sync');
      const token = await tokenMailedTo('browser@example.com');
      const page = await browser.newPage({ viewport: { width: 800, height: 800 } });
      await page.goto(`${svc.url}/csat/${token}`);
      expect(await page.locator('h1').textContent()).toBe('How did we do?');
      expect(await seriousViolations(page)).toEqual([]);
      // A customer whose system is set to dark gets the dark variant, as readable.
      const dark = await browser.newContext({ viewport: { width: 800, height: 800 }, colorScheme: 'dark' });
      const night = await dark.newPage();
      await night.goto(`${svc.url}/csat/${token}`);
      await night.getByLabel('Very happy').check();
      const look = await coloursOf(night, {
        background: ['body', 'backgroundColor'],
        text: ['body', 'color'],
        field: ['textarea', 'backgroundColor'],
        button: ['button', 'backgroundColor'],
        buttonText: ['button', 'color'],
      });
      expect(contrast(look.background, '#000000')).toBeLessThan(2);
      expect(contrast(look.text, look.background)).toBeGreaterThanOrEqual(7);
      expect(contrast(look.field, '#000000')).toBeLessThan(2);
      expect(contrast(look.buttonText, look.button)).toBeGreaterThanOrEqual(4.5);
      expect(await seriousViolations(night)).toEqual([]);
      await dark.close();
      await page.getByLabel('Happy', { exact: true }).check();
      await page.getByLabel('Comment (optional)').fill('Fixed within the hour.');
      await docsScreenshot(page, 'csat-page');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('heading', { name: 'Thank you' }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.csat).toEqual({
        score: 4,
        comment: 'Fixed within the hour.',
      });
      await page.close();
    });
  });
});
