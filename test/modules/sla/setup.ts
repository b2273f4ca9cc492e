// The setup of the SLA tests (sla.test.ts, sla-changes-breaches.test.ts): a service without job
// workers on a database of its own, and the helpers that make policies and tickets. Each test
// file calls slaSuite() at its top level and gets its own service (the files share worker
// processes, so nothing here lives at module level).

import { afterAll, beforeAll } from 'vitest';
import type { Ticket } from '../../support/api-types.js';
import { makeTicket } from '../../support/builders.js';
import { type Service, startService, type Tenant } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';
import { makeSlaPolicy } from '../../support/sla.js';

export const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const MIN = 60_000;

/** One file's service and the helpers that use it; registers the file's hooks. */
export function slaSuite() {
  let svc: Service;
  let own: OwnDatabase;
  beforeAll(async () => {
    // A database of its own on PostgreSQL: another file's job workers must not sweep these tickets.
    own = await ownDatabase('sla');
    svc = await startService(own.env, { jobs: false });
  });
  afterAll(async () => {
    await svc?.stop();
    await own?.drop();
  });

  const policy = (t: Tenant, body: Record<string, unknown>) => makeSlaPolicy(svc.api, t, body);

  /** A ticket in a workspace with SLA policies: these tests make tickets that a policy applies to. */
  const ticket = (t: Tenant, body: Record<string, unknown> = {}) =>
    makeTicket(svc.api, t, body) as Promise<Ticket & { sla: NonNullable<Ticket['sla']> }>;

  const getTicket = async (t: Tenant, id: string) => (await svc.api.get(`/v1/tickets/${id}`, t.as)).body;

  return {
    get svc() {
      return svc;
    },
    policy,
    ticket,
    getTicket,
  };
}
