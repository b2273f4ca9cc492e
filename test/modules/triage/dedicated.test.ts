// The dedicated triage engine through the service, with no AI provider configured at all:
// learning until 40 solved tickets, a model trained by the job that solves queue (within a
// minute), decisions on POST /v1/tickets/{id}/ai/triage and by auto_triage (gaps.md's check:
// 20 solved urgent under one subject, 20 low under another), the engine and its training in
// GET /v1/triage and /v1/ai/config, each workspace its own model, the model kept over a restart.
// Waits on states (expect.poll), never on time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorBody, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

const URGENT = 'Production database is down';
const LOW = 'Question about the invoice PDF layout';
const HIGH_OR_URGENT = ['high', 'urgent'];
const LOW_OR_NORMAL = ['low', 'normal'];

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, {}, { restartable: true });
});
afterAll(async () => svc?.stop());

async function ticket(t: Tenant, subject: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await svc.api.post(
    '/v1/tickets',
    { subject, contact: { email: `customer-${Math.random().toString(36).slice(2)}@example.com` }, ...body },
    t.as,
  );
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}

async function solved(t: Tenant, subject: string, priority: string, n: number, message: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = await ticket(t, subject, { priority, body_html: `<p>${message}</p>` });
    const r = await svc.api.patch(`/v1/tickets/${id}`, { status: 'solved' }, t.as);
    expect(r.status, r.text).toBe(200);
  }
}

const triageOf = async (t: Tenant) => (await svc.api.get('/v1/triage', t.as)).body;

describe('the dedicated engine', () => {
  let t: Tenant;

  it('learns until 40 solved tickets: no engine decides, triage answers 404 ai_disabled', async () => {
    t = await newTenant(svc.api);
    await solved(t, URGENT, 'urgent', 20, 'Every request fails with a 500 error, our customers cannot work.');
    await solved(t, LOW, 'low', 19, 'Could the PDF of the invoice show our VAT number on the first page?');
    // 39 solved: too few, the engine keeps learning.
    await expect.poll(async () => (await triageOf(t)).engine.training?.solved, { timeout: 20_000 }).toBe(39);
    const body = await triageOf(t);
    expect(body.engine).toMatchObject({
      provider: 'none',
      connected: false,
      training: { status: 'learning', solved: 39, needed: 40, trained_at: null, trained_on: 0, accuracy: null },
    });
    expect(body.available).toBe(false);
    const id = await ticket(t, URGENT);
    const r = await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, t.as);
    expect(r.status).toBe(404);
    expect(isErrorBody(r.body, 404, 'ai_disabled')).toBe(true);
  });

  it('trains within a minute of the 40th solve and reports itself ready, with its held-out accuracy', async () => {
    await solved(t, LOW, 'low', 1, 'Could the PDF of the invoice show our VAT number on the first page?');
    await expect.poll(async () => (await triageOf(t)).engine.training?.status, { timeout: 60_000 }).toBe('ready');
    const body = await triageOf(t);
    expect(body.available).toBe(true);
    expect(body.engine).toMatchObject({ provider: 'dedicated', model: 'dedicated-linear-v1', connected: true });
    const training = body.engine.training;
    expect(training).toMatchObject({ status: 'ready', solved: 40, needed: 40 });
    expect(Date.parse(training.trained_at)).toBeGreaterThan(Date.now() - 120_000);
    // 80% learned from, 20% held out to calibrate and to measure.
    expect(training.trained_on).toBe(32);
    expect(training.accuracy.priority).toBeGreaterThanOrEqual(0.75);
    // Only fields the tickets teach: priority varies; no severity, team or Type label was ever set.
    expect(Object.keys(training.accuracy)).toEqual(['priority']);
    const config = (await svc.api.get('/v1/ai/config', t.as)).body;
    expect(config.decisions).toMatchObject({ provider: 'dedicated', model: 'dedicated-linear-v1', connected: true });
  });

  it('decides a new ticket like the solved ones it resembles (POST /v1/tickets/{id}/ai/triage)', async () => {
    const first = await ticket(t, URGENT, { body_html: '<p>Nothing loads since this morning.</p>' });
    const a = await svc.api.post(`/v1/tickets/${first}/ai/triage`, {}, t.as);
    expect(a.status, a.text).toBe(200);
    expect(a.body.decisions).toMatchObject({ engine: 'dedicated', model: 'dedicated-linear-v1', threshold: 0.7 });
    expect(a.body.decisions.model_version).toBeTruthy();
    expect(a.body.summary).toBe('');
    const p = a.body.decisions.fields.priority;
    expect(HIGH_OR_URGENT).toContain(p.value);
    expect(p.confidence).toBeGreaterThan(0.5);
    expect(p.confidence).toBeLessThanOrEqual(1);
    expect(p.probability).toBe(p.confidence);
    // Applied when at or above the threshold (priority is a triage field by default), else suggested.
    if (p.confidence >= 0.7) {
      expect(a.body.priority).toBe(p.value);
      expect(a.body.applied).toContain('priority');
    } else expect(a.body.suggestions.priority.value).toBe(p.value);
    // The language of the first message, detected.
    expect(a.body.decisions.fields.language?.value).toBe('en');

    const second = await ticket(t, LOW, { priority: 'low' });
    const b = await svc.api.post(`/v1/tickets/${second}/ai/triage`, {}, t.as);
    expect(b.status, b.text).toBe(200);
    expect(LOW_OR_NORMAL).toContain(b.body.decisions.fields.priority.value);
    expect(b.body.priority).toBe('low');
    // An activity by the AI carries the dedicated engine's confidence.
    const acts = (await svc.api.get(`/v1/tickets/${first}/activities`, t.as)).body.data as any[];
    const changed = acts.find((x) => x.type === 'priority_changed' && x.actor.type === 'ai');
    if (p.confidence >= 0.7)
      expect(changed.data).toMatchObject({ via: 'triage', model: 'dedicated-linear-v1', confidence: p.confidence });
  });

  it('decides new tickets on its own with auto_triage', async () => {
    const s = await svc.api.patch('/v1/triage', { auto_triage: true }, t.as);
    expect(s.status, s.text).toBe(200);
    const first = await ticket(t, URGENT);
    const second = await ticket(t, LOW);
    const decided = async (id: string) =>
      (await svc.api.get(`/v1/tickets/${id}`, t.as)).body.custom.ai_decisions?.fields?.priority?.value;
    await expect.poll(() => decided(first), { timeout: 20_000 }).toBeDefined();
    await expect.poll(() => decided(second), { timeout: 20_000 }).toBeDefined();
    expect(HIGH_OR_URGENT).toContain(await decided(first));
    expect(LOW_OR_NORMAL).toContain(await decided(second));
    const one = (await svc.api.get(`/v1/tickets/${first}`, t.as)).body;
    expect(one.custom.ai_decisions.engine).toBe('dedicated');
    if (one.custom.ai_decisions.fields.priority.confidence >= 0.7) expect(HIGH_OR_URGENT).toContain(one.priority);
    expect((await svc.api.patch('/v1/triage', { auto_triage: false }, t.as)).status).toBe(200);
  });

  it("is the workspace's own: another workspace has no engine (training shows from its first solve)", async () => {
    const other = await newTenant(svc.api);
    expect((await triageOf(other)).engine).toEqual({ provider: 'none', model: '', connected: false });
    await solved(other, LOW, 'low', 1, 'Where is the VAT number?');
    expect((await triageOf(other)).engine).toMatchObject({
      provider: 'none',
      connected: false,
      training: { status: 'learning', solved: 1, needed: 40 },
    });
    const id = await ticket(other, URGENT);
    expect((await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, other.as)).status).toBe(404);
  });

  it('keeps its model over a restart (stored in the database)', async () => {
    await svc.restart();
    expect((await triageOf(t)).engine).toMatchObject({ provider: 'dedicated', connected: true });
    const id = await ticket(t, URGENT);
    const r = await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, t.as);
    expect(r.status, r.text).toBe(200);
    expect(HIGH_OR_URGENT).toContain(r.body.decisions.fields.priority.value);
  });

  it('retrains after more solves, and decides with the new model at once', async () => {
    const before = (await triageOf(t)).engine.training;
    await solved(t, 'Cannot sign in with SSO', 'high', 5, 'The SSO page loops back to the sign-in form.');
    await expect
      .poll(async () => (await triageOf(t)).engine.training.trained_at, { timeout: 60_000 })
      .not.toBe(before.trained_at);
    const after = (await triageOf(t)).engine.training;
    expect(after).toMatchObject({ status: 'ready', solved: 45, trained_on: 36 });
    // The process's cached model gives way to the one just stored.
    const id = await ticket(t, LOW);
    const r = await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.decisions.model_version).toBe(after.trained_at);
  });

  it("learns what the workspace records: sentiment and category where tickets carry them, needs_human from an agent's reply", async () => {
    const w = await newTenant(svc.api, 'Recorded Co');
    const solvedWith = async (subject: string, text: string, custom: Record<string, string>, agentReplied: boolean) => {
      const id = await ticket(w, subject, { body_html: `<p>${text}</p>` });
      const c = await svc.api.patch(`/v1/tickets/${id}`, { custom }, w.as);
      expect(c.status, c.text).toBe(200);
      if (agentReplied) {
        const m = await svc.api.post(`/v1/tickets/${id}/messages`, { kind: 'reply', body_html: '<p>On it.</p>' }, w.as);
        expect(m.status, m.text).toBe(201);
      }
      const r = await svc.api.patch(`/v1/tickets/${id}`, { status: 'solved' }, w.as);
      expect(r.status, r.text).toBe(200);
    };
    const ANGRY = 'You charged my card three times again';
    const HAPPY = 'Just wanted to say the new dashboard is lovely';
    for (let i = 0; i < 20; i++) {
      await solvedWith(
        ANGRY,
        'This is unacceptable, fix it now.',
        { ai_sentiment: 'frustrated', ai_category: 'Billing' },
        true,
      );
      await solvedWith(
        HAPPY,
        'Great work on the redesign, thanks!',
        { ai_sentiment: 'positive', ai_category: 'Feedback' },
        false,
      );
    }
    await expect
      .poll(async () => (await svc.api.get('/v1/triage', w.as)).body.engine.training?.status, { timeout: 60_000 })
      .toBe('ready');
    const accuracy = (await svc.api.get('/v1/triage', w.as)).body.engine.training.accuracy;
    expect(Object.keys(accuracy)).toEqual(expect.arrayContaining(['needs_human', 'sentiment', 'category']));

    const fieldsOf = async (subject: string, text: string) => {
      const id = await ticket(w, subject, { body_html: `<p>${text}</p>` });
      const r = await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, w.as);
      expect(r.status, r.text).toBe(200);
      return { fields: r.body.decisions.fields, ticket: (await svc.api.get(`/v1/tickets/${id}`, w.as)).body };
    };
    const angry = await fieldsOf(ANGRY, 'This is unacceptable, fix it now.');
    expect(angry.fields.sentiment).toMatchObject({ value: 'frustrated' });
    expect(angry.fields.category).toMatchObject({ value: 'Billing' });
    expect(angry.fields.needs_human).toMatchObject({ value: true });
    expect(angry.fields.sentiment.confidence).toBeGreaterThan(0.5);
    // Stored where the contract says: custom.ai_sentiment and custom.ai_category.
    expect(angry.ticket.custom).toMatchObject({ ai_sentiment: 'frustrated', ai_category: 'Billing' });
    const happy = await fieldsOf(HAPPY, 'Great work on the redesign, thanks!');
    expect(happy.fields.sentiment).toMatchObject({ value: 'positive' });
    expect(happy.fields.category).toMatchObject({ value: 'Feedback' });
    expect(happy.fields.needs_human).toMatchObject({ value: false });
  });
});
