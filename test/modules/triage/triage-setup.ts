// Setup shared by the AI triage tests: a service on a stand-in provider (OpenAI's wire format
// unless said), with jobs; the model's answer as the triage schema asks it; workspace data.
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import {
  type AnthropicStandIn,
  type OpenAiStandIn,
  startAnthropicStandIn,
  startOpenAiStandIn,
} from '../../support/ai-standin/index.js';
import { eventsAfterOf, type Service, startService, type Tenant } from '../../support/helpers.js';

/** A complete answer of the triage schema; `over` replaces keys. */
export const triageAnswer = (over: Record<string, unknown> = {}) => ({
  priority: 'high',
  severity: 'sev2',
  category: 'billing',
  type_label: 'Bug',
  label: 'payments',
  sentiment: 'frustrated',
  language: 'en',
  spam_probability: 0.1,
  needs_human: true,
  team_id: '',
  sla_risk: false,
  summary: 'The customer was charged twice.',
  ...over,
});

/** A team, the exclusive group named Type with Bug and Question, and the label payments. */
export async function workspaceData(svc: Service, t: Tenant) {
  const team = await svc.api.post('/v1/teams', { name: 'Billing' }, t.as);
  expect(team.status, team.text).toBe(201);
  const group = await svc.api.post('/v1/tag-groups', { name: 'Type', exclusive: true }, t.as);
  expect(group.status, group.text).toBe(201);
  for (const name of ['Bug', 'Question']) {
    const r = await svc.api.post('/v1/tags', { name, group_id: group.body.id }, t.as);
    expect(r.status, r.text).toBe(201);
  }
  expect((await svc.api.post('/v1/tags', { name: 'payments' }, t.as)).status).toBe(201);
  return { teamId: team.body.id as string };
}

export const settings = async (svc: Service, t: Tenant, body: Record<string, unknown>) => {
  const r = await svc.api.patch('/v1/triage', body, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

export const ticketOf = async (svc: Service, t: Tenant, id: string) => {
  const r = await svc.api.get(`/v1/tickets/${id}`, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

export const activitiesOf = async (svc: Service, t: Tenant, id: string) => {
  const r = await svc.api.get(`/v1/tickets/${id}/activities`, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body.data as any[];
};

/** ticket.updated events of a ticket after `since`. */
export async function updatesOf(svc: Service, t: Tenant, id: string, since: number) {
  return (await eventsAfterOf(svc, t, since)).filter((e) => e.type === 'ticket.updated' && e.data.ticket.id === id);
}

const KEY = 'sk-standin-triage-0000';

/** One file's service on a stand-in of `vendor` (jobs on unless said); every queued answer must be used. */
export function triageSuite(vendor: 'openai' | 'anthropic', opts: { jobs?: boolean } = {}) {
  let ai: OpenAiStandIn | AnthropicStandIn;
  let svc: Service;
  beforeAll(async () => {
    ai = vendor === 'openai' ? await startOpenAiStandIn({ keys: [KEY] }) : await startAnthropicStandIn({ keys: [KEY] });
    svc = await startService(
      { AI_PROVIDER: vendor, AI_BASE_URL: ai.url, AI_API_KEY: KEY, AI_MODEL: 'standin-model' },
      { ...(opts.jobs === false ? { jobs: false } : {}), ai: { timeoutMs: 5000, maxRetries: 0 } },
    );
  });
  afterAll(async () => {
    await svc?.stop();
    await ai?.stop();
  });
  beforeEach(() => ai.reset());
  afterEach(() => expect(ai.pending()).toBe(0));
  return {
    get svc() {
      return svc;
    },
    get ai() {
      return ai;
    },
  };
}
