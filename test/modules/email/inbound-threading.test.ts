// Inbound email end to end, part 2 (part 1: inbound.test.ts, setup in inbound-setup.ts):
// threading into existing tickets, and duplicates.
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { processInbound } from '../../../src/modules/email/inbound.js';
import { INBOUND_JOB } from '../../../src/modules/email/ingest.js';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import { type Service, type Tenant, unique } from '../../support/helpers.js';
import { fixture, inboundSuite, mail } from './inbound-setup.js';

const suite = inboundSuite();
const {
  db,
  deliver,
  spoolRow,
  processed,
  deliverAndWait,
  ticketOf,
  messagesOf,
  activitiesOf,
  openTicket,
  addOutbound,
  setStatus,
} = suite;
let svc: Service;
let a: Tenant;
let b: Tenant;
let mbA: { id: string; forwarding_address: string };
let mbA2: { id: string; forwarding_address: string };
let mbB: { id: string; forwarding_address: string };
beforeAll(() => {
  ({ svc, a, b, mbA, mbA2, mbB } = suite);
});

describe('threading', () => {
  const clients = [
    ['gmail-reply.eml', 'Thanks, the export works now.', 'Please try the export again'],
    ['outlook-desktop-reply.eml', 'We moved the meeting to Thursday', 'which day suits you'],
    ['outlook-web-reply.eml', null, null],
    ['apple-mail-reply.eml', 'order 7781 arrived this morning', 'has your order 7781 arrived yet'],
    ['iphone-reply.eml', null, null],
    ['thunderbird-reply.eml', 'The VPN works again after the update.', 'Please install update 2.4.1'],
  ] as const;
  for (const [name, kept, quoted] of clients) {
    it(`a ${name.replace('.eml', '')} threads into its ticket by In-Reply-To, trimmed, and reopens it`, async () => {
      const { ticketId } = await openTicket({ from: 'Customer <customer@example.com>' });
      const ours = `original-${name.replace('.eml', '')}@acme.test`;
      await addOutbound(a, ticketId, ours);
      await setStatus(a, ticketId, 'solved');
      const raw = fixture('clients', name);
      const row = await deliverAndWait(raw);
      expect(row.status, row.error ?? '').toBe('processed');
      expect(row.ticket_id).toBe(ticketId);
      const ticket = await ticketOf(a, ticketId);
      expect(ticket.status).toBe('open');
      const acts = await activitiesOf(a, ticketId);
      expect(acts.at(-1)).toMatchObject({
        type: 'status_changed',
        data: { from: 'solved', to: 'open' },
        actor: { type: 'system' },
      });
      const m = (await messagesOf(a, ticketId)).find((x) => x.id === row.result_message_id);
      expect(m.has_quoted).toBe(true);
      const original = await svc.api.get(`/v1/messages/${m.id}/original`, a.as);
      expect(original.status).toBe(200);
      expect(original.body.has_quoted).toBe(true);
      expect(original.body.body_text.length).toBeGreaterThan(m.body_text.length);
      if (kept && quoted) {
        expect(m.body_text).toContain(kept);
        expect(m.body_text).not.toContain(quoted);
        expect(m.body_html).not.toContain(quoted);
        expect(original.body.body_text).toContain(kept);
        expect(original.body.body_text).toContain(quoted);
        expect(original.body.body_html).toContain(quoted);
      }
    });
  }

  it('forwards are kept whole (no trimming) and thread like replies', async () => {
    const { ticketId } = await openTicket({ from: 'customer@example.com' });
    await addOutbound(a, ticketId, 'original-gmail-forward@acme.test');
    const row = await deliverAndWait(fixture('clients', 'gmail-forward.eml'));
    expect(row.ticket_id).toBe(ticketId);
    const m = (await messagesOf(a, ticketId)).find((x) => x.id === row.result_message_id);
    expect(m.has_quoted).toBe(false);
  });

  it('threads by References alone (no In-Reply-To), against a customer’s earlier Message-ID too', async () => {
    const first = `${unique('first')}@example.com`;
    const { ticketId } = await openTicket({ messageId: first });
    const ours = `${unique('ours')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    const byOurs = await deliverAndWait(
      mail({
        subject: 'Re: something else',
        references: `<unknown-1@elsewhere.test> <${ours}> <unknown-2@elsewhere.test>`,
      }),
    );
    expect(byOurs.ticket_id).toBe(ticketId);
    const byTheirs = await deliverAndWait(mail({ subject: 'again', references: `<${first.toUpperCase()}>` }));
    expect(byTheirs.ticket_id).toBe(ticketId);
    expect((await ticketOf(a, ticketId)).message_count).toBe(4);
  });

  it('a reply that arrives while the mail it answers is still queued waits for it: one ticket', async () => {
    const parentId = `${unique('parent')}@example.com`;
    const parentRaw = mail({ messageId: parentId, subject: unique('Subject') });
    // The first mail is stored but its job has not run yet (a busy queue, several workers).
    const parentRow = randomUUID();
    await db()
      .insertInto('inbound_emails')
      .values({
        id: parentRow,
        workspace_id: a.workspaceId,
        mailbox_id: mbA.id,
        recipient: mbA.forwarding_address,
        source: 'http',
        raw: parentRaw,
        size_bytes: parentRaw.length,
        sha256: createHash('sha256').update(parentRaw).digest('hex'),
        message_id: parentId.toLowerCase(),
        status: 'received',
      })
      .execute();
    const reply = await deliver(mail({ subject: 'Re: it', inReplyTo: `<${parentId}>`, references: `<${parentId}>` }));
    expect(reply.status, reply.text).toBe(202);
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await spoolRow(reply.body.id);
    expect(waiting?.status).toBe('received');
    await svc.rt.deps.jobs.send(INBOUND_JOB, { id: parentRow });
    const first = await processed(parentRow);
    const second = await processed(reply.body.id);
    expect([first.status, second.status]).toEqual(['processed', 'processed']);
    expect(second.ticket_id).toBe(first.ticket_id);
    expect((await ticketOf(a, first.ticket_id!)).message_count).toBe(2);
  });

  it('threads by a signed ticket token in the subject or the address; a forged one opens a new ticket', async () => {
    const { ticketId } = await openTicket({ from: 'tok@example.com' });
    const ticket = await ticketOf(a, ticketId);
    const token = ticketTokenFor(svc.rt.deps.config, a.workspaceId, ticket.number);
    // From someone else entirely: a signed token is enough.
    const bySubject = await deliverAndWait(
      mail({ from: 'colleague@example.org', subject: `Re: ${ticket.subject} [#${token}]` }),
    );
    expect(bySubject.ticket_id).toBe(ticketId);
    const [local, domain] = mbA.forwarding_address.split('@');
    const byAddress = await deliverAndWait(
      mail({ from: 'colleague@example.org', subject: 'no token here', to: `${local}+t${token}@${domain}` }),
      `${local}+t${token}@${domain}`,
    );
    expect(byAddress.ticket_id).toBe(ticketId);
    const forged = await deliverAndWait(
      mail({ from: 'colleague@example.org', subject: `Re: x [#${ticket.number}-aaaaaaaaaa]` }),
    );
    expect(forged.ticket_id).not.toBe(ticketId);
  });

  it('follows a bare [#n] only for a participant of ticket n', async () => {
    const { ticketId } = await openTicket({ from: 'part@example.com' });
    const n = (await ticketOf(a, ticketId)).number;
    const participant = await deliverAndWait(mail({ from: 'part@example.com', subject: `Re: about [#${n}]` }));
    expect(participant.ticket_id).toBe(ticketId);
    const stranger = await deliverAndWait(mail({ from: 'stranger@example.net', subject: `About [#${n}]` }));
    expect(stranger.ticket_id).not.toBe(ticketId);
  });

  it('a customer’s mail on a closed ticket starts a follow-up ticket linked to it', async () => {
    const { ticketId } = await openTicket();
    const ours = `${unique('closed')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    await setStatus(a, ticketId, 'closed');
    const row = await deliverAndWait(mail({ inReplyTo: `<${ours}>` }));
    expect(row.ticket_id).not.toBe(ticketId);
    const follow = await ticketOf(a, row.ticket_id!);
    const closed = await ticketOf(a, ticketId);
    expect(follow.custom.follow_up_of).toEqual({ id: ticketId, number: closed.number });
    expect(closed.status).toBe('closed');
    expect(closed.message_count).toBe(2);
  });

  it('never threads into another workspace’s ticket, even with its Message-ID in In-Reply-To', async () => {
    const { ticketId: bTicket } = await openTicket({}, mbB.forwarding_address);
    const bId = `${unique('bravo-secret')}@bravo.test`;
    await addOutbound(b, bTicket, bId, mbB.id);
    const bNumber = (await ticketOf(b, bTicket)).number;
    const bToken = ticketTokenFor(svc.rt.deps.config, b.workspaceId, bNumber);
    const row = await deliverAndWait(
      mail({ inReplyTo: `<${bId}>`, references: `<${bId}>`, subject: `Re: [#${bToken}]` }),
      mbA.forwarding_address,
    );
    expect(row.workspace_id).toBe(a.workspaceId);
    expect(row.ticket_id).not.toBe(bTicket);
    expect((await ticketOf(a, row.ticket_id!)).message_count).toBe(1);
    expect((await ticketOf(b, bTicket)).message_count).toBe(2);
    expect((await svc.api.get(`/v1/tickets/${row.ticket_id}`, b.as)).status).toBe(404);
  });
});

describe('duplicates', () => {
  it('the same mail delivered twice makes one message', async () => {
    const raw = mail({ subject: unique('twice') });
    const first = await deliverAndWait(raw);
    const second = await deliverAndWait(raw);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('processed');
    expect(second.error).toMatch(/duplicate/);
    expect(second.result_message_id).toBe(first.result_message_id);
    expect((await ticketOf(a, first.ticket_id!)).message_count).toBe(1);
  });

  it('the same mail delivered at once, five times, makes one ticket and one message', async () => {
    const messageId = `${unique('burst')}@example.com`;
    const raw = mail({ messageId, subject: unique('burst') });
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(raw)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const rows = await Promise.all(answers.map((r) => processed(r.body.id)));
    expect(new Set(rows.map((r) => r.ticket_id)).size).toBe(1);
    expect(new Set(rows.map((r) => r.result_message_id)).size).toBe(1);
    const copies = await db()
      .selectFrom('messages')
      .select('id')
      .where('workspace_id', '=', a.workspaceId)
      .where('email_message_id', '=', messageId.toLowerCase())
      .execute();
    expect(copies).toHaveLength(1);
    const tickets = await db()
      .selectFrom('tickets')
      .select('id')
      .where('workspace_id', '=', a.workspaceId)
      .where(
        'id',
        'in',
        rows.map((r) => r.ticket_id!),
      )
      .execute();
    expect(tickets).toHaveLength(1);
  });

  it('two workers on two copies at the same moment: one wins, the other is recorded as its duplicate', async () => {
    // Rows without a queued job, processed side by side (on PostgreSQL both pass the first check
    // and the unique index decides; on the embedded database they run one after the other).
    const raw = mail({
      subject: unique('race'),
      contentType: 'multipart/mixed; boundary=m',
      body: [
        '--m',
        'Content-Type: text/plain',
        '',
        'see file',
        '--m',
        'Content-Type: application/pdf; name="a.pdf"',
        'Content-Disposition: attachment; filename="a.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        'JVBERi0xLjQK',
        '--m--',
        '',
      ].join('\r\n'),
    });
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) {
      await db()
        .insertInto('inbound_emails')
        .values({
          id,
          workspace_id: a.workspaceId,
          mailbox_id: mbA.id,
          recipient: 'x@y.z',
          raw,
          size_bytes: raw.length,
          sha256: 'x',
          message_id: null,
        })
        .execute();
    }
    const outcomes = await Promise.all(ids.map((id) => processInbound(svc.rt.deps, id)));
    expect(outcomes.map((o) => o.result).sort()).toEqual(['created', 'duplicate']);
    expect(outcomes[0]!.messageId).toBe(outcomes[1]!.messageId);
    const rows = await Promise.all(ids.map((id) => spoolRow(id)));
    expect(rows.map((r) => r!.status)).toEqual(['processed', 'processed']);
    // The loser's stored file was removed with its rolled-back write: one attachment row, one message.
    const files = await db()
      .selectFrom('attachments')
      .select('id')
      .where('workspace_id', '=', a.workspaceId)
      .where('message_id', '=', outcomes[0]!.messageId!)
      .execute();
    expect(files).toHaveLength(1);
  });

  it('mail without a Message-ID de-duplicates on its bytes', async () => {
    const raw = mail({ messageId: null, subject: unique('no id') });
    const first = await deliverAndWait(raw);
    const second = await deliverAndWait(raw);
    expect(second.result_message_id).toBe(first.result_message_id);
    const other = await deliverAndWait(mail({ messageId: null, subject: unique('no id either') }));
    expect(other.ticket_id).not.toBe(first.ticket_id);
  });

  it('the same Message-ID in two mailboxes is one ticket per mailbox', async () => {
    const raw = mail({ subject: unique('two boxes') });
    const one = await deliverAndWait(raw, mbA.forwarding_address);
    const two = await deliverAndWait(raw, mbA2.forwarding_address);
    expect(one.ticket_id).not.toBe(two.ticket_id);
    expect((await ticketOf(a, two.ticket_id!)).mailbox_id).toBe(mbA2.id);
  });
});
