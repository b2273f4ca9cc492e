// The assistant's loop on both providers' wire formats (interface.md "Assistant"; gaps.md
// "Assistant"): the tools offered, a read tool's result sent back to the model, arguments outside
// the schema / an unknown tool / a record the person cannot see as step errors the model sees, a
// write that stops the run with an approval (the turn's later calls not run, each told so), the
// stream's events, at most 8 model turns, and 501 ai_unsupported.
import { describe, expect, it } from 'vitest';
import { anthropicError, offeredTools, openAiError, toolResults } from '../../support/ai-standin/index.js';
import { isErrorBody } from '../../support/helpers.js';
import { assistantSuite, assistantTenant, executions, newSession, send, streamed, ticketOf, VENDORS } from './setup.js';

describe.each(VENDORS)('the loop on the %s stand-in', (vendor) => {
  const suite = assistantSuite(vendor);

  it('runs a read tool, sends its result back, and answers with the final text; the steps carry refs', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t, 'Printer on fire');
    const s = await newSession(svc, t.as);
    ai.answer(
      { text: 'Let me look.', toolCalls: [{ name: 'lookup_ticket', arguments: { ticket: String(ticket.number) } }] },
      { text: `Ticket #${ticket.number} is about a printer on fire.` },
    );
    const r = await send(svc, t.as, s, `What is ticket ${ticket.number} about?`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      text: `Let me look.\n\nTicket #${ticket.number} is about a printer on fire.`,
      status: 'complete',
      approval: null,
      steps: [
        {
          tool: 'lookup_ticket',
          label: `Reading ticket ${ticket.number}`,
          status: 'done',
          summary: `Ticket #${ticket.number}`,
          refs: [{ kind: 'ticket', id: ticket.id, label: 'Printer on fire', number: ticket.number }],
          action_id: null,
        },
      ],
    });
    const first = await ai.request(0);
    expect(offeredTools(first).sort()).toEqual(['lookup_ticket', 'set_status']);
    const results = toolResults(await ai.request(1));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'lookup_ticket', isError: false });
    expect(JSON.parse(results[0]!.content)).toMatchObject({
      id: ticket.id,
      subject: 'Printer on fire',
      status: 'open',
    });
    // The transcript keeps it as one answer with its step; a next message sends the whole history back.
    const detail = (await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body;
    expect(detail.messages).toMatchObject([
      { role: 'user' },
      { role: 'assistant', text: r.body.text, steps: [{ tool: 'lookup_ticket', status: 'done' }] },
    ]);
    ai.answer({ text: 'You are welcome.' });
    await send(svc, t.as, s, 'Thanks');
    const third = await ai.request(2);
    expect(toolResults(third)).toHaveLength(1);
  });

  it('turns bad arguments, an unknown tool and a record the person cannot see into step errors the model sees', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const other = await assistantTenant(svc);
    const hidden = await ticketOf(svc, other, 'Not yours');
    const s = await newSession(svc, t.as);
    ai.answer(
      {
        toolCalls: [
          { name: 'lookup_ticket', arguments: { ticket: 7, extra: true } },
          { name: 'lookup_ticket', arguments: '{"ticket": ' },
          { name: 'delete_everything', arguments: {} },
          { name: 'lookup_ticket', arguments: { ticket: hidden.id } },
          { name: 'set_status', arguments: { ticket: hidden.id, status: 'solved' } },
        ],
      },
      { text: 'I could not do any of that.' },
    );
    const r = await send(svc, t.as, s, 'Do things');
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('complete');
    expect(r.body.approval).toBeNull();
    expect(r.body.steps.map((x: { status: string }) => x.status)).toEqual([
      'error',
      'error',
      'error',
      'error',
      'error',
    ]);
    const results = toolResults(await ai.request(1));
    expect(results.map((x) => x.content)).toEqual([
      expect.stringMatching(/do not match the tool's schema/),
      expect.stringMatching(/not valid JSON/),
      expect.stringMatching(/no tool named "delete_everything"/),
      expect.stringMatching(/No ticket .* that you may see/),
      expect.stringMatching(/No ticket .* that you may see/),
    ]);
    if (vendor === 'anthropic') expect(results.every((x) => x.isError)).toBe(true);
    // Nothing changed, nothing is waiting.
    expect((await svc.api.get(`/v1/tickets/${hidden.id}`, other.as)).body.status).toBe('open');
    expect(executions.get(hidden.id)).toBeUndefined();
  });

  it('stops at a write with an approval; the calls after it are not run and the model is told so', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t, 'Solve me');
    const s = await newSession(svc, t.as);
    ai.answer({
      text: 'I will solve it.',
      toolCalls: [
        { name: 'lookup_ticket', arguments: { ticket: ticket.id } },
        { name: 'set_status', arguments: { ticket: ticket.id, status: 'solved' } },
        { name: 'lookup_ticket', arguments: { ticket: ticket.id } },
      ],
    });
    const r = await send(svc, t.as, s, 'Solve it');
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('awaiting_approval');
    expect(r.body.steps.map((x: { tool: string; status: string }) => [x.tool, x.status])).toEqual([
      ['lookup_ticket', 'done'],
      ['set_status', 'awaiting_approval'],
    ]);
    const approval = r.body.approval;
    expect(approval).toMatchObject({
      tool: 'set_status',
      preview: {
        title: `Set ticket #${ticket.number} to solved`,
        changes: [{ field: 'status', from: 'open', to: 'solved' }],
        targets: [{ kind: 'ticket', id: ticket.id, label: 'Solve me', number: ticket.number }],
        external: false,
      },
    });
    expect(r.body.steps[1].action_id).toBe(approval.action_id);
    expect(typeof approval.token).toBe('string');
    const ttl = Date.parse(approval.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    // Nothing changed; the transcript shows the approval waiting, with its token.
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.status).toBe('open');
    const detail = (await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body;
    expect(detail.approval).toEqual(approval);
    expect(detail.messages.at(-1).steps).toHaveLength(2);

    // Approved: the change happens, and the next model turn gets every call's result.
    ai.answer({ text: 'Solved it.' });
    const d = await svc.api.post(
      `/v1/assistant/actions/${approval.action_id}/decision`,
      {
        decision: 'approve',
        token: approval.token,
      },
      t.as,
    );
    expect(d.status, d.text).toBe(200);
    const results = toolResults(await ai.request(1));
    expect(results.map((x) => x.name)).toEqual(['lookup_ticket', 'set_status', 'lookup_ticket']);
    expect(JSON.parse(results[1]!.content)).toMatchObject({ status: 'solved' });
    expect(results[2]!.content).toMatch(/Not run/);
  });

  it('streams the events of a run: session, text, tool at the start and end of each step, approval, done', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t, 'Stream me');
    const s = await newSession(svc, t.as);
    ai.answer(
      { text: 'Looking.', toolCalls: [{ name: 'lookup_ticket', arguments: { ticket: ticket.id } }] },
      { text: 'Proposing.', toolCalls: [{ name: 'set_status', arguments: { ticket: ticket.id, status: 'pending' } }] },
    );
    const r = await streamed(svc, `/v1/assistant/sessions/${s}/messages`, { text: 'Park it' }, t.as);
    expect(r.status).toBe(200);
    const seen = r.events.map((e) => (e.event === 'tool' ? `tool:${e.data.tool}:${e.data.status}` : e.event));
    expect(seen.filter((e, i) => !(e === 'text' && seen[i - 1] === 'text'))).toEqual([
      'session',
      'text',
      'tool:lookup_ticket:running',
      'tool:lookup_ticket:done',
      'text',
      'tool:set_status:running',
      'tool:set_status:awaiting_approval',
      'approval',
      'done',
    ]);
    const text = r.events
      .filter((e) => e.event === 'text')
      .map((e) => e.data.text)
      .join('');
    expect(text).toBe('Looking.\n\nProposing.');
    const done = r.events.at(-1)!;
    expect(done.data).toEqual({ status: 'awaiting_approval' });
    const approval = r.events.find((e) => e.event === 'approval')!.data;
    const step = r.events.findLast((e) => e.event === 'tool')!.data;
    expect(step).toMatchObject({ action_id: approval.action_id, refs: [{ kind: 'ticket', id: ticket.id }] });
    // The decision streams the same way: the decided step first.
    ai.answer({ text: 'Parked.' });
    const d = await streamed(
      svc,
      `/v1/assistant/actions/${approval.action_id}/decision`,
      { decision: 'approve', token: approval.token },
      t.as,
    );
    expect(d.events.map((e) => (e.event === 'tool' ? `tool:${e.data.status}` : e.event))).toEqual([
      'session',
      'tool:approved',
      ...d.events.filter((e) => e.event === 'text').map(() => 'text'),
      'done',
    ]);
    expect(d.events.at(-1)!.data).toEqual({ status: 'complete' });
    expect((await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body.status).toBe('pending');
  });

  it('answers 501 ai_unsupported when the model cannot use tools', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const s = await newSession(svc, t.as);
    const message = 'this model does not support tools';
    ai.answer({ status: 400, body: vendor === 'openai' ? openAiError(400, message) : anthropicError(400, message) });
    const r = await send(svc, t.as, s, 'Hello');
    expect(isErrorBody(r.body, 501, 'ai_unsupported')).toBe(true);
    expect((await svc.api.get(`/v1/assistant/sessions/${s}`, t.as)).body.session.running).toBe(false);
  });
});

describe('a model that never stops calling tools', () => {
  const suite = assistantSuite('openai');
  it('ends the run after 8 model turns', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t, 'Again and again');
    const s = await newSession(svc, t.as);
    ai.fallback = () => ({ toolCalls: [{ name: 'lookup_ticket', arguments: { ticket: ticket.id } }] });
    const r = await send(svc, t.as, s, 'Loop');
    expect(r.status, r.text).toBe(200);
    expect(ai.requests).toHaveLength(8);
    expect(r.body.steps).toHaveLength(8);
    expect(r.body.status).toBe('complete');
    expect(r.body.text).toMatch(/stopped after 8 steps/);
    // The next message's history is well formed: every call has its result.
    ai.fallback = () => ({ text: 'OK.' });
    expect((await send(svc, t.as, s, 'Stop')).body.text).toBe('OK.');
    expect(toolResults(ai.requests.at(-1)!)).toHaveLength(8);
  });
});
