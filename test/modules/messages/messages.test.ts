// Messages: replies and notes on tickets, sanitized HTML with derived text (real XSS vectors
// over HTTP), the ticket's statistics and status in the same step, delivery status on email
// tickets, event visibility (public only for replies on chat tickets), a 1,000-message
// conversation read whole, and /v1/messages/{id}/original.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTicket, uniqueEmail } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const api = () => svc.api;
const ticket = (t: Tenant, body: Record<string, unknown> = {}) =>
  makeTicket(api(), t, { subject: 'Cannot log in', contact: { email: uniqueEmail(), name: 'Cy' }, ...body });
const post = (t: Tenant, id: string, body: Record<string, unknown>) =>
  api().post(`/v1/tickets/${id}/messages`, body, t.as);

describe('replies and notes', () => {
  it('a reply updates the ticket in the same step, with status; events in order', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t);
    expect(tk.message_count).toBe(0);
    expect(tk.first_responded_at).toBeNull();
    const seq = await latestSeqOf(svc, t);
    const r = await post(t, tk.id, {
      kind: 'reply',
      body_html: '<p>Hi Cy,</p><p>Try <a href="https://example.com/reset">this link</a>.</p>',
      cc: ['boss@example.com'],
      status: 'pending',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      ticket_id: tk.id,
      kind: 'reply',
      direction: 'outbound',
      author: { type: 'user', contact: null },
      has_quoted: false,
      subject: 'Cannot log in',
      from_name: 'Olivia Owner',
      to: [tk.contact.email],
      cc: ['boss@example.com'],
      bcc: [],
      attachments: [],
      delivery_status: 'none',
      delivery_error: null,
      reply_to: null,
      auth_failed: false,
      form_sender: null,
    });
    expect(r.body.author.user.id).toBe(t.owner.userId);
    expect(r.body.body_text).toContain('Hi Cy,');
    expect(r.body.body_text).toContain('this link');
    expect(r.body.body_html).toContain('href="https://example.com/reset"');

    const after = (await api().get(`/v1/tickets/${tk.id}`, t.as)).body;
    expect(after).toMatchObject({ status: 'pending', message_count: 1 });
    expect(after.last_message_preview.startsWith('Hi Cy,')).toBe(true);
    expect(after.first_responded_at).toBe(r.body.created_at);
    expect(after.last_message_at).toBe(r.body.created_at);

    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['message.created', 'activity.created', 'ticket.updated']);
    expect(events[0].data).toEqual({ ticket_id: tk.id, message: r.body });
    expect(events[0].visibility).toBe('agents');
    expect(new Set(events[2].data.changes)).toEqual(
      new Set(['message_count', 'last_message_at', 'last_message_preview', 'first_responded_at', 'status']),
    );

    // A note afterwards: counted, but not a first response, and it takes no recipients.
    const note = await post(t, String(tk.number), { kind: 'note', body_html: 'Internal: check <b>SSO</b>' });
    expect(note.status, note.text).toBe(201);
    expect(note.body.to).toEqual([]);
    const bad = await post(t, tk.id, { kind: 'note', body_html: 'x', cc: ['a@example.com'] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('body.cc');
    const list = await api().get(`/v1/tickets/${tk.id}/messages`, t.as);
    expect(list.body.data.map((m: any) => m.kind)).toEqual(['reply', 'note']);
    expect(list.body.data[0]).toEqual(r.body);
  });

  it('a reply on an email ticket is pending delivery; an API key writes as api', async () => {
    const t = await newTenant(api());
    const key = await newApiKey(api(), t, ['tickets:write']);
    const tk = await ticket(t, { channel: 'email' });
    const r = await api().post(
      `/v1/tickets/${tk.id}/messages`,
      { kind: 'reply', body_html: 'On its way' },
      { token: key.key },
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.delivery_status).toBe('pending');
    expect(r.body.author).toEqual({ type: 'api', user: null, contact: null });
    const note = await post(t, tk.id, { kind: 'note', body_html: 'not sent' });
    expect(note.body.delivery_status).toBe('none');
  });

  it('a reply on a chat ticket is public, on the contact topic; notes stay with agents', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t);
    await sql`UPDATE tickets SET channel = 'chat' WHERE id = ${tk.id}`.execute(svc.rt.deps.database.db);
    const seq = await latestSeqOf(svc, t);
    await post(t, tk.id, { kind: 'reply', body_html: 'Hello there' });
    await post(t, tk.id, { kind: 'note', body_html: 'Customer is grumpy' });
    const created = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.created');
    expect(created.map((e) => e.visibility)).toEqual(['public', 'agents']);
    expect(created[0].topics).toContain(`contact:${t.workspaceId}:${tk.contact.id}`);
    expect(created[1].topics).toEqual([`workspace:${t.workspaceId}`]);
  });

  it('a refused message leaves nothing behind', async () => {
    const t = await newTenant(api());
    const viewer = await addMember(svc, t, 'viewer');
    const tk = await ticket(t);
    const r = await post(t, tk.id, { kind: 'reply', body_html: 'x', status: 'done' });
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('body.status');
    expect((await post(t, tk.id, { kind: 'reply', body_html: 'x' })).status).toBe(201);
    const forbidden = await api().post(`/v1/tickets/${tk.id}/messages`, { kind: 'note', body_html: 'x' }, viewer.as);
    expect(forbidden.status).toBe(403);
    expect((await api().get(`/v1/tickets/${tk.id}/messages`, viewer.as)).body.data).toHaveLength(1);
    const unknown = await post(t, tk.id, { kind: 'reply', body_html: 'x', attachment_ids: [randomUUID()] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].location).toBe('body.attachment_ids');
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body.message_count).toBe(1);
    expect((await post(t, randomUUID(), { kind: 'reply', body_html: 'x' })).status).toBe(404);
  });
});

// Real XSS vectors (OWASP filter evasion cheat sheet, html5sec, mXSS write-ups).
const VECTORS = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<style>@import "https://evil.example/x.css";</style>',
  '<p style="background:url(javascript:alert(1))">x</p>',
  '<p style="width: expression(alert(1))">x</p>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<base href="https://evil.example/">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<form action="javascript:alert(1)"><input type=submit></form>',
  '<input onfocus=alert(1) autofocus>',
  '<details open ontoggle=alert(1)>',
  '<body onload=alert(1)>',
  '<marquee onstart=alert(1)>x</marquee>',
  '<div onclick="alert(1)">x</div>',
  '<!--<img src=--><img src=x onerror=alert(1)//-->',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<img src="x` `<script>alert(1)</script>"` `>',
  '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>',
  '<isindex type=image src=1 onerror=alert(1)>',
  '<img src=x:alert(alt) onerror=eval(src) alt=0>',
  '"><script>alert(1)</script>',
];

describe('sanitized on the way in', () => {
  it('stores none of the XSS vectors executable, and the derived text has no markup', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t);
    for (const v of VECTORS) {
      const r = await post(t, tk.id, { kind: 'note', body_html: `<p>before</p>${v}<p>after</p>` });
      expect(r.status, v).toBe(201);
      const html: string = r.body.body_html;
      expect(html, v).not.toMatch(/<\s*(script|svg|iframe|object|embed|style|base|meta|form|input|math|noscript)/i);
      expect(html, v).not.toMatch(/\son[a-z]+\s*=/i);
      expect(html.toLowerCase(), v).not.toMatch(/(javascript|vbscript|data:text)/);
      expect(html, v).not.toMatch(/expression\(|url\(/i);
      expect(r.body.body_text, v).not.toMatch(/<[a-z]/i);
    }
    // What was stored is what GET returns.
    const stored = (await api().get(`/v1/tickets/${tk.id}/messages`, t.as)).body.data;
    expect(stored).toHaveLength(VECTORS.length);
    expect(stored.every((m: any) => !/onerror|<script/i.test(m.body_html))).toBe(true);
  });
});

describe('long conversations and originals', () => {
  it('returns a 1,000-message conversation whole, in order', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t);
    await sql`
      INSERT INTO messages (workspace_id, id, ticket_id, kind, direction, author_type, body_html, body_text, created_at)
      SELECT ${t.workspaceId}, gen_random_uuid(), ${tk.id}, 'reply', 'inbound', 'contact',
             '<p>message ' || i || '</p>', 'message ' || i, now() + i * interval '1 millisecond'
        FROM generate_series(1, 1000) AS i`.execute(svc.rt.deps.database.db);
    const r = await api().get(`/v1/tickets/${tk.id}/messages`, t.as);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1000);
    expect(r.body.data[0].body_text).toBe('message 1');
    expect(r.body.data[999].body_text).toBe('message 1000');
  });

  it('original: the whole email for trimmed messages, the body otherwise; 404 across workspaces', async () => {
    const t = await newTenant(api());
    const other = await newTenant(api());
    const tk = await ticket(t);
    const m = (await post(t, tk.id, { kind: 'reply', body_html: '<p>Thanks!</p>' })).body;
    const plain = await api().get(`/v1/messages/${m.id}/original`, t.as);
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({
      id: m.id,
      ticket_id: tk.id,
      body_html: m.body_html,
      body_text: m.body_text,
      has_quoted: false,
    });
    await sql`UPDATE messages SET has_quoted = true, original_html = '<p>Thanks!</p><blockquote>old</blockquote>',
              original_text = 'Thanks! > old' WHERE id = ${m.id}`.execute(svc.rt.deps.database.db);
    const full = await api().get(`/v1/messages/${m.id}/original`, t.as);
    expect(full.body).toMatchObject({ has_quoted: true, body_text: 'Thanks! > old' });
    expect((await api().get(`/v1/messages/${m.id}/original`, other.as)).status).toBe(404);
    expect((await api().get(`/v1/messages/${randomUUID()}/original`, t.as)).status).toBe(404);
  });
});

describe('attachments on messages', () => {
  it('a reply carries uploaded files (in the given order); an upload serves one message only', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t);
    const upload = async (name: string, bytes: string) => {
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: 'text/plain' }), name);
      const r = await fetch(`${svc.url}/v1/attachments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.owner.token}`, 'svc-workspace': t.workspaceId },
        body: form,
      });
      expect(r.status).toBe(201);
      return (await r.json()) as any;
    };
    const a = await upload('notes.txt', 'first file');
    const b = await upload('log.txt', 'second file');
    const r = await post(t, tk.id, { kind: 'reply', body_html: '<p>See attached</p>', attachment_ids: [b.id, a.id] });
    expect(r.status, r.text).toBe(201);
    expect(r.body.attachments.map((x: any) => [x.id, x.filename, x.size_bytes])).toEqual([
      [b.id, 'log.txt', 11],
      [a.id, 'notes.txt', 10],
    ]);
    const listed = (await api().get(`/v1/tickets/${tk.id}/messages`, t.as)).body.data[0].attachments;
    expect(listed.map((x: any) => x.id).sort()).toEqual([a.id, b.id].sort());
    // The url is absolute on PUBLIC_URL; the test service listens on its own port.
    const { pathname, search } = new URL(listed.find((x: any) => x.id === a.id).url);
    const bytes = await fetch(`${svc.url}${pathname}${search}`);
    expect(await bytes.text()).toBe('first file');
    // A body of only attachments is fine; reusing an attached upload is not.
    const again = await post(t, tk.id, { kind: 'note', body_html: '<p>again</p>', attachment_ids: [a.id] });
    expect(again.status).toBe(422);
    expect(again.body.errors[0].location).toBe('body.attachment_ids');
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body.message_count).toBe(1);
  });
});
