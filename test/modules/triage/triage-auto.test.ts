// Automatic triage: auto_triage on a new ticket in a job (the triage fields only, via triage),
// assign_after_triage running the assignment once triage set a team, the automations' ai_decide
// conditions (one call per run, metered decide) and ai_triage action (via automation). Waits on
// states (expect.poll), never on time.
import { describe, expect, it } from 'vitest';
import { newTenant, type Tenant } from '../../support/helpers.js';
import { customerTicket, promptOf, usageOf } from '../ai/features-setup.js';
import { activitiesOf, settings, ticketOf, triageAnswer, triageSuite, workspaceData } from './triage-setup.js';

const s = triageSuite('openai');

const schemaName = (body: any): string => body.response_format?.json_schema?.name ?? '';

/** The stand-in answers triage with `triage` and ai_decide questions with `answers`. */
function answers(triage: Record<string, unknown>, decide: number[] = []) {
  s.ai.fallback = (req) =>
    schemaName(req.body) === 'ticket_questions' ? { json: { answers: decide } } : { json: triageAnswer(triage) };
}

const usageCount = async (t: Tenant, feature: string) =>
  (await usageOf(s.svc, t)).filter((u) => u.feature === feature).length;

describe('auto_triage', () => {
  it('triages a new ticket in a job on the triage fields only, then assigns once by the team triage set', async () => {
    const { svc } = s;
    const t = await newTenant(svc.api);
    const { teamId } = await workspaceData(svc, t);
    expect((await svc.api.patch(`/v1/teams/${teamId}`, { member_ids: [t.owner.userId] }, t.as)).status).toBe(200);
    const a = await svc.api.patch(
      '/v1/assignment',
      { mode: 'none', rules: [{ target_type: 'team', target_id: teamId, mode: 'round_robin' }] },
      t.as,
    );
    expect(a.status, a.text).toBe(200);
    expect((await svc.api.patch('/v1/members/me/availability', { availability: 'online' }, t.as)).status).toBe(200);
    await settings(svc, t, { auto_triage: true, fields: ['priority', 'team'], assign_after_triage: true });
    answers({ team_id: teamId });

    const { id } = await customerTicket(svc, t, 'My invoice is wrong');
    await expect
      .poll(async () => (await ticketOf(svc, t, id)).custom.ai_decisions?.engine, { timeout: 20_000 })
      .toBe('llm');
    const ticket = await ticketOf(svc, t, id);
    expect(ticket).toMatchObject({ priority: 'high', severity: null, team_id: teamId, tags: [] });
    expect(ticket.assignee?.id).toBe(t.owner.userId);
    expect(Object.keys(ticket.custom.ai_suggestions).sort()).toEqual(['labels', 'severity']);
    const acts = (await activitiesOf(svc, t, id)).filter((x) => x.actor.type === 'ai');
    expect(acts.map((x) => x.type).sort()).toEqual(['priority_changed', 'team_changed']);
    for (const x of acts) expect(x.data).toMatchObject({ via: 'triage', confidence: null });
    const assigned = (await activitiesOf(svc, t, id)).filter((x) => x.type === 'assigned');
    expect(assigned).toHaveLength(1);
    // Metered to no one (an automatic run).
    const usage = (await usageOf(svc, t)).filter((u) => u.feature === 'triage');
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ user_id: null, ticket_id: id, outcome: 'ok' });
  });
});

describe('automations', () => {
  async function automation(t: Tenant, body: Record<string, unknown>) {
    const r = await svc().api.post('/v1/automations', { name: 'AI', trigger: 'ticket_created', ...body }, t.as);
    expect(r.status, r.text).toBe(201);
    return r.body;
  }
  const svc = () => s.svc;

  it('ai_decide asks every question of a run in one call (decide); ai_triage runs triage via automation', async () => {
    const t = await newTenant(svc().api);
    await workspaceData(svc(), t);
    const auto = await automation(t, {
      conditions: [
        { field: 'ai_decide', op: 'gt', value: 0.5, question: 'Does the customer ask for a refund?' },
        { field: 'ai_decide', op: 'lt', value: 0.5, question: 'Is this spam?' },
      ],
      actions: [{ type: 'add_tag', value: 'payments' }, { type: 'ai_triage' }],
    });
    answers({ priority: 'urgent', label: '' }, [0.9, 0.1]);
    const { id } = await customerTicket(svc(), t, 'I want my money back');
    await expect
      .poll(async () => (await ticketOf(svc(), t, id)).custom.ai_decisions?.engine, { timeout: 20_000 })
      .toBe('llm');
    const ticket = await ticketOf(svc(), t, id);
    expect(ticket.priority).toBe('urgent');
    expect(ticket.tags.map((x: { name: string }) => x.name).sort()).toEqual(['Bug', 'payments']);
    const acts = await activitiesOf(svc(), t, id);
    expect(acts.find((x) => x.type === 'priority_changed')).toMatchObject({
      actor: { type: 'ai' },
      data: { via: 'automation', to: 'urgent' },
    });
    expect(await usageCount(t, 'decide')).toBe(1);
    expect(await usageCount(t, 'triage')).toBe(1);
    const decide = s.ai.requests.find((r) => schemaName(r.body) === 'ticket_questions')!;
    const { system, user } = promptOf(decide);
    expect(system).toContain('1. Does the customer ask for a refund?');
    expect(system).toContain('2. Is this spam?');
    expect(system).not.toContain('money back');
    expect(user).toContain('I want my money back');
    expect(auto.id).toBeTruthy();
  });

  it('a condition the engine answers against does not hold: no action, no triage', async () => {
    const t = await newTenant(svc().api);
    await workspaceData(svc(), t);
    await automation(t, {
      conditions: [{ field: 'ai_decide', op: 'gt', value: 0.5, question: 'Does the customer ask for a refund?' }],
      actions: [{ type: 'add_tag', value: 'payments' }, { type: 'ai_triage' }],
    });
    answers({}, [0.2]);
    const { id } = await customerTicket(svc(), t, 'Just saying thanks');
    await expect.poll(() => usageCount(t, 'decide'), { timeout: 20_000 }).toBe(1);
    const ticket = await ticketOf(svc(), t, id);
    expect(ticket.tags).toEqual([]);
    expect(ticket.custom.ai_decisions).toBeUndefined();
    expect(await usageCount(t, 'triage')).toBe(0);
  });
});
