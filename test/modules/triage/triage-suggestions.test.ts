// AI suggestions' transitions (interface.md "AI suggestions"): DELETE
// /v1/tickets/{id}/ai/suggestions/{field} removes one (ticket.updated), a PATCH or a bulk change
// of the field removes it, and bad input: an unknown field (422), a field without a suggestion
// (404), another workspace's ticket (404), viewers (403), and triage without any engine (404
// ai_disabled).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, isErrorBody, latestSeqOf, newTenant, type Service, startService } from '../../support/helpers.js';
import { customerTicket } from '../ai/features-setup.js';
import { settings, ticketOf, triageAnswer, triageSuite, updatesOf, workspaceData } from './triage-setup.js';

const s = triageSuite('openai', { jobs: false });

/** A ticket with every suggestion pending (fields off; team, labels, spam decided). */
async function suggested() {
  const { svc, ai } = s;
  const t = await newTenant(svc.api);
  const { teamId } = await workspaceData(svc, t);
  await settings(svc, t, { fields: [] });
  const { id } = await customerTicket(svc, t, 'Buy cheap watches');
  ai.answer({ json: triageAnswer({ team_id: teamId, spam_probability: 0.9 }) });
  const r = await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, t.as);
  expect(r.status, r.text).toBe(200);
  expect(Object.keys(r.body.suggestions).sort()).toEqual(['labels', 'priority', 'severity', 'spam', 'team']);
  return { t, id, teamId };
}

const pendingOf = async (t: Parameters<typeof ticketOf>[1], id: string) =>
  Object.keys((await ticketOf(s.svc, t, id)).custom.ai_suggestions ?? {}).sort();

describe('DELETE /v1/tickets/{id}/ai/suggestions/{field}', () => {
  it('removes one suggestion with ticket.updated; again: 404; an unknown field: 422', async () => {
    const { svc } = s;
    const { t, id } = await suggested();
    const since = await latestSeqOf(svc, t);
    const r = await svc.api.delete(`/v1/tickets/${id}/ai/suggestions/team`, t.as);
    expect(r.status, r.text).toBe(204);
    expect(await pendingOf(t, id)).toEqual(['labels', 'priority', 'severity', 'spam']);
    const updates = await updatesOf(svc, t, id, since);
    expect(updates.map((e) => e.data.changes)).toEqual([['custom']]);

    const again = await svc.api.delete(`/v1/tickets/${id}/ai/suggestions/team`, t.as);
    expect(again.status).toBe(404);
    expect(isErrorBody(again.body, 404, 'not_found')).toBe(true);
    for (const field of ['status', 'team_id', 'tags', 'x'.repeat(65)]) {
      const bad = await svc.api.delete(`/v1/tickets/${id}/ai/suggestions/${field}`, t.as);
      expect(bad.status, field).toBe(422);
    }
    expect(await pendingOf(t, id)).toEqual(['labels', 'priority', 'severity', 'spam']);
  });

  it('another workspace cannot see or dismiss; a viewer may not', async () => {
    const { svc } = s;
    const { t, id } = await suggested();
    const other = await newTenant(svc.api);
    const r = await svc.api.delete(`/v1/tickets/${id}/ai/suggestions/spam`, other.as);
    expect(r.status).toBe(404);
    expect(isErrorBody(r.body, 404, 'not_found')).toBe(true);
    expect((await svc.api.delete(`/v1/tickets/${id}/ai/suggestions/bogus`, other.as)).status).toBe(404);
    const triage = await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, other.as);
    expect(triage.status).toBe(404);
    expect(isErrorBody(triage.body, 404, 'not_found')).toBe(true);
    const viewer = await addMember(svc, t, 'viewer');
    expect((await svc.api.delete(`/v1/tickets/${id}/ai/suggestions/spam`, viewer.as)).status).toBe(403);
    expect((await svc.api.post(`/v1/tickets/${id}/ai/triage`, {}, viewer.as)).status).toBe(403);
    const bad = await svc.api.post(`/v1/tickets/${id}/ai/triage`, { apply: 'yes' }, t.as);
    expect(bad.status).toBe(422);
    expect(await pendingOf(t, id)).toEqual(['labels', 'priority', 'severity', 'spam', 'team']);
  });

  it('a PATCH or a bulk change of a field removes its suggestion (ticket.updated lists custom)', async () => {
    const { svc } = s;
    const { t, id, teamId } = await suggested();
    const since = await latestSeqOf(svc, t);
    const p = await svc.api.patch(`/v1/tickets/${id}`, { priority: 'low' }, t.as);
    expect(p.status, p.text).toBe(200);
    expect(await pendingOf(t, id)).toEqual(['labels', 'severity', 'spam', 'team']);
    const updates = await updatesOf(svc, t, id, since);
    expect(updates.map((e) => [...e.data.changes].sort())).toEqual([['custom', 'priority']]);

    expect((await svc.api.patch(`/v1/tickets/${id}`, { add_tags: ['payments'], team_id: teamId }, t.as)).status).toBe(
      200,
    );
    expect(await pendingOf(t, id)).toEqual(['severity', 'spam']);
    const bulk = await svc.api.post('/v1/tickets/bulk', { ids: [id], patch: { severity: 'sev3', spam: false } }, t.as);
    expect(bulk.status, bulk.text).toBeLessThan(300);
    expect((await ticketOf(svc, t, id)).custom.ai_suggestions).toBeUndefined();
    // Other custom keys stay.
    expect((await ticketOf(svc, t, id)).custom.ai_decisions.engine).toBe('llm');
  });
});

describe('without any engine', () => {
  let bare: Service;
  beforeAll(async () => {
    bare = await startService({}, { jobs: false });
  });
  afterAll(async () => bare?.stop());

  it('triage answers 404 ai_disabled and GET /v1/triage reports no engine', async () => {
    const t = await newTenant(bare.api);
    const { id } = await customerTicket(bare, t, 'Hello');
    const r = await bare.api.post(`/v1/tickets/${id}/ai/triage`, {}, t.as);
    expect(r.status).toBe(404);
    expect(isErrorBody(r.body, 404, 'ai_disabled')).toBe(true);
    expect((await bare.api.get('/v1/triage', t.as)).body).toMatchObject({
      engine: { provider: 'none', connected: false },
      available: false,
    });
  });
});
