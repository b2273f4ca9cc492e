// The assistant's tips (getTips, served by GET /v1/assistant/tips): counts over the tickets the
// person may see, from what is stored (SLA state and due times, triage's sla_risk decision,
// assignee, creation and last message times); only tips with a count above 0. Tickets are made
// through the API, then given known SLA, risk and times in the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTips } from '../../../src/modules/assistant/tips.js';
import { makeContact, makeTicket } from '../../support/builders.js';
import { addMember, type Member, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';
import { contextOf } from './tools-setup.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const HOUR = 3_600_000;
const inHours = (h: number) => new Date(Date.now() + h * HOUR);
const sla = (breached: boolean) =>
  JSON.stringify({ policy_id: null, first_response_due_at: null, resolution_due_at: null, breached });
const risk = (value: boolean, probability: number | null) =>
  JSON.stringify({
    ai_decisions: { fields: { sla_risk: { value, probability, confidence: probability, applied: false } } },
  });

async function ticket(t: Tenant, body: Record<string, unknown>, set: Record<string, unknown>): Promise<string> {
  const { id } = await makeTicket(svc.api, t, { subject: 'Tip me', ...body });
  if (Object.keys(set).length === 0) return id;
  await svc.rt.deps.database.db
    .updateTable('tickets')
    .set(set as never)
    .where('workspace_id', '=', t.workspaceId)
    .where('id', '=', id)
    .execute();
  return id;
}

const counts = async (who: Member | Tenant) =>
  Object.fromEntries((await getTips(svc.rt.deps, await contextOf(svc, who))).map((x) => [x.key, x.count]));

describe('tips', () => {
  let t: Tenant;
  let agent: Member;
  let insider: Member;
  let team: string;

  beforeAll(async () => {
    t = await newTenant(svc.api);
    agent = await addMember(svc, t, 'agent', 'Ann Agent');
    insider = await addMember(svc, t, 'agent', 'Ivy Insider');
    team = (await svc.api.post('/v1/teams', { name: 'VIP', private: true, member_ids: [insider.userId] }, t.as)).body
      .id;
    const contact = await makeContact(svc.api, t);
    const mine = { assignee_id: agent.userId };

    // Breached: 2 open (one in the private team), 1 solved (not counted).
    await ticket(t, mine, { sla: sla(true) });
    await ticket(t, { ...mine, team_id: team }, { sla: sla(true) });
    await ticket(t, { ...mine, status: 'solved' }, { sla: sla(true) });
    // Due within the hour: 1; due in 3 hours with risk 0.8 (at risk), 0.5 (not), LLM true (at risk);
    // due in 6 hours with risk 0.9 (too far); due in 3 hours, risk said false at 0.7 (0.3: not).
    await ticket(t, mine, { sla: sla(false), sla_breach_at: inHours(0.5) });
    await ticket(t, mine, { sla: sla(false), sla_breach_at: inHours(3), custom: risk(true, 0.8) });
    await ticket(t, mine, { sla: sla(false), sla_breach_at: inHours(3), custom: risk(true, 0.5) });
    await ticket(t, mine, { sla: sla(false), sla_breach_at: inHours(3.5), custom: risk(true, null) });
    await ticket(t, mine, { sla: sla(false), sla_breach_at: inHours(6), custom: risk(true, 0.9) });
    await ticket(t, mine, { sla: sla(false), sla_breach_at: inHours(3), custom: risk(false, 0.7) });
    // Unassigned: 2 older than a day (one private), 1 new, 1 old but closed, 1 old but spam.
    await ticket(t, {}, { created_at: inHours(-30) });
    await ticket(t, { team_id: team }, { created_at: inHours(-30) });
    await ticket(t, {}, {});
    await ticket(t, { status: 'closed' }, { created_at: inHours(-30) });
    await ticket(t, {}, { created_at: inHours(-30), spam: true });
    // Waiting for the agent: the customer wrote last (1); the agent answered after (not); another's (not).
    const last = inHours(-2);
    await ticket(t, { ...mine, contact_id: contact.id }, { last_customer_message_at: last, last_message_at: last });
    await ticket(
      t,
      { ...mine, contact_id: contact.id },
      { last_customer_message_at: inHours(-3), last_message_at: inHours(-1) },
    );
    await ticket(
      t,
      { assignee_id: insider.userId, contact_id: contact.id },
      { last_customer_message_at: last, last_message_at: last },
    );
  });

  it('counts what the person sees, keeping only tips above 0', async () => {
    expect(await counts(agent)).toEqual({
      sla_breached: 1,
      sla_due_soon: 1,
      sla_at_risk: 2,
      unassigned_old: 1,
      mine_waiting: 1,
    });
    // The private team's member and the owner see its tickets too; each counts their own waiting tickets.
    expect(await counts(insider)).toEqual({
      sla_breached: 2,
      sla_due_soon: 1,
      sla_at_risk: 2,
      unassigned_old: 2,
      mine_waiting: 1,
    });
    expect(await counts(t)).toEqual({ sla_breached: 2, sla_due_soon: 1, sla_at_risk: 2, unassigned_old: 2 });
  });

  it('gives each tip its text, a prompt the panel can send and a severity', async () => {
    const tips = await getTips(svc.rt.deps, await contextOf(svc, agent));
    expect(tips.map((x) => x.key)).toEqual([
      'sla_breached',
      'sla_due_soon',
      'sla_at_risk',
      'unassigned_old',
      'mine_waiting',
    ]);
    expect(tips[0]).toEqual({
      key: 'sla_breached',
      count: 1,
      severity: 'critical',
      text: '1 open ticket has breached the SLA.',
      prompt: 'Show me the open tickets that breached their SLA, most urgent first.',
    });
    for (const tip of tips) {
      expect(tip.prompt.length).toBeGreaterThan(10);
      expect(['info', 'warning', 'critical']).toContain(tip.severity);
    }
  });

  it('answers no tips in a quiet workspace, and none of another workspace’s', async () => {
    const quiet = await newTenant(svc.api);
    await makeTicket(svc.api, quiet, { subject: 'Fresh and fine' });
    expect(await getTips(svc.rt.deps, await contextOf(svc, quiet))).toEqual([]);
  });
});
