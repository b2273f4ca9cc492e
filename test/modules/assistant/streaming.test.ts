// A run's answer as an event stream (session, text, done; error), the conversation held while
// it runs (409 assistant_busy, released when it ends or the client goes away), 30 messages a
// minute per person (429), and a provider failure passed on (502 ai_unavailable).
import { describe, expect, it } from 'vitest';
import { gate } from '../../support/ai-standin/index.js';
import { addMember, isErrorBody } from '../../support/helpers.js';
import { assistantSuite, assistantTenant, newSession, openStream, send, streamed, ticketOf } from './setup.js';

const suite = assistantSuite('anthropic');

const running = async (s: string, as: Parameters<typeof send>[1]) =>
  (await suite.svc.api.get(`/v1/assistant/sessions/${s}`, as)).body.session.running;

describe('streaming', () => {
  it('streams session, the text as the model writes it, and done; the transcript keeps the whole text', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    ai.answer({ text: 'Three tickets are open.', chunks: ['Three tickets ', 'are open.'] });
    const r = await streamed(svc, `/v1/assistant/sessions/${s}/messages`, { text: 'How many are open?' }, t.as);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    expect(r.events.map((e) => e.event)).toEqual(['session', 'text', 'text', 'done']);
    expect(r.events[0]!.data).toMatchObject({ id: s, title: 'How many are open?', running: true });
    expect(r.events.filter((e) => e.event === 'text').map((e) => e.data.text)).toEqual(['Three tickets ', 'are open.']);
    expect(r.events.at(-1)!.data).toEqual({ status: 'complete' });
    const detail = (await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body;
    expect(detail.session.running).toBe(false);
    expect(detail.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'Three tickets are open.' });
  });

  it('answers a provider failure before the stream starts as the JSON error (502 ai_unavailable); nothing is held', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    ai.answer({ status: 500 });
    const st = await openStream(svc, `/v1/assistant/sessions/${s}/messages`, { text: 'Hello?' }, t.as);
    expect(st.status).toBe(502);
    expect(isErrorBody(JSON.parse(await st.raw()), 502, 'ai_unavailable')).toBe(true);
    ai.answer({ status: 500 });
    const r = await send(svc, t.as, s, 'Hello again?');
    expect(isErrorBody(r.body, 502, 'ai_unavailable')).toBe(true);
    expect(await running(s, t.as)).toBe(false);
    ai.answer({ text: 'I am back.' });
    expect((await send(svc, t.as, s, 'Now?')).body.text).toBe('I am back.');
  });

  it('ends the stream with an error event when a later model turn fails, and releases the conversation', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t, 'Flaky');
    const s = await newSession(svc, t.as);
    ai.answer({ toolCalls: [{ name: 'lookup_ticket', arguments: { ticket: ticket.id } }] }, { status: 500 });
    const r = await streamed(svc, `/v1/assistant/sessions/${s}/messages`, { text: 'Look it up' }, t.as);
    expect(r.status).toBe(200);
    expect(r.events.map((e) => (e.event === 'tool' ? `tool:${e.data.status}` : e.event))).toEqual([
      'session',
      'tool:running',
      'tool:done',
      'error',
    ]);
    expect(isErrorBody(r.events.at(-1)!.data, 502, 'ai_unavailable')).toBe(true);
    expect(await running(s, t.as)).toBe(false);
  });
});

describe('one run at a time', () => {
  it('answers 409 assistant_busy while the conversation runs, and takes messages again once it ended', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    const other = await newSession(svc, t.as);
    const g = gate();
    ai.answer({ gate: g, text: 'Done thinking.' });
    const first = send(svc, t.as, s, 'Think about it');
    await g.reached;
    expect(await running(s, t.as)).toBe(true);
    const busy = await send(svc, t.as, s, 'Are you there?');
    expect(isErrorBody(busy.body, 409, 'assistant_busy')).toBe(true);
    expect((await svc.api.delete(`/v1/assistant/sessions/${s}`, t.as)).body.code).toBe('assistant_busy');
    // Another conversation of the same person is not held.
    ai.answer({ text: 'Other answer.' });
    expect((await send(svc, t.as, other, 'Meanwhile')).status).toBe(200);
    g.release();
    expect((await first).body).toMatchObject({ text: 'Done thinking.', status: 'complete' });
    expect(await running(s, t.as)).toBe(false);
    // The refused message was not stored.
    const texts = (await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body.messages.map(
      (m: { text: string }) => m.text,
    );
    expect(texts).toEqual(['Think about it', 'Done thinking.']);
    ai.answer({ text: 'Yes.' });
    expect((await send(svc, t.as, s, 'Are you there?')).status).toBe(200);
  });

  it('a run whose holder died long ago does not hold the conversation (the staleness bound)', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    await svc.rt.deps.database.db
      .updateTable('assistant_sessions')
      .set({ run_id: '0193c6a0-0000-7000-8000-000000000001', run_at: new Date(Date.now() - 3600_000) })
      .where('id', '=', s)
      .execute();
    expect(await running(s, t.as)).toBe(false);
    ai.answer({ text: 'Taken over.' });
    expect((await send(svc, t.as, s, 'Hello')).status).toBe(200);
  });

  it('stops the provider call when the client goes away, and releases the conversation', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    const g = gate();
    ai.answer({
      gate: g,
      text: 'A long answer that never finishes',
      chunks: ['A long ', 'answer that never finishes'],
    });
    const st = await openStream(svc, `/v1/assistant/sessions/${s}/messages`, { text: 'Tell me everything' }, t.as);
    expect(st.status).toBe(200);
    expect((await st.next())!.event).toBe('session');
    expect(await st.next()).toMatchObject({ event: 'text' });
    st.abort();
    const req = await ai.request(0);
    await req.done;
    expect(req.closedEarly).toBe(true);
    g.release();
    await expect.poll(() => running(s, t.as)).toBe(false);
    ai.answer({ text: 'Fresh start.' });
    expect((await send(svc, t.as, s, 'Again')).body.text).toBe('Fresh start.');
  });
});

describe('rate limit', () => {
  it('answers 429 past 30 messages a minute per person, with Retry-After', async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const agent = await addMember(svc, t, 'agent');
    const s = await newSession(svc, agent.as);
    for (let i = 0; i < 30; i++) {
      const r = await send(svc, agent.as, s, `Message ${i}`);
      expect(r.status, r.text).toBe(200);
    }
    const over = await send(svc, agent.as, s, 'One too many');
    expect(isErrorBody(over.body, 429, 'rate_limited')).toBe(true);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another person is not limited by it.
    const mine = await newSession(svc, t.as);
    expect((await send(svc, t.as, mine, 'Hello')).status).toBe(200);
  });
});
