// The chat widget's HTTP routes, part 2 (part 1: widget.test.ts, shared setup in setup.ts):
// conversations and messages, attachments, limits, new and idle visitors, article suggestions,
// onboarding.
import { beforeAll, describe, expect, it } from 'vitest';
import { pruneIdleVisitors } from '../../../src/modules/widget/visitors.js';
import { type Api, isErrorBody, type Service } from '../../support/helpers.js';
import { as, SITE, widgetSuite } from './setup.js';

const suite = widgetSuite();
const { site, session, converse, settings, upload } = suite;
let svc: Service;
let api: Api;
beforeAll(() => {
  ({ svc, api } = suite);
});

describe('conversations and messages', () => {
  it("are the visitor's own chat tickets with their public messages: never notes, agents' emails or internal fields", async () => {
    const s = await site();
    const v = await session(s.key, { name: 'Vic', email: 'vic@example.com' });
    const first = await converse(v.visitor_token, 'Where is my parcel?');
    expect(first).toEqual({
      id: expect.any(String),
      number: expect.any(Number),
      subject: 'Where is my parcel?',
      status: 'open',
      created_at: expect.any(String),
      last_message_at: expect.any(String),
      csat_url: null, // an open conversation has nothing to rate
    });
    const second = await converse(v.visitor_token, 'Another question');
    const list = await api.get('/v1/widget/conversations', as(v.visitor_token));
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([second.id, first.id]);
    expect(list.body.next_cursor).toBeNull();
    const page = await api.get('/v1/widget/conversations?limit=1', as(v.visitor_token));
    expect(page.body.data).toHaveLength(1);
    const next = await api.get(`/v1/widget/conversations?limit=1&cursor=${page.body.next_cursor}`, as(v.visitor_token));
    expect(next.body.data[0].id).toBe(first.id);

    // The agents see a chat ticket of the visitor's contact.
    const ticket = await api.get(`/v1/tickets/${first.id}`, s.t.as);
    expect(ticket.body).toMatchObject({ channel: 'chat', status: 'open' });
    expect(ticket.body.contact.id).toBe(v.contact.id);

    await api.post(`/v1/tickets/${first.id}/messages`, { kind: 'note', body_html: '<p>secret note</p>' }, s.t.as);
    const reply = await api.post(
      `/v1/tickets/${first.id}/messages`,
      { kind: 'reply', body_html: '<p>On its way!</p>' },
      s.t.as,
    );
    expect(reply.status, reply.text).toBe(201);
    const msgs = await api.get(`/v1/widget/conversations/${first.id}/messages`, as(v.visitor_token));
    expect(msgs.status, msgs.text).toBe(200);
    expect(msgs.body.data.map((m: { body_text: string }) => m.body_text)).toEqual([
      'Where is my parcel?',
      'On its way!',
    ]);
    expect(msgs.text).not.toContain('secret note');
    expect(msgs.text).not.toContain(s.t.owner.email);
    const [mine, theirs] = msgs.body.data;
    expect(mine.author).toEqual({ type: 'contact', name: 'Vic', avatar_url: null });
    expect(theirs.author).toEqual({ type: 'agent', name: 'Olivia Owner', avatar_url: null });
    expect(Object.keys(theirs).sort()).toEqual(
      ['attachments', 'author', 'body_html', 'body_text', 'conversation_id', 'created_at', 'direction', 'id'].sort(),
    );

    const sent = await api.post(
      `/v1/widget/conversations/${first.id}/messages`,
      { body: 'Thanks!' },
      as(v.visitor_token),
    );
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body).toMatchObject({ conversation_id: first.id, direction: 'inbound', body_text: 'Thanks!' });
  });

  it("answers 404 for another visitor's conversation, an email ticket of the same contact, and ids that are not ids", async () => {
    const s = await site();
    const alice = await session(s.key);
    const bob = await session(s.key);
    const hers = await converse(alice.visitor_token);
    for (const [method, path, body] of [
      ['GET', `/v1/widget/conversations/${hers.id}/messages`, undefined],
      ['POST', `/v1/widget/conversations/${hers.id}/messages`, { body: 'let me in' }],
      ['POST', `/v1/widget/conversations/${hers.id}/handoff`, undefined],
      ['GET', '/v1/widget/conversations/not-an-id/messages', undefined],
    ] as const) {
      const r = await api.req(method, path, { ...as(bob.visitor_token), ...(body ? { body } : {}) });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    expect((await api.get('/v1/widget/conversations', as(bob.visitor_token))).body.data).toEqual([]);
    // Another channel's ticket of the same contact is not a conversation.
    const email = await api.post(
      '/v1/tickets',
      { subject: 'By mail', contact_id: alice.contact.id, body_html: '<p>x</p>' },
      s.t.as,
    );
    expect(email.status, email.text).toBe(201);
    expect((await api.get(`/v1/widget/conversations/${email.body.id}/messages`, as(alice.visitor_token))).status).toBe(
      404,
    );
  });

  it('keeps HTML and script in visitor messages as text, escaped for the agents', async () => {
    const s = await site();
    const v = await session(s.key);
    const text = '<script>alert("x")</script><img src=x onerror=alert(1)> & <b>bold</b>';
    const conv = await converse(v.visitor_token, text);
    const agentView = await api.get(`/v1/tickets/${conv.id}/messages`, s.t.as);
    const m = agentView.body.data[0];
    expect(m.body_text).toBe(text);
    expect(m.body_html).not.toMatch(/<script|<img|<b>/i);
    expect(m.body_html).toContain('&lt;script&gt;');
    const visitorView = await api.get(`/v1/widget/conversations/${conv.id}/messages`, as(v.visitor_token));
    expect(visitorView.body.data[0].body_text).toBe(text);
    expect(visitorView.body.data[0].body_html).not.toMatch(/<script/i);
    expect((await api.post('/v1/widget/conversations', { body: '   ' }, as(v.visitor_token))).status).toBe(422);
    expect((await api.post('/v1/widget/conversations', { body: 'x'.repeat(10_001) }, as(v.visitor_token))).status).toBe(
      422,
    );
  });

  it('reopens a pending, on hold or solved conversation; a closed one gets a follow-up', async () => {
    const s = await site();
    const v = await session(s.key);
    const conv = await converse(v.visitor_token);
    for (const status of ['pending', 'on_hold', 'solved']) {
      expect((await api.patch(`/v1/tickets/${conv.id}`, { status }, s.t.as)).status).toBe(200);
      const r = await api.post(
        `/v1/widget/conversations/${conv.id}/messages`,
        { body: `again ${status}` },
        as(v.visitor_token),
      );
      expect(r.status, r.text).toBe(201);
      expect((await api.get(`/v1/tickets/${conv.id}`, s.t.as)).body.status, status).toBe('open');
    }
    expect((await api.patch(`/v1/tickets/${conv.id}`, { status: 'closed' }, s.t.as)).status).toBe(200);
    const r = await api.post(
      `/v1/widget/conversations/${conv.id}/messages`,
      { body: 'one more thing' },
      as(v.visitor_token),
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.conversation_id).not.toBe(conv.id);
    const follow = await api.get(`/v1/tickets/${r.body.conversation_id}`, s.t.as);
    expect(follow.body).toMatchObject({ channel: 'chat', status: 'open' });
    expect(follow.body.custom.follow_up_of.id).toBe(conv.id);
  });

  it('offers the rating link in a solved conversation when the workspace asks for ratings, and it rates the chat', async () => {
    const s = await site();
    const v = await session(s.key); // an anonymous visitor: no email for the solved mail to go to
    const conv = await converse(v.visitor_token);
    const listed = async () =>
      ((await api.get('/v1/widget/conversations', as(v.visitor_token))).body.data as any[]).find(
        (c) => c.id === conv.id,
      );
    expect((await listed()).csat_url).toBeNull();
    expect((await api.patch(`/v1/tickets/${conv.id}`, { status: 'solved' }, s.t.as)).status).toBe(200);
    expect((await listed()).csat_url).toBeNull(); // CSAT off: no link
    expect((await api.patch('/v1/workspace', { settings: { csat_enabled: true } }, s.t.as)).status).toBe(200);
    const url = (await listed()).csat_url as string;
    expect(url).toMatch(/\/csat\/[\w.-]+$/);
    const token = url.split('/csat/')[1]!;
    expect((await api.get(`/v1/csat/${token}`)).body).toMatchObject({ number: conv.number, score: null });
    expect((await api.post(`/v1/csat/${token}`, { score: 5, comment: 'Quick chat!' })).status).toBe(200);
    expect((await api.get(`/v1/tickets/${conv.id}`, s.t.as)).body.csat).toMatchObject({ score: 5 });
    // Open again, or solved more than 30 days ago: no link.
    expect(
      (await api.post(`/v1/widget/conversations/${conv.id}/messages`, { body: 'and one more' }, as(v.visitor_token)))
        .status,
    ).toBe(201);
    expect((await listed()).csat_url).toBeNull();
    expect((await api.patch(`/v1/tickets/${conv.id}`, { status: 'solved' }, s.t.as)).status).toBe(200);
    await svc.rt.deps.database.db
      .updateTable('tickets')
      .set({ solved_at: new Date(Date.now() - 31 * 86_400_000) })
      .where('id', '=', conv.id)
      .execute();
    expect((await listed()).csat_url).toBeNull();
  });

  it('asks for an email first when require_email is on', async () => {
    const s = await site();
    await settings(s, { require_email: true });
    const v = await session(s.key);
    const refused = await api.post('/v1/widget/conversations', { body: 'hi' }, as(v.visitor_token));
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].location).toBe('body.email');
    await session(s.key, { visitor_token: v.visitor_token, email: `v${Date.now()}@example.com` });
    await converse(v.visitor_token);
  });

  it('hands off to a person: the ticket records it and opens again', async () => {
    const s = await site();
    const v = await session(s.key);
    const conv = await converse(v.visitor_token);
    await api.patch(`/v1/tickets/${conv.id}`, { status: 'pending' }, s.t.as);
    const r = await api.post(`/v1/widget/conversations/${conv.id}/handoff`, undefined, as(v.visitor_token));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: conv.id, status: 'open' });
    const t = await api.get(`/v1/tickets/${conv.id}`, s.t.as);
    expect(typeof t.body.custom.handoff_requested_at).toBe('string');
  });

  it('replays a retried start with the same Idempotency-Key instead of opening two conversations', async () => {
    const s = await site();
    const v = await session(s.key);
    const o = as(v.visitor_token, { 'idempotency-key': 'start-1' });
    const a = await api.post('/v1/widget/conversations', { body: 'once' }, o);
    const b = await api.post('/v1/widget/conversations', { body: 'once' }, o);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('attachments', () => {
  it('go through the attachment pipeline; only their visitor can attach them; 30 MB is 413', async () => {
    const s = await site();
    const v = await session(s.key);
    const other = await session(s.key);
    const up = await upload(v.visitor_token, Buffer.from('%PDF-1.4\n%\xe2\xe3\n1 0 obj\n<<>>\nendobj\n'));
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect(up.body).toMatchObject({ filename: 'receipt.pdf', inline: false });
    const stolen = await api.post(
      '/v1/widget/conversations',
      { body: 'mine', attachment_ids: [up.body.id] },
      as(other.visitor_token),
    );
    expect(stolen.status).toBe(422);
    expect(stolen.body.errors[0].location).toBe('body.attachment_ids');
    const conv = await api.post(
      '/v1/widget/conversations',
      { body: 'see file', attachment_ids: [up.body.id] },
      as(v.visitor_token),
    );
    expect(conv.status, conv.text).toBe(201);
    const msgs = await api.get(`/v1/widget/conversations/${conv.body.id}/messages`, as(v.visitor_token));
    expect(msgs.body.data[0].attachments.map((a: { id: string }) => a.id)).toEqual([up.body.id]);
    const agent = await api.get(`/v1/tickets/${conv.body.id}/messages`, s.t.as);
    expect(agent.body.data[0].attachments[0].id).toBe(up.body.id);
    // Attached once: not again.
    const again = await api.post(
      '/v1/widget/conversations',
      { body: 'again', attachment_ids: [up.body.id] },
      as(v.visitor_token),
    );
    expect(again.status).toBe(422);

    const big = await upload(v.visitor_token, Buffer.alloc(30 * 1024 * 1024, 1), 'big.bin');
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('too_large');
  });
});

describe('limits', () => {
  it('refuses the 21st new conversation in an hour and the 61st message in a minute with 429 and Retry-After', async () => {
    const s = await site();
    const v = await session(s.key);
    let last: { id: string } | null = null;
    for (let i = 0; i < 20; i++) last = await converse(v.visitor_token, `question ${i}`);
    const over = await api.post('/v1/widget/conversations', { body: 'one too many' }, as(v.visitor_token));
    expect(over.status).toBe(429);
    expect(isErrorBody(over.body, 429, 'rate_limited')).toBe(true);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(60);

    // 20 messages counted with the conversations; 40 more make 60.
    for (let i = 0; i < 40; i++) {
      const r = await api.post(`/v1/widget/conversations/${last!.id}/messages`, { body: `m${i}` }, as(v.visitor_token));
      expect(r.status, r.text).toBe(201);
    }
    const tooMany = await api.post(
      `/v1/widget/conversations/${last!.id}/messages`,
      { body: 'm61' },
      as(v.visitor_token),
    );
    expect(tooMany.status).toBe(429);
    const retry = Number(tooMany.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    // Another visitor has limits of their own.
    await converse((await session(s.key)).visitor_token);
  });
});

describe('new visitors', () => {
  it('are bounded per address (429 with Retry-After) and make no contact until they write', async () => {
    const s = await site();
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const contacts = async () =>
      Number(
        (
          await svc.rt.deps.database.db
            .selectFrom('contacts')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('workspace_id', '=', s.t.workspaceId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    // WIDGET_SESSIONS_PER_IP: 60 new visitors in 10 minutes by default.
    const sessions = [];
    for (let i = 0; i < 60; i++) sessions.push(await session(s.key, { name: `Visitor ${i}` }, from('203.0.113.7')));
    expect(await contacts()).toBe(0);
    const over = await api.post('/v1/widget/session', { key: s.key }, { headers: from('203.0.113.7') });
    expect(over.status).toBe(429);
    expect(isErrorBody(over.body, 429, 'rate_limited')).toBe(true);
    const retry = Number(over.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(600);
    // A returning visitor from that address resumes; another address starts; nothing else was made.
    const first = sessions[0]!;
    const back = await session(s.key, { visitor_token: first.visitor_token }, from('203.0.113.7'));
    expect(back.contact.id).toBe(first.contact.id);
    await session(s.key, {}, from('198.51.100.20'));
    expect(await contacts()).toBe(0);

    // The first message makes the contact, with the id the session gave (the socket's topic).
    const conv = await converse(first.visitor_token, 'Hello from visitor 0');
    expect(await contacts()).toBe(1);
    const ticket = await api.get(`/v1/tickets/${conv.id}`, s.t.as);
    expect(ticket.body.contact_id ?? ticket.body.contact?.id).toBe(first.contact.id);
    expect((await api.get(`/v1/contacts/${first.contact.id}`, s.t.as)).body).toMatchObject({
      name: 'Visitor 0',
      email: null,
    });
    const again = await session(s.key, { visitor_token: first.visitor_token });
    expect(again.contact).toEqual({ id: first.contact.id, email: null, name: 'Visitor 0', avatar_url: null });
  });
});

describe('idle visitors', () => {
  it('who never wrote are forgotten after 30 days without a visit; those who wrote are kept', async () => {
    const s = await site();
    const silent = await session(s.key);
    const writer = await session(s.key);
    await converse(writer.visitor_token);
    const fresh = await session(s.key);
    await svc.rt.deps.database.db
      .updateTable('widget_visitors')
      .set({ last_seen_at: new Date(Date.now() - 31 * 86_400_000) })
      .where('workspace_id', '=', s.t.workspaceId)
      .where((eb) => eb('pending_contact_id', '=', silent.contact.id).or('contact_id', '=', writer.contact.id))
      .execute();
    expect(await pruneIdleVisitors(svc.rt.deps.database)).toBeGreaterThanOrEqual(1);
    expect((await api.get('/v1/widget/conversations', as(silent.visitor_token))).status).toBe(401);
    expect((await api.get('/v1/widget/conversations', as(writer.visitor_token))).body.data).toHaveLength(1);
    expect((await api.get('/v1/widget/conversations', as(fresh.visitor_token))).status).toBe(200);
  });
});

describe('article suggestions', () => {
  it('suggest only articles above the relevance bar, none when no article is close', async () => {
    const s = await site();
    expect((await api.patch('/v1/workspace', { settings: { help_center_enabled: true } }, s.t.as)).status).toBe(200);
    const collection = await api.post('/v1/kb/collections', { name: 'Help' }, s.t.as);
    const article = async (title: string, text: string) => {
      const r = await api.post(
        '/v1/kb/articles',
        { collection_id: collection.body.id, title, body_html: `<p>${text}</p>`, status: 'published' },
        s.t.as,
      );
      expect(r.status, r.text).toBe(201);
    };
    await article('Where is my order?', 'Orders usually arrive within five working days. Track your order online.');
    await article('How do I get a refund?', 'Refunds take five to ten working days after we receive the parcel.');
    await article('Changing your delivery address', 'You can change the delivery address until the order ships.');
    const v = await session(s.key);
    const titles = async (q: string) => {
      const r = await api.get(`/v1/widget/articles?q=${encodeURIComponent(q)}`, as(v.visitor_token));
      expect(r.status, r.text).toBe(200);
      return (r.body.data as Array<{ title: string }>).map((a) => a.title);
    };
    // A question no article answers: "working" in two texts is not enough.
    expect(await titles('Does the charger work on 110 V?')).toEqual([]);
    expect(await titles('How do I get a refund for order 1042?')).toEqual(['How do I get a refund?']);
    expect(await titles('I need to change the address for my delivery')).toEqual(['Changing your delivery address']);
    // One word that counts ("order"): the articles holding it, the one with it in its title first.
    expect(await titles('where is my order')).toEqual(['Where is my order?', 'Changing your delivery address']);

    await article('Using the charger abroad', 'The charger works on 110 V and 230 V outlets with an adapter.');
    expect(await titles('Does the charger work on 110 V?')).toEqual(['Using the charger abroad']);
  });
});

describe('onboarding', () => {
  it('marks install_widget done at the first widget session from a browser on an allowed origin', async () => {
    const s = await site();
    const done = async () =>
      ((await api.get('/v1/onboarding', s.t.as)).body.steps as Array<{ id: string; done: boolean }>).find(
        (x) => x.id === 'install_widget',
      )!.done;
    expect(await done()).toBe(false);
    await settings(s, { allowed_origins: [SITE] });
    await session(s.key); // a server: no Origin
    expect(
      (await api.post('/v1/widget/session', { key: s.key }, { headers: { origin: 'https://evil.example' } })).status,
    ).toBe(403);
    expect(await done()).toBe(false);
    await session(s.key, {}, { origin: SITE });
    expect(await done()).toBe(true);
  });
});
