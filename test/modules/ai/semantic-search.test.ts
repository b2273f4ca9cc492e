// Semantic search (issue 35 item 4): GET /v1/ai/search over vectors the jobs compute after
// writes, with the embedded model (no provider call), ranked together with the full-text
// matches; what the caller may see; bad input; a model change embeds everything again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/deps.js';
import { embedderOf } from '../../../src/modules/ai/embeddings/embedder.js';
import { backfill, runEmbedJob } from '../../../src/modules/ai/embeddings/queue.js';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import { makeTicket } from '../../support/builders.js';
import { addMember, isErrorBody, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

const KEY = 'sk-standin-semantic-0000';
let ai: OpenAiStandIn;
let svc: Service;
let t: Tenant;

/** Polls until `ok` holds (a state, not a time), or fails with the last value. */
async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 45_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`still not so: ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const vectorsOf = async (workspaceId: string) =>
  svc.rt.deps.database.db
    .selectFrom('embeddings')
    .select(['kind', 'object_id', 'model'])
    .where('workspace_id', '=', workspaceId)
    .execute();

const embedded = (workspaceId: string, ids: string[]) =>
  until(
    () => vectorsOf(workspaceId),
    (rows) => ids.every((id) => rows.some((r) => r.object_id === id)),
  );

interface Result {
  tickets: Array<{ id: string; number: number; subject: string }>;
  contacts: unknown[];
  articles: Array<{ id: string; title: string; status: string; snippet: string }>;
  semantic: { tickets: string[]; articles: string[] };
}

const search = async (q: string, as = t.as): Promise<Result> => {
  const r = await svc.api.get(`/v1/ai/search?q=${encodeURIComponent(q)}`, as);
  expect(r.status, r.text).toBe(200);
  return r.body as Result;
};

let invoice: { id: string; number: number };
let password: { id: string; number: number };
let printer: { id: string; number: number };

beforeAll(async () => {
  ai = await startOpenAiStandIn({ keys: [KEY] });
  svc = await startService(
    { AI_PROVIDER: 'openai', AI_BASE_URL: ai.url, AI_API_KEY: KEY, AI_MODEL: 'gpt-4.1' },
    { ai: { timeoutMs: 5000, maxRetries: 0 } },
  );
  t = await newTenant(svc.api);
  invoice = await makeTicket(svc.api, t, { subject: 'My invoice was charged twice this month' });
  password = await makeTicket(svc.api, t, { subject: 'The password reset email never arrives' });
  printer = await makeTicket(svc.api, t, { subject: 'Office printer is out of toner' });
  await embedded(t.workspaceId, [invoice.id, password.id, printer.id]);
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await ai?.stop();
});

describe('GET /v1/ai/search', () => {
  it('finds a ticket by meaning when no word matches, marked as such, and leaves the unrelated out', async () => {
    const r = await search('I was billed double for my subscription');
    expect(r.tickets[0]?.id).toBe(invoice.id);
    expect(r.semantic.tickets).toContain(invoice.id);
    expect(r.tickets.map((x) => x.id)).not.toContain(printer.id);
    // Nothing was asked of the provider: the embedded model made every vector.
    expect(ai.requests.filter((q) => q.path === '/v1/embeddings')).toHaveLength(0);
    const rows = await vectorsOf(t.workspaceId);
    expect(new Set(rows.map((x) => x.model))).toEqual(new Set(['universal-sentence-encoder-lite-512']));
  });

  it('puts the ticket whose number is asked first, and a rare code found in a message before meaning', async () => {
    const byNumber = await search(`#${printer.number}`);
    expect(byNumber.tickets[0]?.id).toBe(printer.id);
    expect(byNumber.semantic.tickets).not.toContain(printer.id);

    const coded = await makeTicket(svc.api, t, { subject: 'Sync stopped overnight' });
    const m = await svc.api.post(
      `/v1/tickets/${coded.id}/messages`,
      { kind: 'note', body_html: '<p>The log shows ERR_SYNC_4471 on every retry.</p>' },
      t.as,
    );
    expect(m.status).toBe(201);
    await embedded(t.workspaceId, [m.body.id]);
    const r = await search('ERR_SYNC_4471');
    expect(r.tickets[0]?.id).toBe(coded.id);
    expect(r.semantic.tickets).not.toContain(coded.id);
  });

  it("a message's meaning finds its ticket", async () => {
    const ticket = await makeTicket(svc.api, t, { subject: 'Question' });
    const m = await svc.api.post(
      `/v1/tickets/${ticket.id}/messages`,
      { kind: 'reply', body_html: '<p>The parcel arrived crushed and the vase inside is broken.</p>' },
      t.as,
    );
    expect(m.status).toBe(201);
    await embedded(t.workspaceId, [m.body.id]);
    const r = await search('my package was damaged in shipping');
    expect(r.tickets[0]?.id).toBe(ticket.id);
  });

  it('shows a private team’s tickets only to those who may see them, and another workspace nothing', async () => {
    const team = await svc.api.post('/v1/teams', { name: 'Legal', private: true }, t.as);
    expect(team.status).toBe(201);
    const secret = await makeTicket(svc.api, t, {
      subject: 'Lawyer letter about a trademark dispute',
      team_id: team.body.id,
    });
    await embedded(t.workspaceId, [secret.id]);
    const q = 'legal claim over our brand name';
    expect((await search(q)).tickets.map((x) => x.id)).toContain(secret.id);
    const agent = await addMember(svc, t, 'agent');
    expect((await search(q, agent.as)).tickets.map((x) => x.id)).not.toContain(secret.id);

    const other = await newTenant(svc.api, 'Other Co');
    const theirs = await search('I was billed double for my subscription', other.as);
    expect(theirs.tickets).toEqual([]);
  });

  it('finds published articles by meaning, never a draft by meaning, and forgets an unpublished one', async () => {
    const published = await svc.api.post(
      '/v1/kb/articles',
      {
        title: 'Getting a refund',
        body_html: '<p>If a payment was taken two times, we return the extra amount within five days.</p>',
        status: 'published',
      },
      t.as,
    );
    expect(published.status).toBe(201);
    const draft = await svc.api.post(
      '/v1/kb/articles',
      { title: 'Refunds for double payments (draft)', body_html: '<p>Money back when you paid twice.</p>' },
      t.as,
    );
    expect(draft.status).toBe(201);
    await embedded(t.workspaceId, [published.body.id]);
    const r = await search('I paid twice, can I get my money back');
    expect(r.articles[0]?.id).toBe(published.body.id);
    expect(r.semantic.articles).toContain(published.body.id);
    expect(r.articles.map((a) => a.id)).not.toContain(draft.body.id);
    // Its words still find the draft, as in /v1/search.
    expect((await search('draft')).articles.map((a) => a.id)).toContain(draft.body.id);

    const off = await svc.api.patch(`/v1/kb/articles/${published.body.id}`, { status: 'draft' }, t.as);
    expect(off.status).toBe(200);
    await until(
      () => vectorsOf(t.workspaceId),
      (rows) => !rows.some((x) => x.object_id === published.body.id),
    );
    expect((await search('I paid twice, can I get my money back')).articles.map((a) => a.id)).not.toContain(
      published.body.id,
    );
  });

  it('refuses an empty, blank or 2,000-character q with 422', async () => {
    for (const q of ['', '   ', 'x'.repeat(2000)]) {
      const r = await svc.api.get(`/v1/ai/search?q=${encodeURIComponent(q)}`, t.as);
      expect(r.status, q.slice(0, 10)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
    }
    expect((await svc.api.get('/v1/ai/search', t.as)).status).toBe(422);
  });

  it('answers 404 ai_disabled when AI is off in the workspace', async () => {
    const w = await newTenant(svc.api, 'AI off');
    expect((await svc.api.patch('/v1/ai/settings', { enabled: false }, w.as)).status).toBe(200);
    const r = await svc.api.get('/v1/ai/search?q=refund', w.as);
    expect(r.status).toBe(404);
    expect(isErrorBody(r.body, 404, 'ai_disabled')).toBe(true);
  });

  it("a new model embeds everything again: the provider's /embeddings, the old vectors dropped", async () => {
    const deps: Deps = {
      ...svc.rt.deps,
      config: {
        ...svc.rt.deps.config,
        ai: { ...svc.rt.deps.config.ai, embeddings: 'provider', embeddingModel: 'text-embedding-3-small' },
      },
    };
    const provider = embedderOf(deps)!;
    expect(provider.model).toBe('openai:text-embedding-3-small');
    const before = await vectorsOf(t.workspaceId);
    expect(await backfill(deps, provider, t.workspaceId)).toBeGreaterThanOrEqual(before.length);
    await runEmbedJob(deps, provider, t.workspaceId);
    const after = await vectorsOf(t.workspaceId);
    expect(after.length).toBe(before.length);
    expect(new Set(after.map((x) => x.model))).toEqual(new Set(['openai:text-embedding-3-small']));
    expect(ai.requests.filter((q) => q.path === '/v1/embeddings').length).toBeGreaterThan(0);
  });
});
