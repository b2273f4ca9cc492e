// Outbound email, part 2 (part 1: outbound.test.ts, setup in outbound-setup.ts): failures and
// retries against a real SMTP server in this process.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/platform/crypto/random.js';
import { eventsAfterOf, latestSeqOf, newTenant, type Service } from '../../support/helpers.js';
import { outboundSuite, RETRIES, SMTP_PASSWORD, SMTP_USER } from './outbound-setup.js';

const suite = outboundSuite();
const { api, db, mailbox, emailTicket, reply, messageRow, settled, receivedFor, waitForMail } = suite;
let downPort: number;
let svc: Service;
beforeAll(() => {
  ({ downPort, svc } = suite);
});

describe('failures and retries', () => {
  it('SMTP 550 fails at once with delivery_error and message.updated', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id, {
      contact: { email: `reject550-${randomUUID().slice(0, 8)}@customer.test` },
    });
    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, { body_html: 'Will bounce' });
    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('failed');
    expect(row.delivery_attempts).toBe(1);
    expect(row.delivery_error).toMatch(/550/);
    expect(row.delivery_error).toMatch(/User unknown/);
    expect(row.delivery_error).not.toContain(SMTP_PASSWORD);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.message).toMatchObject({ id: r.body.id, delivery_status: 'failed' });
    expect(updated[0].data.message.delivery_error).toBe(row.delivery_error);
  });

  it('a refused login is permanent, and the password never shows in the error', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, { smtp_password: 'wrong-Pa55word-xyz' });
    const tk = await emailTicket(t, mb.id);
    const r = await reply(t, tk.id, { body_html: 'Needs a login' });
    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('failed');
    expect(row.delivery_attempts).toBe(1);
    expect(row.delivery_error).toMatch(/535|[Aa]uthentication|[Ii]nvalid login/);
    expect(row.delivery_error).not.toContain('wrong-Pa55word-xyz');
    expect(receivedFor(tk.contact.email)).toHaveLength(0);
  });

  it('451 is retried, then sent (one mail, the same Message-ID)', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const email = `tempfail-${randomUUID().slice(0, 8)}@customer.test`;
    const tk = await emailTicket(t, mb.id, { contact: { email } });
    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, { body_html: 'Greylisted first' });
    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('sent');
    expect(row.delivery_attempts).toBe(2);
    expect(row.delivery_error).toBeNull();
    const got = await waitForMail(email);
    expect(got).toHaveLength(1);
    expect(got[0]!.mail.messageId).toBe(`<${row.email_message_id_sent}>`);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated.map((e) => e.data.message.delivery_status)).toEqual(['sent']);
  });

  it('a server that is down is retried on the schedule, then the message fails', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, {
      config: { smtp_host: '127.0.0.1', smtp_port: downPort, smtp_tls: 'none', smtp_username: SMTP_USER },
    });
    const tk = await emailTicket(t, mb.id);
    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, { body_html: 'Nobody home' });
    // Between attempts the message stays pending and says nothing in delivery_error yet.
    const until = Date.now() + 10_000;
    let between = await messageRow(t, r.body.id);
    while (between.delivery_attempts === 0 && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 20));
      between = await messageRow(t, r.body.id);
    }
    if (between.delivery_status === 'pending') {
      expect(between.delivery_error).toBeNull();
      expect(between.delivery_last_error).toMatch(/ECONNREFUSED/);
    }
    // Three attempts take about a second; a loaded CI machine once needed more than 20 s.
    const row = await settled(t, r.body.id, 45_000);
    expect(row.delivery_status).toBe('failed');
    expect(row.delivery_attempts).toBe(RETRIES.length + 1);
    expect(row.delivery_error).toMatch(/^gave up after 3 attempts: .*ECONNREFUSED/);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated).toHaveLength(1);
  });

  it('a private address is refused without MAIL_ALLOW_PRIVATE (checked at send time)', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id);
    const config = svc.rt.deps.config as { mailAllowPrivate: boolean };
    config.mailAllowPrivate = false;
    try {
      const r = await reply(t, tk.id, { body_html: 'Should not connect' });
      const row = await settled(t, r.body.id);
      expect(row.delivery_status).toBe('failed');
      expect(row.delivery_error).toMatch(/127\.0\.0\.1 .*loopback|MAIL_ALLOW_PRIVATE/);
    } finally {
      config.mailAllowPrivate = true;
    }
    expect(receivedFor(tk.contact.email)).toHaveLength(0);
  });

  it('a reply whose job was lost (the process died after COMMIT) is sent by the sweep', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id);
    const id = newId();
    // Written as createMessage writes it, but no job was ever queued.
    await db()
      .insertInto('messages')
      .values({
        workspace_id: t.workspaceId,
        id,
        ticket_id: tk.id,
        kind: 'reply',
        direction: 'outbound',
        author_type: 'user',
        author_user_id: t.owner.userId,
        author_contact_id: null,
        author_api_key_id: null,
        body_html: '<p>From before the crash</p>',
        body_text: 'From before the crash',
        original_html: null,
        original_text: null,
        delivery_error: null,
        reply_to: null,
        form_sender: null,
        to: [tk.contact.email],
        delivery_status: 'pending',
        created_at: new Date(Date.now() - 5000),
      })
      .execute();
    const row = await settled(t, id);
    expect(row.delivery_status).toBe('sent');
    const got = await waitForMail(tk.contact.email);
    expect(got).toHaveLength(1);
    expect(got[0]!.mail.text).toContain('From before the crash');
  });
});
