// Outbound email against a real SMTP server in this process (smtp-server), what it received
// parsed back with mailparser: a reply on an email ticket arrives From the mailbox, To the
// contact, with cc/bcc, "Re: … [#token]", our Message-ID (stored on the message) and
// In-Reply-To / References repeating the customer's ids exactly as written, the signature and
// the attachments; pending → sent with message.updated; 550 and a failed login fail at once,
// 451 is retried, a server that is down is retried and then failed; CR/LF in subjects and
// names adds no header; the system mailer; a new email ticket's reply; notes stay home; a
// reply whose job was lost is sent by the sweep; auto-replies once per contact per day and
// never to automatic, list or no-reply mail.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import { makeTicket } from '../../support/builders.js';
import { eventsAfterOf, latestSeqOf, newTenant, type Service } from '../../support/helpers.js';
import { addressesOf, outboundSuite, SMTP_PASSWORD, SMTP_USER, type Smtp } from './outbound-setup.js';

const suite = outboundSuite();
const { api, mailbox, emailTicket, customerMail, reply, messageRow, settled, receivedFor, waitForMail } = suite;
let smtp: Smtp;
let svc: Service;
beforeAll(() => {
  ({ smtp, svc } = suite);
});

describe('replies on email tickets', () => {
  it('arrive From the mailbox, To the contact, with cc/bcc, subject, threading, signature and attachments', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id);
    await customerMail(t, tk, mb.id, 'CAFE.Beef-01@Mail.Customer.TEST', ['Root-1@Mail.Customer.TEST']);
    const form = new FormData();
    const pdf = Buffer.from('%PDF-1.4 pretend invoice\n');
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'invoice.pdf');
    const up = await fetch(`${svc.url}/v1/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.owner.token}`, 'svc-workspace': t.workspaceId },
      body: form,
    });
    const file = (await up.json()) as { id: string };
    expect(up.status).toBe(201);

    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, {
      body_html: '<p>We are sending <b>a technician</b>.</p>',
      cc: ['boss@customer.test'],
      bcc: ['audit@acme.test'],
      attachment_ids: [file.id],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.delivery_status).toBe('pending');

    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('sent');
    expect(row.delivery_error).toBeNull();
    expect(row.delivery_attempts).toBe(1);
    expect(row.mailbox_id).toBe(mb.id);
    expect(row.from_email).toBe(mb.email);

    const [got] = await waitForMail(tk.contact.email);
    const mail = got!.mail;
    expect(got!.rcpt.sort()).toEqual([tk.contact.email, 'audit@acme.test', 'boss@customer.test'].sort());
    expect(addressesOf(mail.from)).toEqual([{ name: 'Acme Support', address: mb.email }]);
    expect(addressesOf(mail.to)).toEqual([{ name: 'Casey Customer', address: tk.contact.email }]);
    expect(addressesOf(mail.cc)).toEqual([{ name: '', address: 'boss@customer.test' }]);
    expect(mail.bcc).toBeUndefined();
    expect(got!.raw).not.toMatch(/^bcc:/im);
    const token = ticketTokenFor(svc.rt.deps.config, t.workspaceId, tk.number);
    expect(mail.subject).toBe(`Re: Printer on fire [#${token}]`);
    // Our Message-ID is stored on the message (both forms), so the customer's answer threads back.
    expect(mail.messageId).toBe(`<${row.email_message_id_sent}>`);
    expect(row.email_message_id).toBe(row.email_message_id_sent!.toLowerCase());
    expect(mail.messageId).toMatch(new RegExp(`@${mb.email.split('@')[1]!.replace('.', '\\.')}>$`));
    // The customer's ids exactly as their client wrote them.
    expect(mail.inReplyTo).toBe('<CAFE.Beef-01@Mail.Customer.TEST>');
    expect(mail.references).toEqual(['<Root-1@Mail.Customer.TEST>', '<CAFE.Beef-01@Mail.Customer.TEST>']);
    expect(row.email_in_reply_to).toBe('CAFE.Beef-01@Mail.Customer.TEST');
    expect(row.email_references).toEqual(['Root-1@Mail.Customer.TEST', 'CAFE.Beef-01@Mail.Customer.TEST']);
    expect(mail.html).toContain('<b>a technician</b>');
    expect(mail.html).toContain('<b>The Acme team</b>');
    expect(mail.text).toMatch(/We are sending a technician\.[\s\S]*\n-- \nBest regards,\s*\nThe Acme team/);
    expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
      ['invoice.pdf', 'application/pdf', pdf.toString()],
    ]);
    // The mailbox's SMTP password, opened from its sealed column.
    expect(smtp.logins).toContainEqual({ username: SMTP_USER, password: SMTP_PASSWORD });

    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.ticket_id).toBe(tk.id);
    expect(updated[0].data.message).toMatchObject({ id: r.body.id, delivery_status: 'sent', delivery_error: null });
    expect(updated[0].visibility).toBe('agents');
    const listed = await api().get(`/v1/tickets/${tk.id}/messages`, t.as);
    expect(listed.body.data.find((m: any) => m.id === r.body.id).delivery_status).toBe('sent');
  });

  it('an agent-started thread: the first mail is not a reply, the next one answers it', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, { signature_html: '' });
    const tk = await emailTicket(t, mb.id);
    // No customer mail yet (an agent-started thread): the first mail is not a reply.
    const first = await reply(t, tk.id, { body_html: 'Hello, about your order' });
    const firstRow = await settled(t, first.body.id);
    expect(firstRow.delivery_status).toBe('sent');
    const [m1] = await waitForMail(tk.contact.email);
    const token = ticketTokenFor(svc.rt.deps.config, t.workspaceId, tk.number);
    expect(m1!.mail.subject).toBe(`Printer on fire [#${token}]`);
    expect(m1!.mail.inReplyTo).toBeUndefined();
    expect(m1!.mail.text).not.toContain('-- ');
    // Our second mail answers our first.
    const second = await reply(t, tk.id, { body_html: 'And one more thing' });
    await settled(t, second.body.id);
    const [, m2] = await waitForMail(tk.contact.email, 2);
    expect(m2!.mail.subject).toBe(`Re: Printer on fire [#${token}]`);
    expect(m2!.mail.inReplyTo).toBe(m1!.mail.messageId);
    expect(m2!.mail.references).toBe(m1!.mail.messageId);
  });

  it('creating an email ticket with a reply sends it; notes are never sent', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const email = `new-${randomUUID().slice(0, 8)}@customer.test`;
    const tk = await emailTicket(t, mb.id, {
      subject: 'Your quote',
      contact: { email, name: 'Nora New' },
      kind: 'reply',
      body_html: '<p>Here is the quote you asked for.</p>',
    });
    expect(tk.mailbox_id).toBe(mb.id);
    const msgs = (await api().get(`/v1/tickets/${tk.id}/messages`, t.as)).body.data;
    expect(msgs).toHaveLength(1);
    expect((await settled(t, msgs[0].id)).delivery_status).toBe('sent');
    const [got] = await waitForMail(email);
    expect(got!.mail.subject).toMatch(/^Your quote \[#\d+-[a-z2-7]{10}\]$/);
    expect(got!.mail.text).toContain('Here is the quote you asked for.');

    const note = await api().post(
      `/v1/tickets/${tk.id}/messages`,
      { kind: 'note', body_html: 'internal: customer is a reseller' },
      t.as,
    );
    expect(note.body.delivery_status).toBe('none');
    const after = await reply(t, tk.id, { body_html: 'Any questions?' });
    await settled(t, after.body.id);
    const all = await waitForMail(email, 2);
    expect(all).toHaveLength(2);
    expect(all.some((m) => m.raw.includes('reseller'))).toBe(false);
    expect((await messageRow(t, note.body.id)).delivery_status).toBe('none');

    // A note on a new email ticket is not sent either.
    const noteTicket = await emailTicket(t, mb.id, {
      contact: { email: `quiet-${randomUUID().slice(0, 8)}@customer.test` },
      kind: 'note',
      body_html: 'just a note',
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(receivedFor(noteTicket.contact.email)).toHaveLength(0);
  });

  it('sends through the system mailer for outbound_kind system', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, {
      outbound_kind: 'system',
      config: {},
      smtp_password: undefined,
      display_name: 'Acme Help',
    });
    const tk = await emailTicket(t, mb.id);
    const r = await reply(t, tk.id, { body_html: 'Via the system mailer' });
    expect((await settled(t, r.body.id)).delivery_status).toBe('sent');
    const [got] = await waitForMail(tk.contact.email);
    expect(addressesOf(got!.mail.from)).toEqual([{ name: 'Acme Help', address: mb.email }]);
    expect(got!.mail.text).toContain('Via the system mailer');
  });

  it('a workspace without any mailbox replies through the system mailer, From its sender', async () => {
    const t = await newTenant(api());
    const email = `nobox-${randomUUID().slice(0, 8)}@customer.test`;
    const tk = await makeTicket(api(), t, { channel: 'email', contact: { email, name: 'Nora' } });
    const r = await reply(t, tk.id, { body_html: 'Answered without a mailbox' });
    const row = await settled(t, r.body.id);
    expect(row).toMatchObject({ delivery_status: 'sent', delivery_error: null, mailbox_id: null });
    expect(row.from_email).toBe('help@helpdesk.test');
    const [got] = await waitForMail(email);
    expect(addressesOf(got!.mail.from)).toEqual([{ name: 'Help desk', address: 'help@helpdesk.test' }]);
    expect(got!.mail.messageId).toBe(`<${row.email_message_id_sent}>`);
    expect(got!.mail.text).toContain('Answered without a mailbox');
  });

  it('a ticket without a mailbox sends from the workspace mailbox; without a contact email it fails clearly', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const loose = await api().post(
      '/v1/tickets',
      {
        subject: 'No mailbox given',
        channel: 'email',
        contact: { email: `loose-${randomUUID().slice(0, 8)}@customer.test` },
      },
      t.as,
    );
    expect(loose.body.mailbox_id).toBeNull();
    const r1 = await reply(t, loose.body.id, { body_html: 'Found you' });
    const row1 = await settled(t, r1.body.id);
    expect(row1.delivery_status).toBe('sent');
    expect(row1.mailbox_id).toBe(mb.id);
    await waitForMail(loose.body.contact.email);

    const seq = await latestSeqOf(svc, t);
    const nobody = await api().post('/v1/tickets', { subject: 'Nobody', channel: 'email', mailbox_id: mb.id }, t.as);
    const r2 = await reply(t, nobody.body.id, { body_html: 'Hello?' });
    const row2 = await settled(t, r2.body.id);
    expect(row2.delivery_status).toBe('failed');
    expect(row2.delivery_error).toMatch(/no contact with an email address/);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated.map((e) => e.data.message.delivery_status)).toEqual(['failed']);
  });
});

describe('header injection', () => {
  it('CR/LF in the subject and the contact name add no header and no recipient', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, { display_name: 'Acme\r\nX-Injected-From: 1' });
    const email = `inj-${randomUUID().slice(0, 8)}@customer.test`;
    const tk = await emailTicket(t, mb.id, {
      subject: 'Hello\r\nBcc: evil@attacker.test\r\nX-Injected: yes',
      contact: { email, name: 'Eve\r\nX-Injected-Name: yes\r\nBcc: evil2@attacker.test' },
    });
    const r = await reply(t, tk.id, { body_html: 'Safe' });
    expect((await settled(t, r.body.id)).delivery_status).toBe('sent');
    const [got] = await waitForMail(email);
    expect(got!.rcpt).toEqual([email]);
    const headerBlock = got!.raw.slice(0, got!.raw.indexOf('\r\n\r\n'));
    expect(headerBlock).not.toMatch(/^x-injected/im);
    expect(headerBlock).not.toMatch(/^bcc:/im);
    expect(got!.mail.headers.has('x-injected')).toBe(false);
    expect(got!.mail.headers.has('x-injected-name')).toBe(false);
    expect(got!.mail.headers.has('x-injected-from')).toBe(false);
    // The first mail of the thread: no "Re:".
    expect(got!.mail.subject).toMatch(/^Hello Bcc: evil@attacker\.test X-Injected: yes \[#\d+-[a-z2-7]{10}\]$/);
    expect(addressesOf(got!.mail.to)).toEqual([
      { name: 'Eve X-Injected-Name: yes Bcc: evil2@attacker.test', address: email },
    ]);
  });
});
