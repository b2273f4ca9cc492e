// Approvals (interface.md "Assistant approval"): approve runs the change once and the run goes
// on; deny goes on without it; a new message or 15 minutes expire it; a second decision 409
// approval_not_pending; a token of another action, person, sign-in session or workspace 403
// approval_invalid; a decision other than approve or deny 422; concurrent approvals run the change
// once; assistant.action audit entries.
import { describe, expect, it } from 'vitest';
import { toolResults } from '../../support/ai-standin/index.js';
import { addMember, isErrorBody, type ReqOpts, type Service } from '../../support/helpers.js';
import {
  assistantSuite,
  assistantTenant,
  decideOn,
  executions,
  newSession,
  type Suite,
  send,
  ticketOf,
} from './setup.js';

const suite = assistantSuite('anthropic');

/** A conversation waiting for the approval of setting `ticket` to solved. */
async function pendingApproval(s: Suite, as: ReqOpts, ticketId: string, session?: string) {
  const id = session ?? (await newSession(s.svc, as));
  s.ai.answer({ toolCalls: [{ name: 'set_status', arguments: { ticket: ticketId, status: 'solved' } }] });
  const r = await send(s.svc, as, id, 'Solve it please');
  expect(r.status, r.text).toBe(200);
  expect(r.body.status).toBe('awaiting_approval');
  return { session: id, approval: r.body.approval as { action_id: string; token: string; call_id: string } };
}

const statusOf = async (svc: Service, as: ReqOpts, id: string) =>
  (await svc.api.get(`/v1/tickets/${id}`, as)).body.status;
const stepOf = async (svc: Service, as: ReqOpts, session: string) =>
  (await svc.api.get(`/v1/assistant/sessions/${session}`, as)).body.messages.at(-1).steps.at(-1);

describe('decisions', () => {
  it('approve: the change happens once; the run goes on; a second decision answers 409', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const { session, approval } = await pendingApproval(suite, t.as, ticket.id);
    ai.answer({ text: `Ticket #${ticket.number} is solved.` });
    const d = await decideOn(svc, t.as, approval.action_id, 'approve', approval.token);
    expect(d.status, d.text).toBe(200);
    expect(d.body).toMatchObject({
      session: { id: session, running: false },
      text: `Ticket #${ticket.number} is solved.`,
      status: 'complete',
      approval: null,
      steps: [
        {
          tool: 'set_status',
          status: 'approved',
          action_id: approval.action_id,
          summary: `Ticket #${ticket.number} is solved`,
        },
      ],
    });
    expect(await statusOf(svc, t.as, ticket.id)).toBe('solved');
    expect(executions.get(ticket.id)).toBe(1);
    const [result] = toolResults(await ai.request(1));
    expect(result).toMatchObject({ callId: approval.call_id, name: 'set_status', isError: false });
    expect(JSON.parse(result!.content)).toMatchObject({ status: 'solved' });

    for (const decision of ['approve', 'deny']) {
      const again = await decideOn(svc, t.as, approval.action_id, decision, approval.token);
      expect(isErrorBody(again.body, 409, 'approval_not_pending')).toBe(true);
    }
    expect(executions.get(ticket.id)).toBe(1);
    expect(await stepOf(svc, t.as, session)).toMatchObject({ status: 'approved' });
    expect((await svc.api.get(`/v1/assistant/sessions/${session}`, t.as)).body.approval).toBeNull();

    const audit = await svc.api.get('/v1/audit-logs?action=assistant.action', t.as);
    expect(audit.body.data).toMatchObject([
      {
        action: 'assistant.action',
        entity_type: 'assistant_action',
        entity_id: approval.action_id,
        actor: { type: 'user', user: { id: t.owner.userId } },
        data: {
          tool: 'set_status',
          decision: 'approve',
          targets: [{ kind: 'ticket', id: ticket.id, number: ticket.number }],
        },
      },
    ]);
  });

  it('deny: nothing changes, the model is told, the step shows denied', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const { session, approval } = await pendingApproval(suite, t.as, ticket.id);
    ai.answer({ text: 'Alright, I left it open.' });
    const d = await decideOn(svc, t.as, approval.action_id, 'deny', approval.token);
    expect(d.status, d.text).toBe(200);
    expect(d.body).toMatchObject({
      status: 'complete',
      steps: [{ status: 'denied' }],
      text: 'Alright, I left it open.',
    });
    expect(await statusOf(svc, t.as, ticket.id)).toBe('open');
    expect(executions.get(ticket.id)).toBeUndefined();
    expect(toolResults(await ai.request(1))[0]!.content).toMatch(/denied/);
    expect(await stepOf(svc, t.as, session)).toMatchObject({ status: 'denied' });
    const again = await decideOn(svc, t.as, approval.action_id, 'approve', approval.token);
    expect(again.body.code).toBe('approval_not_pending');
    const audit = await svc.api.get('/v1/audit-logs?action=assistant.action', t.as);
    expect(audit.body.data[0].data.decision).toBe('deny');
  });

  it('expires after 15 minutes: the decision answers 409, the step shows expired, nothing changes', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const { session, approval } = await pendingApproval(suite, t.as, ticket.id);
    await svc.rt.deps.database.db
      .updateTable('assistant_actions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', approval.action_id)
      .execute();
    const d = await decideOn(svc, t.as, approval.action_id, 'approve', approval.token);
    expect(isErrorBody(d.body, 409, 'approval_not_pending')).toBe(true);
    expect(await statusOf(svc, t.as, ticket.id)).toBe('open');
    const detail = (await svc.api.get(`/v1/assistant/sessions/${session}`, t.as)).body;
    expect(detail.approval).toBeNull();
    expect(detail.messages.at(-1).steps.at(-1)).toMatchObject({ status: 'expired' });
    // The model hears of it with the next message.
    ai.answer({ text: 'Noted.' });
    await send(svc, t.as, session, 'Never mind');
    expect(toolResults(await ai.request(1))[0]!.content).toMatch(/did not decide within 15 minutes/);
  });

  it('expires on a new message in the conversation: the call gets a result saying so', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const { session, approval } = await pendingApproval(suite, t.as, ticket.id);
    ai.answer({ text: 'Something else then.' });
    const r = await send(svc, t.as, session, 'Actually, what time is it?');
    expect(r.status, r.text).toBe(200);
    const [result] = toolResults(await ai.request(1));
    expect(result).toMatchObject({ callId: approval.call_id, isError: true });
    expect(result!.content).toMatch(/new message/);
    expect(await stepOf(svc, t.as, session)).toBeUndefined(); // the last answer has no steps
    const detail = (await svc.api.get(`/v1/assistant/sessions/${session}`, t.as)).body;
    expect(detail.messages[1].steps[0]).toMatchObject({ status: 'expired', action_id: approval.action_id });
    const d = await decideOn(svc, t.as, approval.action_id, 'approve', approval.token);
    expect(d.body.code).toBe('approval_not_pending');
    expect(await statusOf(svc, t.as, ticket.id)).toBe('open');
  });

  it('an approved change that can no longer be made fails as a step error the model reads; the run goes on', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const { session, approval } = await pendingApproval(suite, t.as, ticket.id);
    expect((await svc.api.delete(`/v1/tickets/${ticket.id}`, t.as)).status).toBe(204);
    ai.answer({ text: 'That ticket is gone.' });
    const d = await decideOn(svc, t.as, approval.action_id, 'approve', approval.token);
    expect(d.status, d.text).toBe(200);
    expect(d.body).toMatchObject({ status: 'complete', text: 'That ticket is gone.', steps: [{ status: 'error' }] });
    const [result] = toolResults(await ai.request(1));
    expect(result!.content).toMatch(/^Error: /);
    expect(await stepOf(svc, t.as, session)).toMatchObject({ status: 'error', action_id: approval.action_id });
    const again = await decideOn(svc, t.as, approval.action_id, 'approve', approval.token);
    expect(again.body.code).toBe('approval_not_pending');
  });

  it('runs the change once under concurrent approvals', async () => {
    const { svc, ai } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const { approval } = await pendingApproval(suite, t.as, ticket.id);
    ai.fallback = () => ({ text: 'Done.' });
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => decideOn(svc, t.as, approval.action_id, 'approve', approval.token)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
    expect(executions.get(ticket.id)).toBe(1);
    expect(await statusOf(svc, t.as, ticket.id)).toBe('solved');
  });
});

describe('the token', () => {
  it('is bound to the action, the person, the sign-in session and the workspace (403 approval_invalid)', async () => {
    const { svc } = suite;
    const t = await assistantTenant(svc);
    const ticket = await ticketOf(svc, t);
    const second = await ticketOf(svc, t, 'Another one');
    const a = await pendingApproval(suite, t.as, ticket.id);
    const b = await pendingApproval(suite, t.as, second.id);
    // Another action's token.
    const r1 = await decideOn(svc, t.as, a.approval.action_id, 'approve', b.approval.token);
    expect(isErrorBody(r1.body, 403, 'approval_invalid')).toBe(true);
    // Another person of the workspace, with the right token.
    const admin = await addMember(svc, t, 'admin');
    const r2 = await decideOn(svc, admin.as, a.approval.action_id, 'approve', a.approval.token);
    expect(r2.body.code).toBe('approval_invalid');
    // The same person in another sign-in session.
    const login = await svc.api.post('/v1/auth/login', { email: t.owner.email, password: t.owner.password });
    expect(login.status, login.text).toBe(200);
    const elsewhere = { token: login.body.access_token as string, workspace: t.workspaceId };
    const r3 = await decideOn(svc, elsewhere, a.approval.action_id, 'approve', a.approval.token);
    expect(r3.body.code).toBe('approval_invalid');
    // There the transcript shows the approval without a usable token.
    expect((await svc.api.get(`/v1/assistant/sessions/${a.session}`, elsewhere)).body.approval.token).toBe('');
    // Another workspace's token: the same person's approval there.
    const other = await assistantTenant(svc);
    const owner = await addMember(svc, other, 'agent', t.owner);
    const there = await ticketOf(svc, other, 'Over there');
    const c = await pendingApproval(suite, owner.as, there.id);
    const r4 = await decideOn(svc, owner.as, c.approval.action_id, 'approve', a.approval.token);
    expect(r4.body.code).toBe('approval_invalid');
    // The action seen from the other workspace is not found at all.
    const r5 = await decideOn(svc, owner.as, a.approval.action_id, 'approve', a.approval.token);
    expect(r5.status).toBe(404);
    // A garbage token, and a decision other than approve or deny.
    expect((await decideOn(svc, t.as, a.approval.action_id, 'approve', 'nope')).body.code).toBe('approval_invalid');
    const bad = await decideOn(svc, t.as, a.approval.action_id, 'maybe', a.approval.token);
    expect(isErrorBody(bad.body, 422)).toBe(true);
    expect((await decideOn(svc, t.as, a.approval.action_id, 'approve', '')).status).toBe(422);
    // Nothing changed, and the right token still works.
    expect(await statusOf(svc, t.as, ticket.id)).toBe('open');
    expect(executions.get(ticket.id)).toBeUndefined();
    expect((await svc.api.get(`/v1/assistant/sessions/${a.session}`, t.as)).body.approval.token).toBe(a.approval.token);
    suite.ai.answer({ text: 'Done.' });
    expect((await decideOn(svc, t.as, a.approval.action_id, 'approve', a.approval.token)).status).toBe(200);
    expect(await statusOf(svc, t.as, ticket.id)).toBe('solved');
  });
});
