// The AI feature routes refuse bad input before anything is called or charged: another
// workspace's ticket (404), instructions over 2,000 or a tone over 200 characters, an unknown
// rewrite mode or BCP 47 tag, an empty html (422 with the location), a viewer asking for a draft
// (403), an API key without the scopes; and a service without a provider answers 404 ai_disabled
// after access and body checks (the order: access, body, AI, ticket).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  type Res,
  type Service,
  startService,
} from '../../support/helpers.js';
import { customerTicket, featuresSuite, usageOf } from './features-setup.js';

const expectError = (r: Res, status: number, code: string, location?: string) => {
  expect(isErrorBody(r.body, status, code), r.text).toBe(true);
  if (location) expect(r.body.errors.map((e: any) => e.location)).toContain(location);
};

describe('bad input', () => {
  const s = featuresSuite('openai');

  it('answers 404 for another workspace’s ticket on every ticket route, calling nothing', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const theirs = await customerTicket(svc, other, 'Their secret ticket');
    await svc.api.patch(`/v1/tickets/${theirs.id}`, { status: 'solved' }, other.as);
    for (const [path, body] of [
      [`/v1/tickets/${theirs.id}/ai/draft`, {}],
      [`/v1/tickets/${theirs.id}/ai/summary`, undefined],
      [`/v1/tickets/${theirs.id}/ai/ask`, { question: 'What?' }],
      ['/v1/kb/articles/ai/draft', { ticket_id: theirs.id }],
      [`/v1/tickets/999999/ai/draft`, {}],
    ] as const) {
      expectError(await svc.api.post(path, body, t.as), 404, 'not_found');
    }
    expect(ai.requests).toHaveLength(0);
    expect(await usageOf(svc, t)).toEqual([]);
  });

  it('refuses over-long instructions and tone, unknown modes and tags, empty html, with locations', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Hello');
    const draft = (body: unknown) => svc.api.post(`/v1/tickets/${ticket.id}/ai/draft`, body, t.as);
    expectError(await draft({ instructions: 'x'.repeat(2001) }), 422, 'validation_failed', 'body.instructions');
    expectError(await draft({ tone: 'y'.repeat(201) }), 422, 'validation_failed', 'body.tone');
    expectError(await draft({ tone: 'friendly', extra: 1 }), 422, 'validation_failed', 'body.extra');
    const ask = (body: unknown) => svc.api.post(`/v1/tickets/${ticket.id}/ai/ask`, body, t.as);
    expectError(await ask({ question: '' }), 422, 'validation_failed', 'body.question');
    expectError(await ask({ question: 'q'.repeat(2001) }), 422, 'validation_failed', 'body.question');
    const rewrite = (body: unknown) => svc.api.post('/v1/ai/rewrite', body, t.as);
    expectError(await rewrite({ html: '<p>x</p>', mode: 'angrier' }), 422, 'validation_failed', 'body.mode');
    expectError(await rewrite({ html: '', mode: 'shorter' }), 422, 'validation_failed', 'body.html');
    expectError(
      await rewrite({ html: '<p> </p><script>x</script>', mode: 'shorter' }),
      422,
      'validation_failed',
      'body.html',
    );
    const translate = (body: unknown) => svc.api.post('/v1/ai/translate', body, t.as);
    expectError(await translate({ text: 'Hi', target: 'not a tag!' }), 422, 'validation_failed', 'body.target');
    expectError(await translate({ text: 'Hi', target: 'en_US' }), 422, 'validation_failed', 'body.target');
    expectError(await translate({ target: 'de' }), 422, 'validation_failed', 'body');
    expectError(await translate({ html: '', target: 'de' }), 422, 'validation_failed', 'body.html');
    expectError(await translate({ text: '   ', target: 'de' }), 422, 'validation_failed', 'body.text');
    const kb = (body: unknown) => svc.api.post('/v1/kb/articles/ai/draft', body, t.as);
    expectError(await kb({}), 422, 'validation_failed', 'body.ticket_id');
    expect(ai.requests).toHaveLength(0);
    expect(await usageOf(svc, t)).toEqual([]);
  });

  it('takes a draft with an empty object as its body (its fields are optional), not without a body', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Hello');
    const none = await svc.api.req('POST', `/v1/tickets/${ticket.id}/ai/draft`, t.as);
    expectError(none, 422, 'validation_failed', 'body');
    ai.answer({ text: 'Hi!' });
    const r = await svc.api.post(`/v1/tickets/${ticket.id}/ai/draft`, {}, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.body_text).toBe('Hi!');
  });

  it('lets viewers summarise and ask, not draft, rewrite, translate or draft articles; keys need scopes', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Hello');
    await svc.api.patch(`/v1/tickets/${ticket.id}`, { status: 'solved' }, t.as);
    const viewer = await addMember(svc, t, 'viewer');
    for (const [path, body] of [
      [`/v1/tickets/${ticket.id}/ai/draft`, {}],
      ['/v1/ai/rewrite', { html: '<p>x</p>', mode: 'shorter' }],
      ['/v1/ai/translate', { text: 'x', target: 'de' }],
      ['/v1/kb/articles/ai/draft', { ticket_id: ticket.id }],
    ] as const) {
      expectError(await svc.api.post(path, body, viewer.as), 403, 'forbidden');
    }
    const readKey = await newApiKey(svc.api, t, ['tickets:read']);
    expectError(await svc.api.post(`/v1/tickets/${ticket.id}/ai/draft`, {}, { token: readKey.key }), 403, 'forbidden');
    const kbKey = await newApiKey(svc.api, t, ['kb:write']);
    const kb = await svc.api.post('/v1/kb/articles/ai/draft', { ticket_id: ticket.id }, { token: kbKey.key });
    expectError(kb, 403, 'forbidden');
    expect(ai.requests).toHaveLength(0);

    ai.answer({ text: 'It is about a greeting.' });
    const asked = await svc.api.post(`/v1/tickets/${ticket.id}/ai/ask`, { question: 'What?' }, { token: readKey.key });
    expect(asked.status, asked.text).toBe(200);
    // A key's calls are metered to no member.
    expect((await usageOf(svc, t)).map((r) => [r.feature, r.user_id])).toEqual([['copilot', null]]);
  });

  it('answers 404 ai_disabled when AI is switched off in the workspace', async () => {
    const { svc, ai } = s;
    const t = await newTenant(svc.api);
    const ticket = await customerTicket(svc, t, 'Hello');
    expect((await svc.api.patch('/v1/ai/settings', { enabled: false }, t.as)).status).toBe(200);
    expectError(await svc.api.post(`/v1/tickets/${ticket.id}/ai/draft`, {}, t.as), 404, 'ai_disabled');
    expectError(await svc.api.post('/v1/ai/rewrite', { html: '<p>x</p>', mode: 'shorter' }, t.as), 404, 'ai_disabled');
    expect(ai.requests).toHaveLength(0);
  });
});

describe('without a provider', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  it('answers 404 ai_disabled on every feature route, after access and the body are checked', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const theirs = await customerTicket(svc, other, 'Theirs');
    const mine = await customerTicket(svc, t, 'Mine');
    const routes: Array<[string, unknown]> = [
      [`/v1/tickets/${mine.id}/ai/draft`, {}],
      [`/v1/tickets/${mine.id}/ai/summary`, undefined],
      [`/v1/tickets/${mine.id}/ai/ask`, { question: 'Why?' }],
      ['/v1/ai/rewrite', { html: '<p>x</p>', mode: 'simplify' }],
      ['/v1/ai/translate', { html: '<p>x</p>', target: 'fr' }],
      ['/v1/kb/articles/ai/draft', { ticket_id: mine.id }],
      // AI is looked at before the ticket: no hint whether another workspace's ticket exists.
      [`/v1/tickets/${theirs.id}/ai/draft`, {}],
    ];
    for (const [path, body] of routes) expectError(await svc.api.post(path, body, t.as), 404, 'ai_disabled');
    // Access first, then the body.
    const viewer = await addMember(svc, t, 'viewer');
    expectError(await svc.api.post(`/v1/tickets/${mine.id}/ai/draft`, {}, viewer.as), 403, 'forbidden');
    const bad = await svc.api.post('/v1/ai/rewrite', { html: '<p>x</p>', mode: 'nope' }, t.as);
    expectError(bad, 422, 'validation_failed', 'body.mode');
  });
});
