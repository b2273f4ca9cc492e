// Streaming (interface.md "AI" rule 7) of draft, ask and rewrite on both stand-ins: `delta`
// events forwarded as the provider sends them (the first one while the stand-in still holds the
// rest), then one `done` with the JSON the route answers without streaming; multi-line pieces
// as several data lines; the headers; an error before the first byte as a JSON error, after it as
// an `error` event; a client that goes away stops the provider call, metered as cancelled.
import { describe, expect, it } from 'vitest';
import { gate, startOpenAiStandIn } from '../../support/ai-standin/index.js';
import { newTenant, startService } from '../../support/helpers.js';
import { customerTicket, featuresSuite, openStream, usageOf, VENDORS } from './features-setup.js';

describe.each(VENDORS)('AI streaming on the %s stand-in', (vendor) => {
  const s = featuresSuite(vendor);

  it('streams a draft: the first delta while the provider holds the rest, then done with the JSON answer', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Where is my parcel?');
    const text = 'Hello Jane,\n\nit ships today.';
    const g = gate();
    ai.answer({ gate: g, text, chunks: ['Hello Jane,', '\n\nit ships', ' today.'] });
    const stream = await openStream(svc, `/v1/tickets/${ticket.id}/ai/draft`, {}, t.as);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.headers.get('cache-control')).toBe('no-cache');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.headers.get('x-request-id')).toBeTruthy();
    expect(stream.headers.get('ratelimit-limit')).toBeTruthy();
    // The first piece arrives while the stand-in holds the others.
    expect(await stream.next()).toEqual({ event: 'delta', data: 'Hello Jane,' });
    g.release();
    const rest = await stream.rest();
    expect(rest.slice(0, -1)).toEqual([
      { event: 'delta', data: '\n\nit ships' },
      { event: 'delta', data: ' today.' },
    ]);
    const done = rest.at(-1)!;
    expect(done.event).toBe('done');

    // The same answer without streaming: the JSON done carried.
    ai.answer({ text });
    const plain = await svc.api.post(`/v1/tickets/${ticket.id}/ai/draft`, {}, t.as);
    expect(plain.status, plain.text).toBe(200);
    expect(JSON.parse(done.data)).toEqual(plain.body);
    expect(plain.body.body_html).toBe('<p>Hello Jane,</p><p>it ships today.</p>');
    // Charged once per call, at done.
    expect((await usageOf(svc, t)).map((r) => [r.feature, r.outcome])).toEqual([
      ['draft_reply', 'ok'],
      ['draft_reply', 'ok'],
    ]);
  });

  it('streams ask and rewrite; a piece of several lines is sent as several data lines', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Can I change my address?');
    ai.answer({ text: 'Yes.\nIn settings.', chunks: ['Yes.\nIn settings.'] });
    const ask = await openStream(svc, `/v1/tickets/${ticket.id}/ai/ask`, { question: 'Can they?' }, t.as);
    const raw = await ask.raw();
    expect(raw.startsWith('event: delta\ndata: Yes.\ndata: In settings.\n\n')).toBe(true);
    expect(raw).toContain(
      `event: done\ndata: ${JSON.stringify({ answer_html: '<p>Yes.<br />In settings.</p>', sources: [] })}\n\n`,
    );

    ai.answer({ text: '<p>Short.</p>', chunks: ['<p>Sho', 'rt.</p>'] });
    const rewrite = await openStream(svc, '/v1/ai/rewrite', { html: '<p>A long text.</p>', mode: 'shorter' }, t.as);
    expect(await rewrite.rest()).toEqual([
      { event: 'delta', data: '<p>Sho' },
      { event: 'delta', data: 'rt.</p>' },
      { event: 'done', data: JSON.stringify({ html: '<p>Short.</p>' }) },
    ]);
  });

  it('answers an error before the first byte as JSON, and one after it as an error event', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Hello?');
    ai.answer({ status: 500 });
    const before = await svc.api.req('POST', `/v1/tickets/${ticket.id}/ai/draft`, {
      ...t.as,
      body: {},
      headers: { accept: 'text/event-stream' },
    });
    expect(before.status).toBe(502);
    expect(before.headers.get('content-type')).toContain('application/json');
    expect(before.body).toMatchObject({ status: 502, code: 'ai_unavailable' });

    // The provider's stream breaks after its first piece.
    ai.answer({ cut: 1, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const stream = await openStream(svc, `/v1/tickets/${ticket.id}/ai/draft`, {}, t.as);
    expect(stream.status).toBe(200);
    const events = await stream.rest();
    expect(events[0]).toEqual({ event: 'delta', data: 'one ' });
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toMatchObject({ status: 502, code: 'ai_unavailable' });
    expect(events.some((e) => e.event === 'done')).toBe(false);
    expect((await usageOf(svc, t)).map((r) => r.outcome)).toEqual(['failed', 'failed']);
  });

  it('stops the provider call when the client goes away mid-stream, metered as cancelled', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Where is my parcel?');
    const g = gate();
    ai.answer({ gate: g, text: 'one two three four', chunks: ['one ', 'two ', 'three ', 'four'] });
    const stream = await openStream(svc, `/v1/tickets/${ticket.id}/ai/draft`, {}, t.as);
    expect(await stream.next()).toEqual({ event: 'delta', data: 'one ' });
    stream.abort();
    const req = await ai.request(0);
    await req.done;
    expect(req.closedEarly).toBe(true);
    await expect.poll(async () => (await usageOf(svc, t)).map((r) => r.outcome)).toEqual(['cancelled']);
    g.release();
  });
});

describe('a shutdown while streaming', () => {
  it('aborts the call, ends the stream with a 503 error event and meters the call as cancelled', async () => {
    const ai = await startOpenAiStandIn({ keys: ['sk-shutdown-0000'] });
    const svc = await startService(
      {
        AI_PROVIDER: 'openai',
        AI_BASE_URL: ai.url,
        AI_API_KEY: 'sk-shutdown-0000',
        AI_MODEL: 'gpt-4.1',
        AI_FAST_MODEL: 'gpt-4.1-mini',
      },
      { jobs: false, ai: { timeoutMs: 5000, maxRetries: 0 } },
      { restartable: true },
    );
    try {
      const t = await newTenant(svc.api);
      const ticket = await customerTicket(svc, t, 'Where is my parcel?');
      const g = gate();
      ai.answer({ gate: g, text: 'one two three', chunks: ['one ', 'two ', 'three'] });
      const stream = await openStream(svc, `/v1/tickets/${ticket.id}/ai/draft`, {}, t.as);
      expect(await stream.next()).toEqual({ event: 'delta', data: 'one ' });
      const stopping = svc.stop();
      const last = (await stream.rest()).at(-1)!;
      expect(last.event).toBe('error');
      expect(JSON.parse(last.data)).toMatchObject({ status: 503, code: 'unavailable' });
      await stopping;
      const req = await ai.request(0);
      await req.done;
      expect(req.closedEarly).toBe(true);
      g.release();
      // Metered before the service stopped: read it once it is back.
      await svc.restart();
      const usage = await svc.rt.deps.database.db
        .selectFrom('ai_usage')
        .select('outcome')
        .where('workspace_id', '=', t.workspaceId)
        .execute();
      expect(usage.map((u) => u.outcome)).toEqual(['cancelled']);
    } finally {
      await svc.stop();
      await ai.stop();
    }
  });
});
