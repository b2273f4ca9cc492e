// The setup of the automation engine tests (engine.test.ts, engine-actions.test.ts): a service
// without job workers whose AI seams a test plugs (and each test's end unplugs), and the helpers
// that make automations, tickets, labels and mailboxes. Each test file calls engineSuite() at its
// top level and gets its own service (the files share worker processes, so nothing here lives at
// module level).

import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { DecisionEngine, TriageHandler } from '../../../src/modules/automations/decide.js';
import { makeTicket } from '../../support/builders.js';
import { type Service, startService, type Tenant, unique } from '../../support/helpers.js';

export type Body = Record<string, unknown>;
export const tagNames = (tk: any) => tk.tags.map((g: any) => g.name).sort();

/** One file's service and the helpers that use it; registers the file's hooks. */
export function engineSuite() {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
  });
  afterAll(async () => svc?.stop());
  // The AI seams are fields of the service's Deps: a test plugs in an engine and takes it out again.
  const setDecisionEngine = (e: DecisionEngine | null) => {
    svc.rt.deps.ai.decide = e;
  };
  const setTriageHandler = (h: TriageHandler | null) => {
    svc.rt.deps.ai.triage = h;
  };
  afterEach(() => {
    setDecisionEngine(null);
    setTriageHandler(null);
  });

  async function automation(t: Tenant, body: Body) {
    const r = await svc.api.post('/v1/automations', { name: unique('Auto'), trigger: 'ticket_created', ...body }, t.as);
    expect(r.status, r.text).toBe(201);
    return r.body;
  }

  const ticket = (t: Tenant, body: Body = {}) =>
    makeTicket(svc.api, t, { subject: 'Hello', body_html: '<p>Hi there</p>', ...body });

  const getTicket = async (t: Tenant, id: string) => (await svc.api.get(`/v1/tickets/${id}`, t.as)).body;
  const activities = async (t: Tenant, id: string) =>
    (await svc.api.get(`/v1/tickets/${id}/activities`, t.as)).body.data;
  const messages = async (t: Tenant, id: string) => (await svc.api.get(`/v1/tickets/${id}/messages`, t.as)).body.data;
  const runCount = async (t: Tenant, id: string) => (await svc.api.get(`/v1/automations/${id}`, t.as)).body.run_count;

  async function labels(t: Tenant, ...names: string[]) {
    for (const name of names) expect((await svc.api.post('/v1/tags', { name }, t.as)).status).toBe(201);
  }

  async function mailbox(t: Tenant) {
    const r = await svc.api.post('/v1/mailboxes', { name: 'Support', email: `${unique('support')}@acme.test` }, t.as);
    expect(r.status, r.text).toBe(201);
    return r.body;
  }

  return {
    get svc() {
      return svc;
    },
    setDecisionEngine,
    setTriageHandler,
    automation,
    ticket,
    getTicket,
    activities,
    messages,
    runCount,
    labels,
    mailbox,
  };
}
