// PATCH /v1/me: a signed-in person changes their own profile. The change shows in their member
// record in every workspace they belong to (member.updated there, with an audit entry), bad
// values are refused with 422 and change nothing, and API keys may not use it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  startService,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

describe('PATCH /v1/me', () => {
  it('renames the person everywhere: GET /v1/me, members of each workspace, events and audit in each', async () => {
    const a = await newTenant(svc.api, 'First Co');
    const b = await newTenant(svc.api, 'Second Co');
    // The owner of a joins b as an agent.
    await addMember(svc, b, 'agent', a.owner);
    const seqA = await latestSeqOf(svc, a);
    const seqB = await latestSeqOf(svc, b);

    const r = await svc.api.patch('/v1/me', { name: '  Olivia  Renamed ' }, { token: a.owner.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: a.owner.userId, name: 'Olivia  Renamed', kind: 'user' });
    expect(r.body.workspaces.map((w: any) => w.name).sort()).toEqual(['First Co', 'Second Co']);
    expect((await svc.api.get('/v1/me', { token: a.owner.token })).body).toEqual(r.body);

    for (const [t, since] of [
      [a, seqA],
      [b, seqB],
    ] as const) {
      const members = await svc.api.get('/v1/members', { token: a.owner.token, workspace: t.workspaceId });
      const me = members.body.data.find((m: any) => m.user.id === a.owner.userId);
      expect(me.user.name).toBe('Olivia  Renamed');
      const events = await eventsAfterOf(svc, { ...t, as: { token: a.owner.token, workspace: t.workspaceId } }, since);
      expect(events.map((e) => e.type)).toEqual(['member.updated']);
      expect(events[0].data.member.user).toMatchObject({ id: a.owner.userId, name: 'Olivia  Renamed' });
      expect(events[0].topics).toContain(`user:${a.owner.userId}`);
      const audit = await svc.api.get('/v1/audit-logs?action=user.updated', {
        token: t === a ? a.owner.token : b.owner.token,
        workspace: t.workspaceId,
      });
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0]).toMatchObject({
        action: 'user.updated',
        entity_type: 'user',
        entity_id: a.owner.userId,
        actor: { type: 'user', user: { id: a.owner.userId } },
        data: { changes: { name: { from: 'Olivia Owner', to: 'Olivia  Renamed' } } },
      });
    }
  });

  it('changes nothing and tells no one when the values are the same, or the body is empty', async () => {
    const t = await newTenant(svc.api);
    const since = await latestSeqOf(svc, t);
    for (const body of [{}, { name: 'Olivia Owner' }, { name: ' Olivia Owner ' }]) {
      const r = await svc.api.patch('/v1/me', body, { token: t.owner.token });
      expect(r.status, JSON.stringify(body)).toBe(200);
      expect(r.body.name).toBe('Olivia Owner');
    }
    expect(await eventsAfterOf(svc, t, since)).toEqual([]);
    expect((await svc.api.get('/v1/audit-logs?action=user.updated', t.as)).body.data).toEqual([]);
  });

  it('refuses bad values with 422 at the field and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const since = await latestSeqOf(svc, t);
    const cases: Array<[unknown, string]> = [
      [{ name: '' }, 'body.name'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'x'.repeat(101) }, 'body.name'],
      [{ name: 5 }, 'body.name'],
      [{ name: null }, 'body.name'],
      [{ name: 'a\u0000b' }, 'body.name'],
      [{ email: 'new@example.com' }, 'body.email'],
      [{ mfa_enabled: false }, 'body.mfa_enabled'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.patch('/v1/me', body, { token: t.owner.token });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location, JSON.stringify(body)).toBe(location);
    }
    expect((await svc.api.get('/v1/me', { token: t.owner.token })).body.name).toBe('Olivia Owner');
    expect(await eventsAfterOf(svc, t, since)).toEqual([]);
  });

  it('is for signed-in people: an API key gets 403, no credential 401; it changes only the caller', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Agent Ann');
    const key = await newApiKey(svc.api, t, ['tickets:read']);
    const byKey = await svc.api.patch('/v1/me', { name: 'Robot' }, { token: key.key });
    expect(byKey.status).toBe(403);
    const anonymous = await svc.api.patch('/v1/me', { name: 'Nobody' });
    expect(anonymous.status).toBe(401);
    const mine = await svc.api.patch('/v1/me', { name: 'Ann Agent' }, { token: agent.token });
    expect(mine.body.name).toBe('Ann Agent');
    expect((await svc.api.get('/v1/me', { token: t.owner.token })).body.name).toBe('Olivia Owner');
  });
});
