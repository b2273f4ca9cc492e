// The portal's customer area, a customer's requests (the contact form: portal.test.ts; the shared
// setup: setup.ts): their own tickets with public messages only, replies that reopen a solved
// ticket or follow a closed one, merged requests.
import { describe, expect, it } from 'vitest';
import { makeMessage, uniqueEmail } from '../../support/builders.js';
import { contactFields, csrfOf, get, messagesOf, portalSuite, postMultipart, ticketsOf } from './setup.js';

const suite = portalSuite();
const { newCenter, customer } = suite;

describe('the customer area', () => {
  it("shows public messages only, and another contact's ticket is a 404", async () => {
    const c = await newCenter();
    const me = await customer(c);
    const other = await customer(c, uniqueEmail('other'), 'Someone else’s request');
    await makeMessage(c.svc.api, c.t, me.ticket.id, {
      kind: 'note',
      body_html: '<p>Internal: VIP, refund quietly</p>',
    });
    const answer = await makeMessage(c.svc.api, c.t, me.ticket.id, {
      kind: 'reply',
      body_html: '<p>We fixed the invoice.</p>',
    });
    // The team's answer also goes to the customer by email (the email module's queue).
    expect(answer).toMatchObject({ delivery_status: 'pending', to: [me.email] });

    const page = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('We fixed the invoice.');
    expect(page.text).toContain('the invoice of March');
    expect(page.text).not.toContain('Internal: VIP');
    expect(page.text).not.toContain('Someone else');

    const theirs = await get(c, `${c.base}/requests/${other.ticket.number}`, me.cookie);
    expect(theirs.status).toBe(404);
    expect(theirs.text).not.toContain('Someone else');
    expect((await get(c, `${c.base}/requests/999999`, me.cookie)).status).toBe(404);
    const list = await get(c, `${c.base}/requests`, me.cookie);
    expect(list.text).not.toContain('Someone else');
    // Another workspace's cookie means nothing here.
    const elsewhere = await newCenter();
    expect((await get(elsewhere, `${elsewhere.base}/requests`, me.cookie)).text).toContain(
      '<label for="email">Email</label>',
    );
    // Signed out, a request's page sends to the sign-in form.
    const anon = await get(c, `${c.base}/requests/${me.ticket.number}`);
    expect(anon.status).toBe(303);
  });

  it('a reply reopens a solved ticket as the customer message; on a closed ticket it starts a follow-up', async () => {
    const c = await newCenter();
    const me = await customer(c);
    expect((await c.svc.api.patch(`/v1/tickets/${me.ticket.id}`, { status: 'solved' }, c.t.as)).status).toBe(200);
    const page = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(page.text).toContain('Solved');
    const r = await postMultipart(
      c,
      `${c.base}/requests/${me.ticket.number}`,
      { csrf: csrfOf(page.text), message: 'Still wrong, sorry!' },
      [{ name: 'invoice.txt', data: 'INVOICE 42', type: 'text/plain' }],
      { cookie: me.cookie },
    );
    expect(r.status, r.text).toBe(303);
    expect(r.location).toBe(`${c.base}/requests/${me.ticket.number}?sent`);
    const after = (await c.svc.api.get(`/v1/tickets/${me.ticket.id}`, c.t.as)).body;
    expect(after.status).toBe('open');
    const last = (await messagesOf(c, me.ticket.id)).at(-1);
    expect(last).toMatchObject({ kind: 'reply', direction: 'inbound', body_text: 'Still wrong, sorry!' });
    expect(last.author.type).toBe('contact');
    expect(last.author.contact.email).toBe(me.email);
    expect(last.attachments.map((a: any) => a.filename)).toEqual(['invoice.txt']);
    const acts = (await c.svc.api.get(`/v1/tickets/${me.ticket.id}/activities`, c.t.as)).body.data as any[];
    expect(acts.filter((a) => a.type === 'status_changed').at(-1).data).toEqual({ from: 'solved', to: 'open' });
    const shown = await get(c, r.location!, me.cookie);
    expect(shown.text).toContain('Your reply was sent.');
    expect(shown.text).toContain('Still wrong, sorry!');
    expect(shown.text).toContain('invoice.txt');

    // Closed: the reply becomes a new ticket that follows it.
    expect((await c.svc.api.patch(`/v1/tickets/${me.ticket.id}`, { status: 'closed' }, c.t.as)).status).toBe(200);
    const closed = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(closed.text).toContain('A reply starts a new request');
    const follow = await postMultipart(
      c,
      `${c.base}/requests/${me.ticket.number}`,
      { csrf: csrfOf(closed.text), message: 'One more thing' },
      [],
      { cookie: me.cookie },
    );
    expect(follow.status).toBe(303);
    const next = (await ticketsOf(c)).find((t) => t.id !== me.ticket.id)!;
    expect(next).toMatchObject({ channel: 'portal', status: 'open', subject: me.ticket.subject });
    expect(next.custom.follow_up_of).toEqual({ id: me.ticket.id, number: me.ticket.number });
    // The agents' side: the closed ticket's follow-ups, listed by the API (the app's ticket page).
    const follows = await c.svc.api.get(`/v1/tickets?follow_up_of=${me.ticket.id}&status=open,closed`, c.t.as);
    expect(follows.status, follows.text).toBe(200);
    expect(follows.body.data.map((t: any) => t.id)).toEqual([next.id]);
    const none = await c.svc.api.get(`/v1/tickets?follow_up_of=${next.id}`, c.t.as);
    expect(none.body.data).toEqual([]);
    const bad = await c.svc.api.get('/v1/tickets?follow_up_of=42', c.t.as);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('query.follow_up_of');
    expect(follow.location).toBe(`${c.base}/requests/${next.number}?follows=${me.ticket.number}`);
    const nextPage = await get(c, follow.location!, me.cookie);
    expect(nextPage.text).toContain(`Request #${me.ticket.number} is closed, so your reply started this new request.`);
    expect(nextPage.text).toContain(`href="${c.base}/requests/${me.ticket.number}"`);
    expect((await c.svc.api.get(`/v1/tickets/${me.ticket.id}`, c.t.as)).body.status).toBe('closed');
  });

  it('a request merged into another of theirs goes on there; merged into someone else’s, it says so and takes no reply', async () => {
    const c = await newCenter();
    const me = await customer(c, uniqueEmail('merge'), 'Printer jams');
    const second = await postMultipart(
      c,
      `${c.base}/new`,
      contactFields(c, { email: me.email, subject: 'Printer jams again' }),
    );
    expect(second.status).toBe(303);
    const other = (await ticketsOf(c)).find((t) => t.subject === 'Printer jams again')!;
    const merged = await c.svc.api.post(`/v1/tickets/${me.ticket.id}/merge`, { into_id: other.id }, c.t.as);
    expect(merged.status, merged.text).toBe(200);

    // The list shows the surviving request only; the merged one's address leads to it.
    const list = await get(c, `${c.base}/requests`, me.cookie);
    expect(list.text).toContain(`href="${c.base}/requests/${other.number}"`);
    expect(list.text).not.toContain(`href="${c.base}/requests/${me.ticket.number}"`);
    const old = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(old.status).toBe(303);
    expect(old.location).toBe(`${c.base}/requests/${other.number}`);
    const survivor = await get(c, old.location!, me.cookie);
    expect(survivor.text).toContain('Printer jams'); // the first request's message moved here

    // A reply sent from a page opened before the merge lands in the surviving request.
    const r = await postMultipart(
      c,
      `${c.base}/requests/${me.ticket.number}`,
      { csrf: csrfOf(survivor.text), message: 'Any news?' },
      [],
      { cookie: me.cookie },
    );
    expect(r.status, r.text).toBe(303);
    expect(r.location).toBe(`${c.base}/requests/${other.number}?sent`);
    expect((await messagesOf(c, other.id)).at(-1)).toMatchObject({ body_text: 'Any news?' });
    expect(await messagesOf(c, me.ticket.id)).toHaveLength(0);

    // Merged into another customer's ticket: nothing of it shows, and a reply is not taken.
    const them = await customer(c, uniqueEmail('them'), 'Their own problem');
    const mine2 = await postMultipart(
      c,
      `${c.base}/new`,
      contactFields(c, { email: me.email, subject: 'Toner empty' }),
    );
    expect(mine2.status).toBe(303);
    const toner = (await ticketsOf(c)).find((t) => t.subject === 'Toner empty')!;
    expect((await c.svc.api.post(`/v1/tickets/${toner.id}/merge`, { into_id: them.ticket.id }, c.t.as)).status).toBe(
      200,
    );
    const gone = await get(c, `${c.base}/requests/${toner.number}`, me.cookie);
    expect(gone.status).toBe(200);
    expect(gone.text).toContain('was merged into another conversation');
    expect(gone.text).not.toContain('Their own problem');
    expect(gone.text).not.toContain('Send reply'); // no reply form
    expect(gone.text).not.toContain('name="message"');
    const before = (await messagesOf(c, them.ticket.id)).length;
    const refused = await postMultipart(
      c,
      `${c.base}/requests/${toner.number}`,
      { csrf: csrfOf(survivor.text), message: 'Hello?' },
      [],
      { cookie: me.cookie },
    );
    expect(refused.status).toBe(404);
    expect(await messagesOf(c, them.ticket.id)).toHaveLength(before);
  });
});
