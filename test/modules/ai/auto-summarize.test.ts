// auto_summarize: a new public message queues one refresh of the stored summary per ticket
// (debounced: the messages meanwhile ride on the job waiting), which stores custom.ai_summary as
// POST /v1/tickets/{id}/ai/summary does (one ticket.updated, metered summarize to no one).
// Nothing with the switch or AI off, or for an internal note. Waits on states (the job's row in
// the queue, the stored summary), never on time.
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SUMMARIZE_JOB } from '../../../src/modules/ai/features/auto-summarize.js';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import {
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { agentMessage, customerTicket, promptOf, usageOf } from './features-setup.js';

const KEY = 'sk-standin-autosum-0000';
let ai: OpenAiStandIn;
let svc: Service;

beforeAll(async () => {
  ai = await startOpenAiStandIn({ keys: [KEY] });
  svc = await startService(
    { AI_PROVIDER: 'openai', AI_BASE_URL: ai.url, AI_API_KEY: KEY, AI_MODEL: 'gpt-4.1', AI_FAST_MODEL: 'gpt-4.1-mini' },
    // Long enough that a test's two messages in a row always fall within it.
    { ai: { timeoutMs: 5000, maxRetries: 0 }, autoSummarize: { delaySeconds: 4 } },
  );
});
afterAll(async () => {
  await svc?.stop();
  await ai?.stop();
});
beforeEach(() => {
  ai.reset();
  ai.fallback = () => ({
    json: { summary: 'The customer was charged twice.', key_points: ['Refund asked'], sentiment: 'negative' },
  });
});
afterEach(() => expect(ai.pending()).toBe(0));

const summaryCalls = () =>
  ai.requests.filter((r) => r.body.response_format?.json_schema?.name === 'ticket_summary').length;

/** The states of the summary jobs ever queued for the ticket (the queue's own rows). */
async function jobsOf(ticketId: string): Promise<string[]> {
  const schema = svc.rt.deps.jobs.schema;
  const r = await sql<{ state: string }>`SELECT state FROM ${sql.table(`${schema}.job`)}
    WHERE name = ${SUMMARIZE_JOB} AND data ->> 't' = ${ticketId}`.execute(svc.rt.deps.database.db);
  return r.rows.map((x) => x.state);
}

const ticketOf = async (t: Tenant, id: string) => {
  const r = await svc.api.get(`/v1/tickets/${id}`, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

async function aiSettings(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.patch('/v1/ai/settings', body, t.as);
  expect(r.status, r.text).toBe(200);
}

describe('auto_summarize', () => {
  it('two messages in quick succession: one job, one summary call, stored as the summary route stores it', async () => {
    const t = await newTenant(svc.api);
    await aiSettings(t, { auto_summarize: true });
    const since = await latestSeqOf(svc, t);
    const { id } = await customerTicket(svc, t, 'I was charged twice for my subscription');
    await agentMessage(svc, t, id, '<p>Sorry about that, looking into the duplicate charge now.</p>');
    // The reply found the job of the first message waiting: still one.
    expect(await jobsOf(id)).toEqual(['created']);

    await expect
      .poll(async () => (await ticketOf(t, id)).custom.ai_summary?.summary, { timeout: 30_000 })
      .toBe('The customer was charged twice.');
    await expect.poll(() => jobsOf(id), { timeout: 30_000 }).toEqual(['completed']);
    expect(summaryCalls()).toBe(1);
    // The job read the thread as it was when it ran: both messages.
    const { user } = promptOf(ai.requests[0]!);
    expect(user).toContain('charged twice for my subscription');
    expect(user).toContain('looking into the duplicate charge');

    const ticket = await ticketOf(t, id);
    expect(ticket.custom.ai_summary).toMatchObject({ key_points: ['Refund asked'], sentiment: 'negative' });
    const usage = (await usageOf(svc, t)).filter((u) => u.feature === 'summarize');
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ user_id: null, ticket_id: id, outcome: 'ok' });
    const updates = (await eventsAfterOf(svc, t, since)).filter(
      (e) => e.type === 'ticket.updated' && e.data.ticket.id === id && e.data.changes.includes('custom'),
    );
    expect(updates).toHaveLength(1);
    expect(updates[0].data.changes).toEqual(['custom']);
    expect(updates[0].data.ticket.custom.ai_summary).toEqual(ticket.custom.ai_summary);

    // An internal note does not refresh the summary.
    await agentMessage(svc, t, id, '<p>Checked the billing logs.</p>', 'note');
    expect(await jobsOf(id)).toEqual(['completed']);
    // A later reply queues the next refresh.
    await agentMessage(svc, t, id, '<p>The refund is on its way.</p>');
    await expect.poll(async () => (await jobsOf(id)).sort(), { timeout: 30_000 }).toEqual(['completed', 'completed']);
    expect(summaryCalls()).toBe(2);
  });

  it('off (the default), or AI switched off: no job, no call', async () => {
    const t = await newTenant(svc.api);
    const first = await customerTicket(svc, t, 'Where is my order?');
    await agentMessage(svc, t, first.id, '<p>It ships today.</p>');
    expect(await jobsOf(first.id)).toEqual([]);

    await aiSettings(t, { auto_summarize: true, enabled: false });
    const second = await customerTicket(svc, t, 'Where is my other order?');
    await agentMessage(svc, t, second.id, '<p>That one too.</p>');
    expect(await jobsOf(second.id)).toEqual([]);
    expect(summaryCalls()).toBe(0);
    expect((await ticketOf(t, second.id)).custom.ai_summary).toBeUndefined();
  });

  it('switched off while the job waits: the job runs and calls nothing', async () => {
    const t = await newTenant(svc.api);
    await aiSettings(t, { auto_summarize: true });
    const { id } = await customerTicket(svc, t, 'My password reset mail never arrives');
    expect(await jobsOf(id)).toEqual(['created']);
    await aiSettings(t, { auto_summarize: false });
    await expect.poll(() => jobsOf(id), { timeout: 30_000 }).toEqual(['completed']);
    expect(summaryCalls()).toBe(0);
    expect((await usageOf(svc, t)).filter((u) => u.feature === 'summarize')).toEqual([]);
    expect((await ticketOf(t, id)).custom.ai_summary).toBeUndefined();
  });
});
