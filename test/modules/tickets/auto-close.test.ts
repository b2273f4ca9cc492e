// Auto-close of solved tickets: after the workspace's auto_close_days (default 4, 0 =
// never) without customer activity a solved ticket becomes closed, with a status_changed activity
// by the system and ticket.updated; required fields are not enforced. The sweep is called
// directly with a chosen "now".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autoCloseSolved } from '../../../src/modules/tickets/auto-close.js';
import { makeTicket } from '../../support/builders.js';
import {
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

let svc: Service;
let own: OwnDatabase;
beforeAll(async () => {
  // A database of its own on PostgreSQL: the auto-close job (every ten minutes, on whichever
  // service of the database runs jobs) would close these tickets, solved days ago, by the real
  // clock before the sweep below counts them.
  own = await ownDatabase('auto_close');
  svc = await startService(own.env, { jobs: false });
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

const db = () => svc.rt.deps.database.db;
const DAY = 86_400_000;
const NOW = new Date(Date.now() + 1000);
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

/** A solved ticket (made through the API, then dated in the database). */
async function solved(
  t: Tenant,
  set: { solved_at: Date; last_customer_message_at?: Date | null; status?: string; deleted_at?: Date },
): Promise<string> {
  const { id } = await makeTicket(svc.api, t, { subject: 'Thanks, all good' });
  await db()
    .updateTable('tickets')
    .set({ status: 'solved', created_at: ago(30), ...set })
    .where('workspace_id', '=', t.workspaceId)
    .where('id', '=', id)
    .execute();
  return id;
}

const statusOf = async (t: Tenant, id: string) => (await svc.api.get(`/v1/tickets/${id}`, t.as)).body.status;

describe('auto-close', () => {
  it('closes solved tickets past 4 days by default, keeps solved_at, records the system and ticket.updated', async () => {
    const t = await newTenant(svc.api);
    const old = await solved(t, { solved_at: ago(4.1) });
    const recent = await solved(t, { solved_at: ago(3.9) });
    const customerWrote = await solved(t, { solved_at: ago(6), last_customer_message_at: ago(2) });
    const customerLongAgo = await solved(t, { solved_at: ago(6), last_customer_message_at: ago(7) });
    const open = await solved(t, { status: 'open', solved_at: ago(10) });
    const deleted = await solved(t, { solved_at: ago(10), deleted_at: ago(1) });
    const before = (await svc.api.get(`/v1/tickets/${old}`, t.as)).body;
    const seq = await latestSeqOf(svc, t);

    expect(await autoCloseSolved(svc.rt.deps, NOW, { workspaceIds: [t.workspaceId] })).toBe(2);

    expect(await statusOf(t, old)).toBe('closed');
    expect(await statusOf(t, customerLongAgo)).toBe('closed');
    expect(await statusOf(t, recent)).toBe('solved');
    expect(await statusOf(t, customerWrote)).toBe('solved');
    expect(await statusOf(t, open)).toBe('open');
    const del = await db().selectFrom('tickets').select('status').where('id', '=', deleted).executeTakeFirstOrThrow();
    expect(del.status).toBe('solved');

    const after = (await svc.api.get(`/v1/tickets/${old}`, t.as)).body;
    expect(after.solved_at).toBe(before.solved_at);
    const acts = (await svc.api.get(`/v1/tickets/${old}/activities`, t.as)).body.data;
    expect(acts.at(-1)).toMatchObject({
      type: 'status_changed',
      data: { from: 'solved', to: 'closed', reason: 'auto_close' },
      actor: { type: 'system', user: null, api_key_id: null, automation_id: null },
    });
    const events = await eventsAfterOf(svc, t, seq);
    const updated = events.filter((e) => e.type === 'ticket.updated');
    expect(updated.map((e) => e.data.ticket.id).sort()).toEqual([old, customerLongAgo].sort());
    for (const e of updated) {
      expect(e.data.changes).toEqual(['status']);
      expect(e.data.ticket.status).toBe('closed');
    }
    expect(events.filter((e) => e.type === 'activity.created')).toHaveLength(2);

    // A second run finds nothing more to do here.
    const seq2 = await latestSeqOf(svc, t);
    expect(await autoCloseSolved(svc.rt.deps, NOW, { workspaceIds: [t.workspaceId] })).toBe(0);
    expect(await eventsAfterOf(svc, t, seq2)).toEqual([]);
  });

  it('follows auto_close_days; 0 never closes', async () => {
    const ten = await newTenant(svc.api);
    expect((await svc.api.patch('/v1/workspace', { settings: { auto_close_days: 10 } }, ten.as)).status).toBe(200);
    const nine = await solved(ten, { solved_at: ago(9) });
    const eleven = await solved(ten, { solved_at: ago(11) });

    const never = await newTenant(svc.api);
    const off = await svc.api.patch('/v1/workspace', { settings: { auto_close_days: 0 } }, never.as);
    expect(off.status).toBe(200);
    expect(off.body.settings.auto_close_days).toBe(0);
    const ancient = await solved(never, { solved_at: ago(400) });

    expect(await autoCloseSolved(svc.rt.deps, NOW, { workspaceIds: [ten.workspaceId, never.workspaceId] })).toBe(1);
    expect(await statusOf(ten, nine)).toBe('solved');
    expect(await statusOf(ten, eleven)).toBe('closed');
    expect(await statusOf(never, ancient)).toBe('solved');
  });

  it('works through the candidates in batches', async () => {
    const t = await newTenant(svc.api);
    const ids = [
      await solved(t, { solved_at: ago(7) }),
      await solved(t, { solved_at: ago(6) }),
      await solved(t, { solved_at: ago(5) }),
    ];
    expect(await autoCloseSolved(svc.rt.deps, NOW, { workspaceIds: [t.workspaceId], batch: 1, maxBatches: 2 })).toBe(2);
    expect(await statusOf(t, ids[2]!)).toBe('solved'); // the newest solve waits for the next run
    expect(await autoCloseSolved(svc.rt.deps, NOW, { workspaceIds: [t.workspaceId], batch: 1 })).toBe(1);
    for (const id of ids) expect(await statusOf(t, id)).toBe('closed');
  });

  it('does not enforce required fields', async () => {
    const t = await newTenant(svc.api);
    const f = await svc.api.post(
      '/v1/custom-fields',
      { entity: 'ticket', type: 'text', name: 'Root cause', required_on_solve: true },
      t.as,
    );
    expect(f.status, f.text).toBe(201);
    const id = await solved(t, { solved_at: ago(5) });
    // A person could not close it without the field.
    const byHand = await svc.api.patch(`/v1/tickets/${id}`, { status: 'closed' }, t.as);
    expect(byHand.status).toBe(422);
    expect(byHand.body.code).toBe('field_required');

    expect(await autoCloseSolved(svc.rt.deps, NOW, { workspaceIds: [t.workspaceId] })).toBe(1);
    const after = (await svc.api.get(`/v1/tickets/${id}`, t.as)).body;
    expect(after.status).toBe('closed');
    expect(after.fields).toEqual({});
  });

  it('auto_close_days is an integer from 0 to 365', async () => {
    const t = await newTenant(svc.api);
    for (const bad of [366, -1, 1.5, '4']) {
      const r = await svc.api.patch('/v1/workspace', { settings: { auto_close_days: bad } }, t.as);
      expect(r.status).toBe(422);
      expect(r.body.errors.map((e: { location: string }) => e.location)).toContain('body.settings.auto_close_days');
    }
    expect((await svc.api.get('/v1/workspace', t.as)).body.settings.auto_close_days).toBe(4);
    const ok = await svc.api.patch('/v1/workspace', { settings: { auto_close_days: 365 } }, t.as);
    expect(ok.body.settings.auto_close_days).toBe(365);
  });
});
