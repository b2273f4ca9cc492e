// Webhook deliveries, part 2 (part 1: delivery.test.ts, setup in delivery-setup.ts): what an
// endpoint receives, never twice and never lost, endpoint health, a restart between two attempts.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../../../src/platform/events/outbox.js';
import { verifyWebhook } from '../../../src/webhooks.js';
import { addMember, eventsAfterOf, latestSeqOf, newTenant, type Service, unique } from '../../support/helpers.js';
import { ownDatabase } from '../../support/own-database.js';
import { deliverySuite, FAST, sleep, startWith, waitFor } from './delivery-setup.js';

const suite = deliverySuite();
const { rx, hook, deliveriesOf, newTeam } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('what an endpoint receives', () => {
  it('private-team events only when granted the team, in full; nothing otherwise', async () => {
    const t = await newTenant(svc.api);
    const secret = await newTeam(t, { private: true });
    const open = await newTeam(t);
    const granted = await hook(t, { events: ['ticket.created'], team_ids: [secret.id] });
    const other = await hook(t, { events: ['ticket.created'] });
    const hidden = await svc.api.post(
      '/v1/tickets',
      { subject: 'Private', body_html: '<p>x</p>', team_id: secret.id },
      t.as,
    );
    expect(hidden.status).toBe(201);
    const visible = await svc.api.post(
      '/v1/tickets',
      { subject: 'Open', body_html: '<p>y</p>', team_id: open.id },
      t.as,
    );
    expect(visible.status).toBe(201);
    await waitFor('both to the granted endpoint', async () => rx.at(granted.path).length === 2);
    await waitFor('one to the other', async () => rx.at(other.path).length === 1);
    await sleep(1500); // longer than the sweep's grace: nothing more comes
    const subjects = (path: string) => rx.at(path).map((r) => r.body.data.ticket.subject);
    expect(subjects(granted.path).sort()).toEqual(['Open', 'Private']);
    expect(subjects(other.path)).toEqual(['Open']);
    expect(rx.at(granted.path).find((r) => r.body.data.ticket.subject === 'Private')!.body).not.toHaveProperty(
      'team_id',
    );
    expect(JSON.stringify(rx.at(other.path))).not.toContain('event.hidden');
    expect(await deliveriesOf(t, other.id)).toHaveLength(1);
  });

  it('subscribed types only, and no personal events', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t, { events: ['team.updated'] });
    const star = await hook(t, { events: ['*'] });
    const team = await newTeam(t);
    await svc.api.patch(`/v1/teams/${team.id}`, { name: unique('Renamed') }, t.as);
    const view = await svc.api.post('/v1/views', { name: unique('Mine'), shared: false, filters: {} }, t.as);
    expect(view.status).toBe(201);
    const typesAt = (path: string) =>
      rx
        .at(path)
        .map((r) => r.body.type)
        .filter((type) => !type.startsWith('webhook.'));
    await waitFor('team.updated', async () => rx.at(h.path).length === 1);
    await waitFor('team.created and team.updated', async () => typesAt(star.path).length === 2);
    await sleep(1500);
    expect(rx.at(h.path).map((r) => r.body.type)).toEqual(['team.updated']);
    // The personal view's event (view.created for its owner only) reaches no webhook.
    expect(typesAt(star.path).sort()).toEqual(['team.created', 'team.updated']);
  });

  it('enabled: false pauses an endpoint; switched back on, its pending deliveries go out', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    // Every attempt hangs until the endpoint is switched back on: a retry due 300 ms after the
    // first may go out before the pause lands (on busy cores), and it must fail too.
    rx.plans.set(h.path, Array(6).fill('hang'));
    await newTeam(t); // hangs, then pending with a retry due
    await waitFor('a pending retry', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x !== undefined && x.attempts >= 1 && x.status === 'pending';
    });
    expect((await svc.api.patch(`/v1/webhooks/${h.id}`, { enabled: false }, t.as)).status).toBe(200);
    await newTeam(t); // while paused: no delivery at all
    // An attempt under way when the pause landed ends by its timeout (1.5 s); then nothing moves.
    await sleep(2000);
    const paused = await deliveriesOf(t, h.id);
    expect(paused).toHaveLength(1);
    expect(paused[0].status).toBe('pending');
    const tried = paused[0].attempts as number;
    expect(rx.at(h.path)).toHaveLength(tried);
    await sleep(1500);
    expect((await deliveriesOf(t, h.id))[0]).toMatchObject({ status: 'pending', attempts: tried });
    expect(rx.at(h.path)).toHaveLength(tried);

    rx.plans.set(h.path, []);
    expect((await svc.api.patch(`/v1/webhooks/${h.id}`, { enabled: true }, t.as)).status).toBe(200);
    const d = await waitFor('the pending delivery', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.status === 'succeeded' ? x : null;
    });
    expect(d.attempts).toBe(tried + 1);
    expect(rx.at(h.path)).toHaveLength(tried + 1);
    // The event of the paused time never goes out, not even from the sweep after resuming.
    await sleep(1500);
    expect(await deliveriesOf(t, h.id)).toHaveLength(1);
    expect(rx.at(h.path)).toHaveLength(tried + 1);
  });
});

describe('never twice, never lost', () => {
  it('an event the bus repeats (or a second process receives) is delivered once', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    const since = await latestSeqOf(svc, t);
    await newTeam(t);
    await waitFor('the delivery', async () => rx.at(h.path).length === 1);
    const rows = await svc.rt.deps.database.db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('seq', '>', since)
      .execute();
    const { rowToEnvelope } = await import('../../../src/platform/events/publisher.js');
    const envelopes = rows.map(rowToEnvelope);
    await svc.rt.deps.bus.publish(envelopes);
    await svc.rt.deps.bus.publish(envelopes);
    expect(await svc.rt.webhooks!.dispatcher.dispatch(envelopes)).toBe(0);
    await sleep(1500);
    expect(rx.at(h.path)).toHaveLength(1);
    expect(await deliveriesOf(t, h.id)).toHaveLength(1);
  });

  it('an event committed but never published (the process died) is found by the sweep', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    const team = await newTeam(t);
    await waitFor('team.created', async () => rx.at(h.path).length === 1);
    // An event written by a transaction whose process never reached the bus.
    const [lost] = await svc.rt.deps.database.db
      .transaction()
      .execute((trx) =>
        appendEvents(trx, t.workspaceId, [{ type: 'team.created', data: { team: { ...team, name: 'Lost' } } }]),
      );
    const got = await waitFor('the swept event', async () => rx.at(h.path).find((r) => r.body.id === lost!.id));
    expect(got.body.data.team.name).toBe('Lost');
    expect(Date.now() - new Date(lost!.occurred_at).getTime()).toBeGreaterThanOrEqual(1000);
  });

  it('a pending delivery whose job was lost is queued again by the sweep', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    const id = randomUUID();
    const eventId = randomUUID();
    // Written, and the process died before queueing its job: nothing but the sweep knows of it.
    await svc.rt.deps.database.db
      .insertInto('webhook_deliveries')
      .values({
        workspace_id: t.workspaceId,
        id,
        endpoint_id: h.id,
        event_id: eventId,
        event_type: 'team.created',
        payload: JSON.stringify({ id: eventId, type: 'team.created', orphan: true }),
        event_at: new Date(Date.now() - 600_000),
        next_attempt_at: new Date(Date.now() - 600_000),
      })
      .execute();
    const got = await waitFor('the orphan', async () => rx.at(h.path).find((r) => r.body.id === eventId));
    expect(got.headers['svc-event-id']).toBe(eventId);
    const [d] = await waitFor('its record', async () => {
      const list = await deliveriesOf(t, h.id);
      return list[0]?.status === 'succeeded' ? list : null;
    });
    expect(d).toMatchObject({ id, attempts: 1 });
  });
});

describe('health', () => {
  it('an endpoint failing every delivery for 3 days is disabled: webhook.updated, audit, email to admins', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin', 'Ada Admin');
    const agent = await addMember(svc, t, 'agent', 'Arno Agent');
    const h = await hook(t);
    const watcher = await hook(t, { events: ['webhook.updated'] });
    rx.plans.set(h.path, [500, 500, 500]);
    // Failing since four days ago (the clock of the rule, not of this test).
    await svc.rt.deps.database.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 4 * 86_400_000) })
      .where('id', '=', h.id)
      .execute();
    const since = await latestSeqOf(svc, t);
    await newTeam(t);
    const off = await waitFor('the endpoint disabled', async () => {
      const r = await svc.api.get(`/v1/webhooks/${h.id}`, t.as);
      return r.body.enabled === false ? r.body : null;
    });
    expect(off.enabled).toBe(false);
    const events = await eventsAfterOf(svc, t, since);
    const updated = events.find((e) => e.type === 'webhook.updated');
    expect(updated.data).toEqual({ webhook: off, changes: ['enabled'] });
    const audit = await svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('action', '=', 'webhook.disabled')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_type: 'system', entity_type: 'webhook', entity_id: h.id });
    // The other endpoint heard of it.
    await waitFor('webhook.updated to the watcher', async () =>
      rx.at(watcher.path).some((r) => r.body.type === 'webhook.updated' && r.body.data.webhook.id === h.id),
    );
    // One email to each admin and owner (SMTP_URL unset: the mailer logs recipient and subject).
    const mails = await waitFor('the emails', async () => {
      const m = svc.logs.map((l) => JSON.parse(l)).filter((l) => l.mail?.subject?.startsWith('Webhook disabled'));
      return m.length >= 2 ? m : null;
    });
    await sleep(300);
    const to = svc.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.mail?.subject?.startsWith('Webhook disabled'))
      .map((l) => l.mail.to)
      .sort();
    expect(to).toEqual([admin.email, t.owner.email].sort());
    expect(mails[0].mail.subject).toBe('Webhook disabled in Acme Support');
    expect(to).not.toContain(agent.email);
    // Paused: new events create no deliveries for it.
    const before = (await deliveriesOf(t, h.id)).length;
    await newTeam(t);
    await sleep(1200);
    expect(await deliveriesOf(t, h.id)).toHaveLength(before);
  });

  it('a success clears the failing clock', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    await svc.rt.deps.database.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 86_400_000) })
      .where('id', '=', h.id)
      .execute();
    await newTeam(t);
    await waitFor('success', async () => (await deliveriesOf(t, h.id))[0]?.status === 'succeeded');
    const row = await waitFor('the clock cleared', async () => {
      const r = await svc.rt.deps.database.db
        .selectFrom('webhook_endpoints')
        .select(['failing_since', 'enabled'])
        .where('id', '=', h.id)
        .executeTakeFirstOrThrow();
      return r.failing_since === null ? r : null;
    });
    expect(row.enabled).toBe(true);
  });
});

describe('a restart between two attempts', () => {
  it('resumes the pending delivery in the new process', async () => {
    // A database that outlives the first process: files for the embedded database, or a
    // PostgreSQL database of this test's own.
    const db = await ownDatabase('webhooks_restart');
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-webhooks-restart-'));
    const env = { ...db.env, DATABASE_IN_MEMORY: 'false' };
    const slow = { ...FAST, retryDelaysMs: Array(7).fill(2000) };
    let first: Service | null = await startWith(env, slow, dataDir);
    let second: Service | null = null;
    try {
      const t = await newTenant(first.api);
      const h = await hook(t, {}, first.api);
      rx.plans.set(h.path, [500, 200]);
      await newTeam(t, {}, first.api);
      await waitFor('the first attempt recorded', async () => {
        const [x] = await deliveriesOf(t, h.id, first!.api);
        return x?.attempts === 1 && x.status === 'pending';
      });
      await first.stop();
      first = null;
      expect(rx.at(h.path)).toHaveLength(1);

      second = await startWith(env, slow, dataDir);
      // Tokens and ids survive (same database, same SECRET_KEY); the new process finishes it.
      const d = await waitFor('the second attempt', async () => {
        const [x] = await deliveriesOf(t, h.id, second!.api);
        return x?.status === 'succeeded' ? x : null;
      });
      expect(d).toMatchObject({ attempts: 2, response_status: 200 });
      const reqs = rx.at(h.path);
      expect(reqs).toHaveLength(2);
      expect(reqs[1]!.headers['svc-event-id']).toBe(reqs[0]!.headers['svc-event-id']);
      expect(verifyWebhook(h.secret, reqs[1]!.headers['svc-signature'] as string, reqs[1]!.raw)).toBe(true);
    } finally {
      await first?.stop();
      await second?.stop();
      await db.drop();
    }
  });
});
