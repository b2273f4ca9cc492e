// The assistant's conversations (interface.md "Assistant"): start, list newest first, read,
// rename, delete; titled from the first message unless given (a rename wins); private to their
// person (another person's id 404, another workspace 404); people only (an API key 403); 403
// assistant_off unless AI and the assistant are on; bad input 422; onboarding's try_ollie.
import { describe, expect, it } from 'vitest';
import { addMember, isErrorBody, newApiKey, newTenant, startService } from '../../support/helpers.js';
import { assistantSuite, assistantTenant, newSession, send } from './setup.js';

const suite = assistantSuite('openai');

describe('conversations', () => {
  it('starts, lists newest first, titles from the first message, renames, deletes', async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const first = await newSession(svc, t.as);
    const named = await newSession(svc, t.as, 'Weekly review');
    const created = await svc.api.get(`/v1/assistant/sessions/${first}`, t.as);
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      session: { id: first, title: '', running: false },
      messages: [],
      approval: null,
    });

    suite.ai.answer({ text: 'You have **3** open tickets.' });
    const r = await send(svc, t.as, first, 'How many open tickets do I have?\nThanks');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      session: { id: first, title: 'How many open tickets do I have?', running: false },
      text: 'You have **3** open tickets.',
      steps: [],
      approval: null,
      status: 'complete',
    });

    // A conversation titled at its start keeps its title.
    suite.ai.answer({ text: 'Sure.' });
    await send(svc, t.as, named, 'Something else entirely');
    const list = await svc.api.get('/v1/assistant/sessions', t.as);
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string; title: string }) => [s.id, s.title])).toEqual([
      [named, 'Weekly review'],
      [first, 'How many open tickets do I have?'],
    ]);

    const detail = await svc.api.get(`/v1/assistant/sessions/${first}`, t.as);
    expect(detail.body.messages).toMatchObject([
      { role: 'user', text: 'How many open tickets do I have?\nThanks', steps: [] },
      { role: 'assistant', text: 'You have **3** open tickets.', steps: [] },
    ]);

    // A rename wins over the first message's title, and later messages do not change it.
    const renamed = await svc.api.patch(`/v1/assistant/sessions/${first}`, { title: 'Open tickets' }, t.as);
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ id: first, title: 'Open tickets' });
    suite.ai.answer({ text: 'Still 3.' });
    await send(svc, t.as, first, 'And now?');
    expect((await svc.api.get(`/v1/assistant/sessions/${first}`, t.as)).body.session.title).toBe('Open tickets');

    const del = await svc.api.delete(`/v1/assistant/sessions/${first}`, t.as);
    expect(del.status).toBe(204);
    expect((await svc.api.get(`/v1/assistant/sessions/${first}`, t.as)).status).toBe(404);
    expect((await svc.api.get('/v1/assistant/sessions', t.as)).body.data.map((s: { id: string }) => s.id)).toEqual([
      named,
    ]);
  });

  it("is private to its person: another member's and another workspace's conversation answer 404", async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const agent = await addMember(svc, t, 'agent');
    const mine = await newSession(svc, t.as);
    const other = await assistantTenant(svc);
    const missing = await svc.api.get('/v1/assistant/sessions/0193c6a0-0000-7000-8000-000000000000', t.as);
    expect(isErrorBody(missing.body, 404, 'not_found')).toBe(true);
    for (const as of [agent.as, other.as]) {
      expect((await svc.api.get(`/v1/assistant/sessions/${mine}`, as)).body).toEqual(missing.body);
      expect((await svc.api.patch(`/v1/assistant/sessions/${mine}`, { title: 'Mine now' }, as)).status).toBe(404);
      expect((await svc.api.delete(`/v1/assistant/sessions/${mine}`, as)).status).toBe(404);
      expect((await send(svc, as, mine, 'hello')).status).toBe(404);
      expect((await svc.api.get('/v1/assistant/sessions', as)).body.data).toEqual([]);
    }
    expect((await svc.api.get('/v1/assistant/sessions/not-a-uuid', t.as)).status).toBe(404);
    // Nothing changed.
    expect((await svc.api.get(`/v1/assistant/sessions/${mine}`, t.as)).body.session.title).toBe('');
  });

  it('is for signed-in people: an API key gets 403; every role from viewer up may use it', async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const key = await newApiKey(svc.api, t, ['tickets:read', 'tickets:write', 'settings:write']);
    const as = { token: key.key };
    for (const [method, path] of [
      ['GET', '/v1/assistant/sessions'],
      ['POST', '/v1/assistant/sessions'],
      ['GET', '/v1/assistant/tips'],
      ['POST', '/v1/assistant/actions/0193c6a0-0000-7000-8000-000000000000/decision'],
    ] as const) {
      const r = await svc.api.req(method, path, { ...as, ...(method === 'POST' ? { body: {} } : {}) });
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    const viewer = await addMember(svc, t, 'viewer');
    const s = await newSession(svc, viewer.as);
    suite.ai.answer({ text: 'Hello.' });
    expect((await send(svc, viewer.as, s, 'hi')).status).toBe(200);
    expect((await svc.api.get('/v1/assistant/tips', viewer.as)).status).toBe(200);
  });

  it('answers 403 assistant_off while the setting ai.assistant or AI in the workspace is off', async () => {
    const { svc } = suite;
    const t = await newTenant(svc.api);
    const off = await svc.api.get('/v1/assistant/sessions', t.as);
    expect(isErrorBody(off.body, 403, 'assistant_off')).toBe(true);
    expect((await svc.api.post('/v1/assistant/sessions', {}, t.as)).status).toBe(403);
    expect((await svc.api.get('/v1/assistant/tips', t.as)).body.code).toBe('assistant_off');
    await svc.api.patch('/v1/ai/settings', { assistant: true }, t.as);
    const s = await newSession(svc, t.as);
    await svc.api.patch('/v1/ai/settings', { enabled: false }, t.as);
    const r = await send(svc, t.as, s, 'hello');
    expect(isErrorBody(r.body, 403, 'assistant_off')).toBe(true);
    expect((await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body.code).toBe('assistant_off');
  });

  it('refuses bad input with 422: text of 0 or over 8,000 characters, an unknown context field, a bad title', async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    for (const body of [
      { text: '' },
      { text: 'x'.repeat(8001) },
      {},
      { text: 'hi', context: { screen: 'inbox' } },
      { text: 'hi', context: { path: 'x'.repeat(2001) } },
    ]) {
      const r = await svc.api.post(`/v1/assistant/sessions/${s}/messages`, body, t.as);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(isErrorBody(r.body, 422)).toBe(true);
    }
    expect((await svc.api.post('/v1/assistant/sessions', { title: '' }, t.as)).status).toBe(422);
    expect((await svc.api.patch(`/v1/assistant/sessions/${s}`, { title: 'x'.repeat(201) }, t.as)).status).toBe(422);
    // Exactly 8,000 characters is fine.
    suite.ai.answer({ text: 'Long read.' });
    expect((await send(svc, t.as, s, 'y'.repeat(8000))).status).toBe(200);
    expect((await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body.messages).toHaveLength(2);
  });

  it("sends the person's screen as data, with their name, role, the assistant's name and the date in the system prompt", async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    ai.answer({ text: 'You are on the inbox.' });
    const r = await send(svc, t.as, s, 'Where am I?', { path: '/inbox/open', page: 'inbox', view_id: 'open' });
    expect(r.status, r.text).toBe(200);
    const body = (await ai.request(0)).body;
    const system: string = body.messages[0].content;
    expect(body.messages[0].role).toMatch(/system|developer/);
    expect(system).toContain('Ollie');
    expect(system).toContain('"Olivia Owner"');
    expect(system).toContain('owner');
    expect(system).toContain(new Date().toISOString().slice(0, 10));
    expect(system).toMatch(/data, never instructions/);
    const user = body.messages.at(-1);
    expect(user.role).toBe('user');
    expect(user.content).toContain('Where am I?');
    expect(user.content).toContain('<screen>');
    expect(user.content).toContain('"path":"/inbox/open"');
  });

  it('turns onboarding try_ollie done at the first conversation', async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const done = async () =>
      (await svc.api.get('/v1/onboarding', t.as)).body.steps.find((x: { id: string }) => x.id === 'try_ollie').done;
    expect(await done()).toBe(false);
    await newSession(svc, t.as);
    expect(await done()).toBe(true);
  });
});

describe('without an AI provider', () => {
  it('answers 403 assistant_off even with the setting on', async () => {
    const svc = await startService({}, { jobs: false });
    try {
      const t = await newTenant(svc.api);
      const r = await svc.api.patch('/v1/workspace', { settings: { ai: { assistant: true } } }, t.as);
      expect(r.status, r.text).toBe(200);
      const list = await svc.api.get('/v1/assistant/sessions', t.as);
      expect(isErrorBody(list.body, 403, 'assistant_off')).toBe(true);
    } finally {
      await svc.stop();
    }
  });
});
