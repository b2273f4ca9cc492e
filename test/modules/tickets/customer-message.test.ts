// A customer's message through its one write (src/modules/tickets/customer-message.ts,
// writeCustomerMessage): a chat widget's message, a portal message and an email each make a
// ticket and a message from the contact; a customer's message reopens a solved ticket with a
// status_changed activity whose actor is the system with the contact's id (the contract's actor
// types, docs/decisions.md "Who a customer's message names as its actor"); a closed ticket gets a
// follow-up; the workflow hooks see the visitor or the customer acting; mail failing sender checks
// names no contact.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processInbound } from '../../../src/modules/email/inbound.js';
import { ingestRaw } from '../../../src/modules/email/ingest.js';
import { openPortalTicket, replyToRequest } from '../../../src/modules/portal/service.js';
import type { PortalSession } from '../../../src/modules/portal/session.js';
import { TicketHooks } from '../../../src/modules/tickets/hooks.js';
import type { Actor } from '../../../src/platform/http/context.js';
import { makeTicket, uniqueEmail } from '../../support/builders.js';
import {
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';

const AUTHSERV = 'mx.acme.test';

let svc: Service;
let t: Tenant;
let mailbox: { id: string; email: string };
/** What the workflow hooks saw: the trigger, the ticket and who acted. */
const seen: Array<{ trigger: string; ticketId: string; actor: Actor }> = [];

beforeAll(async () => {
  svc = await startService({ INBOUND_AUTHSERV_IDS: AUTHSERV }, { jobs: false });
  const hooks = svc.rt.deps.ticketHooks;
  if (!(hooks instanceof TicketHooks)) throw new Error('the runtime has its own hook runner');
  hooks.add({
    name: 'test-who-acted',
    order: 99,
    run: async (_deps, _u, change) => {
      seen.push({ trigger: change.trigger, ticketId: change.ticket.id, actor: change.ctx.actor });
      return false;
    },
  });
  t = await newTenant(svc.api, 'Acme');
  const mb = await svc.api.post('/v1/mailboxes', { name: 'Support', email: uniqueEmail('support') }, t.as);
  expect(mb.status, mb.text).toBe(201);
  mailbox = mb.body;
});
afterAll(async () => svc?.stop());

const api = () => svc.api;
const ticketOf = async (id: string) => (await api().get(`/v1/tickets/${id}`, t.as)).body;
const messagesOf = async (id: string) => (await api().get(`/v1/tickets/${id}/messages`, t.as)).body.data as any[];
const activitiesOf = async (id: string) => (await api().get(`/v1/tickets/${id}/activities`, t.as)).body.data as any[];
const hooksOf = (ticketId: string, trigger: string) =>
  seen.filter((s) => s.ticketId === ticketId && s.trigger === trigger).map((s) => s.actor);

async function setStatus(id: string, status: string) {
  const r = await api().patch(`/v1/tickets/${id}`, { status }, t.as);
  expect(r.status, r.text).toBe(200);
}

/** The activity a customer's message on a solved ticket adds, and its activity.created event. */
async function expectReopenedBy(ticketId: string, contactId: string, since: number) {
  const actor = { type: 'system', user: null, api_key_id: null, automation_id: null, contact_id: contactId };
  expect((await ticketOf(ticketId)).status).toBe('open');
  expect((await activitiesOf(ticketId)).at(-1)).toMatchObject({
    type: 'status_changed',
    data: { from: 'solved', to: 'open' },
  });
  expect((await activitiesOf(ticketId)).at(-1).actor).toEqual(actor);
  const events = await eventsAfterOf(svc, t, since);
  const created = events.filter((e) => e.type === 'activity.created' && e.data.ticket_id === ticketId);
  expect(created.map((e) => e.data.activity.actor)).toEqual([actor]);
}

describe('a chat message', () => {
  async function visitor() {
    const key = (await api().get('/v1/workspace', t.as)).body.widget_key as string;
    const r = await api().post('/v1/widget/session', { key, name: 'Vic Visitor', email: uniqueEmail('vic') });
    expect(r.status, r.text).toBe(200);
    return { token: r.body.visitor_token as string, contactId: r.body.contact.id as string };
  }
  const as = (token: string) => ({ headers: { authorization: `Visitor ${token}` } });

  it('opens a chat ticket from the contact, the visitor acting; a message on a solved one reopens it', async () => {
    const v = await visitor();
    const conv = await api().post('/v1/widget/conversations', { body: 'My order is late' }, as(v.token));
    expect(conv.status, conv.text).toBe(201);
    const ticket = await ticketOf(conv.body.id);
    expect(ticket).toMatchObject({ channel: 'chat', status: 'open', mailbox_id: null });
    expect(ticket.contact.id).toBe(v.contactId);
    const [first] = await messagesOf(ticket.id);
    expect(first).toMatchObject({ direction: 'inbound', body_text: 'My order is late', to: [], cc: [] });
    expect(first.author).toMatchObject({ type: 'contact', contact: { id: v.contactId } });
    const visitorActor = expect.objectContaining({ kind: 'visitor', contactId: v.contactId });
    expect(hooksOf(ticket.id, 'ticket_created')).toEqual([visitorActor]);

    await setStatus(ticket.id, 'solved');
    const since = await latestSeqOf(svc, t);
    const sent = await api().post(
      `/v1/widget/conversations/${ticket.id}/messages`,
      { body: 'Still late' },
      as(v.token),
    );
    expect(sent.status, sent.text).toBe(201);
    await expectReopenedBy(ticket.id, v.contactId, since);
    expect(hooksOf(ticket.id, 'customer_replied')).toEqual([visitorActor]);
  });

  it('a handoff on a solved conversation reopens it, the visitor acting', async () => {
    const v = await visitor();
    const conv = (await api().post('/v1/widget/conversations', { body: 'Hello' }, as(v.token))).body;
    await setStatus(conv.id, 'solved');
    const since = await latestSeqOf(svc, t);
    const r = await api().post(`/v1/widget/conversations/${conv.id}/handoff`, undefined, as(v.token));
    expect(r.status, r.text).toBe(200);
    await expectReopenedBy(conv.id, v.contactId, since);
  });

  it('on a closed conversation starts a follow-up', async () => {
    const v = await visitor();
    const conv = (await api().post('/v1/widget/conversations', { body: 'Hello' }, as(v.token))).body;
    await setStatus(conv.id, 'closed');
    const sent = await api().post(`/v1/widget/conversations/${conv.id}/messages`, { body: 'Again' }, as(v.token));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.conversation_id).not.toBe(conv.id);
    const follow = await ticketOf(sent.body.conversation_id);
    expect(follow).toMatchObject({ channel: 'chat', status: 'open', custom: { follow_up_of: { id: conv.id } } });
    expect((await ticketOf(conv.id)).status).toBe('closed');
  });
});

describe('a portal message', () => {
  it('opens a portal ticket from the contact the form names, the customer acting; a reply reopens it', async () => {
    const email = uniqueEmail('pat');
    const deps = svc.rt.deps;
    const form = { name: 'Pat Portal', email, subject: 'Invoice', message: 'Where is my invoice?', files: [] };
    const opened = await openPortalTicket(deps, t.workspaceId, form);
    const ticket = await ticketOf(opened.ticketId);
    expect(ticket).toMatchObject({ channel: 'portal', status: 'open', subject: 'Invoice' });
    expect(ticket.contact.email).toBe(email);
    const contactId = ticket.contact.id as string;
    const [first] = await messagesOf(ticket.id);
    expect(first).toMatchObject({ direction: 'inbound', from_email: email, body_text: 'Where is my invoice?' });
    expect(first.author).toMatchObject({ type: 'contact', contact: { id: contactId } });
    expect(hooksOf(ticket.id, 'ticket_created')).toEqual([{ kind: 'customer', contactId }]);

    const session: PortalSession = {
      id: randomUUID(),
      workspaceId: t.workspaceId,
      contactId,
      contactEmail: email,
      contactName: 'Pat Portal',
      tokenHash: 'unused',
      expiresAt: new Date(Date.now() + 3_600_000),
    };
    await setStatus(ticket.id, 'solved');
    const since = await latestSeqOf(svc, t);
    const reply = await replyToRequest(deps, session, opened.number, { message: 'Still missing', files: [] });
    expect(reply).toEqual({ number: opened.number, followUp: false });
    await expectReopenedBy(ticket.id, contactId, since);
    expect(hooksOf(ticket.id, 'customer_replied')).toEqual([{ kind: 'customer', contactId }]);

    await setStatus(ticket.id, 'closed');
    const follow = await replyToRequest(deps, session, opened.number, { message: 'One more', files: [] });
    expect(follow?.followUp).toBe(true);
    expect(follow?.number).not.toBe(opened.number);
  });
});

describe('an email', () => {
  async function mailIn(from: string, subject: string, extra: string[] = []) {
    const messageId = `<${randomUUID()}@mail.example>`;
    const raw = [
      `From: ${from}`,
      `To: ${mailbox.email}`,
      `Subject: ${subject}`,
      `Message-ID: ${messageId}`,
      ...extra,
      'Date: Tue, 9 Jan 2024 10:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `About ${subject}.`,
    ].join('\r\n');
    const spooled = await ingestRaw(svc.rt.deps, {
      raw: Buffer.from(raw),
      recipient: mailbox.email,
      mailboxId: mailbox.id,
      workspaceId: t.workspaceId,
      source: 'http',
    });
    // This service runs no jobs: the mail is processed here (or by another service's worker).
    await processInbound(svc.rt.deps, spooled.id);
    const row = () =>
      svc.rt.deps.database.db
        .selectFrom('inbound_emails')
        .select(['status', 'ticket_id', 'result_message_id'])
        .where('id', '=', spooled.id)
        .executeTakeFirstOrThrow();
    await expect.poll(async () => (await row()).status, { timeout: 10_000 }).toBe('processed');
    return { ...(await row()), messageId };
  }

  it('opens an email ticket from the sender, the customer acting; a reply on a solved one reopens it', async () => {
    const email = uniqueEmail('jane');
    const first = await mailIn(`Jane Customer <${email}>`, 'Printer jam');
    const ticket = await ticketOf(first.ticket_id!);
    expect(ticket).toMatchObject({ channel: 'email', status: 'open', mailbox_id: mailbox.id });
    const contactId = ticket.contact.id as string;
    expect(ticket.contact.email).toBe(email);
    const [m] = await messagesOf(ticket.id);
    expect(m).toMatchObject({ direction: 'inbound', from_email: email, to: [mailbox.email] });
    expect(m.author).toMatchObject({ type: 'contact', contact: { id: contactId } });
    expect(hooksOf(ticket.id, 'ticket_created')).toEqual([{ kind: 'customer', contactId }]);

    await setStatus(ticket.id, 'solved');
    const since = await latestSeqOf(svc, t);
    const reply = await mailIn(`Jane Customer <${email}>`, 'Re: Printer jam', [`In-Reply-To: ${first.messageId}`]);
    expect(reply.ticket_id).toBe(ticket.id);
    await expectReopenedBy(ticket.id, contactId, since);
    expect(hooksOf(ticket.id, 'customer_replied')).toEqual([{ kind: 'customer', contactId }]);
  });

  it('failing sender checks, names no contact: the activity and the hooks say the system', async () => {
    const email = uniqueEmail('mallory');
    const first = await mailIn(`Mallory <${email}>`, 'Refund');
    await setStatus(first.ticket_id!, 'pending');
    const failing = `Authentication-Results: ${AUTHSERV}; spf=fail smtp.mailfrom=example.com; dmarc=fail header.from=example.com`;
    const forged = await mailIn(`Mallory <${email}>`, 'Re: Refund', [`In-Reply-To: ${first.messageId}`, failing]);
    expect(forged.ticket_id).toBe(first.ticket_id);
    expect((await ticketOf(first.ticket_id!)).status).toBe('pending');
    const last = (await activitiesOf(first.ticket_id!)).at(-1);
    expect(last).toMatchObject({
      type: 'status_changed',
      data: { from: 'pending', to: 'pending', reason: 'sender_unverified', message_id: forged.result_message_id },
    });
    expect(last.actor).toEqual({ type: 'system', user: null, api_key_id: null, automation_id: null });
    expect(hooksOf(first.ticket_id!, 'customer_replied')).toEqual([]);
  });
});

describe('a rating', () => {
  it('is recorded as the rating customer (system, with their contact), like their messages', async () => {
    const email = uniqueEmail('rater');
    const made = await makeTicket(api(), t, { subject: 'Rate me', contact: { email } });
    await setStatus(made.id, 'solved');
    const { token } = await svc.rt.deps.tokens.sign({ purpose: 'csat', sub: made.id, wid: t.workspaceId });
    const r = await api().post(`/v1/csat/${token}`, { score: 5 });
    expect(r.status, r.text).toBe(200);
    const rated = (await activitiesOf(made.id)).find((a) => a.type === 'csat_received');
    expect(rated?.actor).toEqual({
      type: 'system',
      user: null,
      api_key_id: null,
      automation_id: null,
      contact_id: made.contact.id,
    });
  });
});
