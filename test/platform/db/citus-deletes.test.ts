// Deletes that used to lean on ON DELETE SET NULL / CASCADE across tenant and global tables
// (0054_citus_keys.sql: Citus accepts neither on these keys) clear the references themselves:
// what pointed at the deleted row stays, without the reference, as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, newTenant, type Service, startService, type Tenant, unique } from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const ticket = async (t: Tenant, body: Record<string, unknown>) => {
  const r = await svc.api.post('/v1/tickets', { subject: unique('s'), ...body }, t.as);
  expect(r.status).toBe(201);
  return r.body;
};
const ticketOf = async (t: Tenant, id: string) => (await svc.api.get(`/v1/tickets/${id}`, t.as)).body;

describe('deleting what other rows point at', () => {
  it('a team: its tickets and mailboxes stay, without a team', async () => {
    const t = await newTenant(svc.api);
    const team = (await svc.api.post('/v1/teams', { name: 'Sales' }, t.as)).body;
    const tk = await ticket(t, { team_id: team.id });
    const mb = (
      await svc.api.post('/v1/mailboxes', { name: 'Sales', email: `${unique('s')}@acme.test`, team_id: team.id }, t.as)
    ).body;
    expect(tk.team_id).toBe(team.id);
    expect((await svc.api.delete(`/v1/teams/${team.id}`, t.as)).status).toBe(204);
    expect((await ticketOf(t, tk.id)).team_id).toBeNull();
    expect((await svc.api.get(`/v1/mailboxes/${mb.id}`, t.as)).body.team_id).toBeNull();
  });

  it('a contact: its tickets stay, without a contact', async () => {
    const t = await newTenant(svc.api);
    const c = (await svc.api.post('/v1/contacts', { email: `${unique('c')}@example.com` }, t.as)).body;
    const tk = await ticket(t, { contact_id: c.id });
    expect(tk.contact.id).toBe(c.id);
    expect((await svc.api.delete(`/v1/contacts/${c.id}`, t.as)).status).toBe(204);
    const after = await ticketOf(t, tk.id);
    expect(after.id).toBe(tk.id);
    expect(after.contact).toBeNull();
  });

  it('a member: the tickets assigned to them stay, unassigned', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const tk = await ticket(t, { assignee_id: agent.userId });
    expect(tk.assignee.id).toBe(agent.userId);
    expect((await svc.api.delete(`/v1/members/${agent.userId}`, t.as)).status).toBe(204);
    expect((await ticketOf(t, tk.id)).assignee).toBeNull();
  });

  it('a company: its contacts stay, without a company', async () => {
    const t = await newTenant(svc.api);
    const co = (await svc.api.post('/v1/companies', { name: 'Acme', domain: `${unique('d')}.test` }, t.as)).body;
    const c = (await svc.api.post('/v1/contacts', { email: `${unique('c')}@example.com`, company_id: co.id }, t.as))
      .body;
    expect(c.company.id).toBe(co.id);
    expect((await svc.api.delete(`/v1/companies/${co.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, t.as)).body.company).toBeNull();
  });

  it('a workspace: everything that pointed at each other goes with it, another workspace keeps its own', async () => {
    const db = svc.rt.deps.database.db;
    const made = async (name: string) => {
      const t = await newTenant(svc.api, name);
      const team = (await svc.api.post('/v1/teams', { name: 'Sales' }, t.as)).body;
      const agent = await addMember(svc, t, 'agent');
      const co = (await svc.api.post('/v1/companies', { name: 'Acme', domain: `${unique('d')}.test` }, t.as)).body;
      const c = (await svc.api.post('/v1/contacts', { email: `${unique('c')}@example.com`, company_id: co.id }, t.as))
        .body;
      const mb = (
        await svc.api.post('/v1/mailboxes', { name: 'M', email: `${unique('m')}@acme.test`, team_id: team.id }, t.as)
      ).body;
      await ticket(t, { team_id: team.id, contact_id: c.id, assignee_id: agent.userId });
      return { t, mb };
    };
    const doomed = await made('Doomed Citus');
    const kept = await made('Kept Citus');
    const tickets = async (workspaceId: string) =>
      (await db.selectFrom('tickets').select('id').where('workspace_id', '=', workspaceId).execute()).length;
    await db.updateTable('users').set({ mfa_enabled: true }).where('id', '=', doomed.t.owner.userId).execute();
    const r = await svc.api.req('DELETE', '/v1/workspace', { ...doomed.t.as, body: { confirm_name: 'Doomed Citus' } });
    expect(r.status).toBe(204);
    expect(await tickets(doomed.t.workspaceId)).toBe(0);
    expect(
      await db
        .selectFrom('mailbox_addresses')
        .select('address')
        .where('address', '=', doomed.mb.forwarding_address)
        .execute(),
    ).toEqual([]);
    expect(await tickets(kept.t.workspaceId)).toBe(1);
    expect((await svc.api.get(`/v1/mailboxes/${kept.mb.id}`, kept.t.as)).status).toBe(200);
  });

  it('a mailbox: its forwarding address stops routing; the other mailbox keeps its own', async () => {
    const t = await newTenant(svc.api);
    const gone = (await svc.api.post('/v1/mailboxes', { name: 'A', email: `${unique('a')}@acme.test` }, t.as)).body;
    const kept = (await svc.api.post('/v1/mailboxes', { name: 'B', email: `${unique('b')}@acme.test` }, t.as)).body;
    const routed = async (address: string) =>
      (
        await svc.rt.deps.database.db
          .selectFrom('mailbox_addresses')
          .select('mailbox_id')
          .where('address', '=', address)
          .executeTakeFirst()
      )?.mailbox_id ?? null;
    expect(await routed(gone.forwarding_address)).toBe(gone.id);
    expect((await svc.api.delete(`/v1/mailboxes/${gone.id}`, t.as)).status).toBe(204);
    expect(await routed(gone.forwarding_address)).toBeNull();
    expect(await routed(kept.forwarding_address)).toBe(kept.id);
  });
});
