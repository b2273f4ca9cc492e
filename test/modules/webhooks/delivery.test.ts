// Webhook deliveries against a real HTTP receiver on loopback (WEBHOOK_ALLOW_PRIVATE=true, a
// shortened retry schedule and timeout): signatures that the exported verifyWebhook accepts,
// 500 then 200, a receiver that hangs past the timeout or closes the connection, 8 attempts then
// failed, the test route, delivery records and redelivery, private-team events, pausing, the
// bus's repeats, lost events and lost jobs, health (3 days of failures), and a process restart
// between two attempts.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../src/webhooks.js';
import { addMember, eventsAfterOf, latestSeqOf, newTenant, type Service, type Tenant } from '../../support/helpers.js';
import { deliverySuite, sleep, waitFor } from './delivery-setup.js';

const suite = deliverySuite();
const { rx, hook, deliveriesOf, newTeam } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('a delivery', () => {
  it('is the envelope without topics, signed so that verifyWebhook accepts the raw body', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    const since = await latestSeqOf(svc, t);
    const sentFrom = Date.now();
    const team = await newTeam(t);
    const [got] = await waitFor('the delivery', async () => (rx.at(h.path).length > 0 ? rx.at(h.path) : null));
    const [event] = await eventsAfterOf(svc, t, since);
    expect(event.type).toBe('team.created');

    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/^Helpdesk-Webhooks\//);
    expect(got!.headers['svc-event-id']).toBe(event.id);
    expect(got!.headers['svc-event-type']).toBe('team.created');
    const { topics, ...withoutTopics } = event;
    expect(topics).toBeDefined();
    expect(got!.body).toEqual(withoutTopics);
    expect(Object.keys(got!.body).sort()).toEqual(
      ['data', 'id', 'occurred_at', 'seq', 'type', 'visibility', 'workspace_id'].sort(),
    );
    expect(got!.body.data.team.id).toBe(team.id);

    // The secret of the create response verifies the raw bytes; anything else does not.
    const header = got!.headers['svc-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(Math.abs(Number(/t=(\d+)/.exec(header)![1]) - Date.now() / 1000)).toBeLessThan(30);
    expect(verifyWebhook(h.secret, header, got!.raw)).toBe(true);
    expect(verifyWebhook(h.secret, header, got!.raw.toString('utf8'))).toBe(true);
    expect(verifyWebhook(h.secret, header, JSON.stringify({ ...got!.body, seq: 0 }))).toBe(false);
    expect(verifyWebhook(`${h.secret}x`, header, got!.raw)).toBe(false);

    const [d] = await waitFor('the record', async () => {
      const list = await deliveriesOf(t, h.id);
      return list[0]?.status === 'succeeded' ? list : null;
    });
    expect(Object.keys(d).sort()).toEqual(
      [
        'attempts',
        'created_at',
        'duration_ms',
        'error',
        'event_id',
        'event_type',
        'id',
        'next_attempt_at',
        'response_status',
        'status',
      ].sort(),
    );
    expect(d).toMatchObject({
      event_id: event.id,
      event_type: 'team.created',
      status: 'succeeded',
      attempts: 1,
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });
    // The attempt's own time in whole milliseconds: within this test's time so far, and under the
    // 1500 ms timeout (a longer one would have been a timed-out failure).
    expect(Number.isInteger(d.duration_ms)).toBe(true);
    expect(d.duration_ms).toBeLessThanOrEqual(Date.now() - sentFrom);
    expect(d.duration_ms).toBeLessThan(1500);
  });

  it('a 500 then a 200: two attempts, one success', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    rx.plans.set(h.path, [500, 200]);
    await newTeam(t);
    const d = await waitFor('success', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.status === 'succeeded' ? x : null;
    });
    expect(d).toMatchObject({ attempts: 2, response_status: 200, error: null, next_attempt_at: null });
    const reqs = rx.at(h.path);
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.headers['svc-event-id']).toBe(reqs[1]!.headers['svc-event-id']);
    expect(reqs[0]!.raw.equals(reqs[1]!.raw)).toBe(true);
    for (const r of reqs) expect(verifyWebhook(h.secret, r.headers['svc-signature'] as string, r.raw)).toBe(true);
    // The retry waited for the schedule (300 ms here).
    expect(reqs[1]!.at - reqs[0]!.at).toBeGreaterThanOrEqual(250);
  });

  it('a receiver hanging past the timeout is a failure, retried', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    rx.plans.set(h.path, ['hang', 200]);
    const started = Date.now();
    await newTeam(t);
    const failed = await waitFor('the timed-out attempt', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.attempts === 1 && x.status === 'pending' ? x : null;
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(failed.response_status).toBeNull();
    expect(failed.error).toMatch(/timed out after 1500 ms/);
    expect(failed.duration_ms).toBeGreaterThanOrEqual(1400);
    expect(failed.next_attempt_at).not.toBeNull();
    const d = await waitFor('success', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.status === 'succeeded' ? x : null;
    });
    expect(d.attempts).toBe(2);
  });

  it('a receiver closing the connection is a failure, retried', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    rx.plans.set(h.path, ['close', 'close', 200]);
    await newTeam(t);
    const failed = await waitFor('a failed attempt', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.attempts >= 1 && x.status === 'pending' ? x : null;
    });
    expect(failed.response_status).toBeNull();
    expect(failed.error).toMatch(/socket hang up|ECONNRESET/);
    const d = await waitFor('success', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.status === 'succeeded' ? x : null;
    });
    expect(d.attempts).toBe(3);
    expect(rx.at(h.path)).toHaveLength(3);
  });

  it('gives up after 8 attempts; a failed delivery can be sent again', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    rx.plans.set(h.path, Array(8).fill(503));
    await newTeam(t);
    const d = await waitFor('the final failure', async () => {
      const [x] = await deliveriesOf(t, h.id);
      return x?.status === 'failed' ? x : null;
    });
    expect(d).toMatchObject({ attempts: 8, response_status: 503, next_attempt_at: null });
    expect(d.error).toMatch(/503/);
    await sleep(600);
    expect(rx.at(h.path)).toHaveLength(8);

    // Redeliver: a new record, the same event and body.
    const r = await svc.api.post(`/v1/webhooks/${h.id}/deliveries/${d.id}/redeliver`, undefined, t.as);
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ event_id: d.event_id, event_type: 'team.created', status: 'pending', attempts: 0 });
    expect(r.body.id).not.toBe(d.id);
    const again = await waitFor('the redelivery', async () => {
      const list = await deliveriesOf(t, h.id);
      const x = list.find((y) => y.id === r.body.id);
      return x?.status === 'succeeded' ? x : null;
    });
    expect(again.attempts).toBe(1);
    const reqs = rx.at(h.path);
    expect(reqs).toHaveLength(9);
    expect(reqs[8]!.raw.equals(reqs[0]!.raw)).toBe(true);
    expect(reqs[8]!.headers['svc-event-id']).toBe(d.event_id);
    // Newest first: the redelivery, then the original.
    expect((await deliveriesOf(t, h.id)).map((x) => x.id)).toEqual([r.body.id, d.id]);
  });
});

describe('rotating the secret', () => {
  const deliveredAfter = async (t: Tenant, path: string, before: number) => {
    await newTeam(t);
    return waitFor('the delivery', async () => rx.at(path)[before] ?? null);
  };

  it('signs with the new secret and, for the overlap asked for, the old one too; then with the new one only', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    const r = await svc.api.post(`/v1/webhooks/${h.id}/rotate-secret`, { previous_secret_hours: 2 }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const secret: string = r.body.secret;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(h.secret);
    const until = Date.parse(r.body.previous_secret_expires_at);
    expect(Math.abs(until - (Date.now() + 2 * 3_600_000))).toBeLessThan(60_000);
    // The secret is in that answer only; the overlap shows on the endpoint.
    const shown = await svc.api.get(`/v1/webhooks/${h.id}`, t.as);
    expect(shown.body.secret).toBeUndefined();
    expect(shown.body.previous_secret_expires_at).toBe(r.body.previous_secret_expires_at);

    const both = await deliveredAfter(t, h.path, 0);
    const header = both.headers['svc-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(secret, header, both.raw)).toBe(true);
    expect(verifyWebhook(h.secret, header, both.raw)).toBe(true);

    // Rotated again with no overlap (a leaked secret): the new one alone; neither before verifies.
    const again = await svc.api.post(`/v1/webhooks/${h.id}/rotate-secret`, { previous_secret_hours: 0 }, t.as);
    expect(again.status, again.text).toBe(200);
    expect(again.body.previous_secret_expires_at).toBeNull();
    const one = await deliveredAfter(t, h.path, 1);
    const single = one.headers['svc-signature'] as string;
    expect(single).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(again.body.secret, single, one.raw)).toBe(true);
    expect(verifyWebhook(secret, single, one.raw)).toBe(false);
    expect(verifyWebhook(h.secret, single, one.raw)).toBe(false);

    // An empty body: the default overlap of 24 hours. The audit log has each rotation.
    const plain = await svc.api.post(`/v1/webhooks/${h.id}/rotate-secret`, {}, t.as);
    expect(plain.status, plain.text).toBe(200);
    expect(Math.abs(Date.parse(plain.body.previous_secret_expires_at) - (Date.now() + 24 * 3_600_000))).toBeLessThan(
      60_000,
    );
    const audit = await svc.api.get('/v1/audit-logs?action=webhook.secret_rotated', t.as);
    expect(audit.status, audit.text).toBe(200);
    expect(audit.body.data).toHaveLength(3);
    expect(JSON.stringify(audit.body)).not.toContain('whsec_');
  });

  it('refuses bad input, other people and other workspaces, and changes nothing then', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    for (const body of [
      { previous_secret_hours: -1 },
      { previous_secret_hours: 169 },
      { previous_secret_hours: 1.5 },
      { other: 1 },
    ]) {
      const r = await svc.api.post(`/v1/webhooks/${h.id}/rotate-secret`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
    }
    const agent = await addMember(svc, t, 'agent', 'Agent');
    expect((await svc.api.post(`/v1/webhooks/${h.id}/rotate-secret`, {}, agent.as)).status).toBe(403);
    const other = await newTenant(svc.api);
    const theirs = await svc.api.post(`/v1/webhooks/${h.id}/rotate-secret`, {}, other.as);
    expect(theirs.status).toBe(404);
    expect((await svc.api.get(`/v1/webhooks/${h.id}`, t.as)).body.previous_secret_expires_at).toBeNull();
    // The first secret still signs alone.
    const got = await deliveredAfter(t, h.path, 0);
    expect(got.headers['svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(h.secret, got.headers['svc-signature'] as string, got.raw)).toBe(true);
  });
});

describe('the test route, delivery records and redelivery', () => {
  it('POST /test sends webhook.test to that endpoint only', async () => {
    const t = await newTenant(svc.api);
    const a = await hook(t, { events: ['*'] });
    const b = await hook(t, { events: ['*'] });
    const r = await svc.api.post(`/v1/webhooks/${a.id}/test`, undefined, t.as);
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: 0 });
    const testOf = (path: string) => rx.at(path).filter((x) => x.body?.type === 'webhook.test');
    const [got] = await waitFor('the test event', async () => (testOf(a.path).length ? testOf(a.path) : null));
    expect(got!.body).toMatchObject({
      id: r.body.event_id,
      seq: 0,
      workspace_id: t.workspaceId,
      type: 'webhook.test',
      data: { webhook_id: a.id, url: rx.url(a.path) },
    });
    expect(got!.headers['svc-event-type']).toBe('webhook.test');
    expect(verifyWebhook(a.secret, got!.headers['svc-signature'] as string, got!.raw)).toBe(true);
    await sleep(500);
    expect(testOf(a.path)).toHaveLength(1);
    expect(testOf(b.path)).toEqual([]);
    // Not an event of the workspace's stream.
    expect((await eventsAfterOf(svc, t, 0)).some((e) => e.type === 'webhook.test')).toBe(false);
  });

  it('lists deliveries newest first in cursor pages, by status; redelivering a pending one is a 409', async () => {
    const t = await newTenant(svc.api);
    const h = await hook(t);
    rx.plans.set(h.path, [200, 200, 200, 'hang']);
    for (let i = 0; i < 3; i++) await newTeam(t);
    await waitFor(
      'three deliveries',
      async () => (await deliveriesOf(t, h.id)).filter((d) => d.status === 'succeeded').length === 3,
    );
    const all = await deliveriesOf(t, h.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await svc.api.get(
        `/v1/webhooks/${h.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        t.as,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((d: any) => d.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((d) => d.id));
    const created = all.map((d) => d.created_at);
    expect(created).toEqual([...created].sort().reverse());
    const ok = await svc.api.get(`/v1/webhooks/${h.id}/deliveries?status=succeeded`, t.as);
    expect(ok.body.data).toHaveLength(3);
    expect((await svc.api.get(`/v1/webhooks/${h.id}/deliveries?status=failed`, t.as)).body.data).toEqual([]);
    // A cursor of another list (another status) is refused.
    const page1 = await svc.api.get(`/v1/webhooks/${h.id}/deliveries?limit=1`, t.as);
    const wrong = await svc.api.get(
      `/v1/webhooks/${h.id}/deliveries?limit=1&status=succeeded&cursor=${page1.body.next_cursor}`,
      t.as,
    );
    expect(wrong.status).toBe(422);

    // A delivery in flight (the receiver hangs) is pending: 409.
    await newTeam(t);
    const pending = await waitFor('a pending delivery', async () =>
      (await deliveriesOf(t, h.id)).find((d) => d.status === 'pending'),
    );
    const r = await svc.api.post(`/v1/webhooks/${h.id}/deliveries/${pending.id}/redeliver`, undefined, t.as);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('conflict');
    const missing = await svc.api.post(`/v1/webhooks/${h.id}/deliveries/${randomUUID()}/redeliver`, undefined, t.as);
    expect(missing.status).toBe(404);
  });
});
