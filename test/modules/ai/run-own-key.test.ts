// runAi on a workspace's own key: the call goes to the key's provider (here the Anthropic
// stand-in), costs 0 and is recorded source own_key. A key the provider refuses is turned off
// (status failed, with the reason), each owner and admin gets one ai_key_failed notice (not the
// agents; concurrent refusals notify once), the call answers 502 ai_unavailable, and the next
// call uses the instance's provider (docs/decisions.md "AI own key").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAi } from '../../../src/modules/ai/run.js';
import {
  type AnthropicStandIn,
  type OpenAiStandIn,
  startAnthropicStandIn,
  startOpenAiStandIn,
} from '../../support/ai-standin/index.js';
import { addMember, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

const GOOD = 'sk-ant-own-good-1234';
const BAD = 'sk-ant-own-revoked-9876';

let instance: OpenAiStandIn;
let own: AnthropicStandIn;
let svc: Service;
beforeAll(async () => {
  instance = await startOpenAiStandIn({ keys: ['sk-instance-0000'] });
  own = await startAnthropicStandIn({ keys: [GOOD] });
  svc = await startService(
    {
      AI_PROVIDER: 'openai',
      AI_BASE_URL: instance.url,
      AI_API_KEY: 'sk-instance-0000',
      AI_MODEL: 'gpt-4o',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
    { jobs: false, ai: { timeoutMs: 5000, maxRetries: 0 } },
  );
});
afterAll(async () => {
  await svc?.stop();
  await Promise.all([instance?.stop(), own?.stop()]);
});

const usageOf = (t: Tenant) =>
  svc.rt.deps.database.db
    .selectFrom('ai_usage')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

const draft = (t: Tenant) =>
  runAi(
    svc.rt.deps,
    { workspaceId: t.workspaceId, userId: t.owner.userId },
    {
      feature: 'draft_reply',
      tier: 'default',
      system: 'You draft replies.',
      messages: [{ role: 'user', content: 'Where is my parcel?' }],
      maxTokens: 300,
    },
  );

async function putKey(t: Tenant, key: string) {
  const r = await svc.api.req('PUT', '/v1/ai/key', {
    ...t.as,
    body: { provider: 'anthropic', api_key: key, base_url: own.url },
  });
  expect(r.status).toBe(200);
}

const keyNotices = async (as: Tenant['as']) =>
  (await svc.api.get('/v1/notifications', as)).body.data.filter((n: any) => n.type === 'ai_key_failed');

describe('runAi on an own key', () => {
  it("calls the key's provider with its default model; costs 0, source own_key", async () => {
    const t = await newTenant(svc.api);
    await putKey(t, GOOD);
    const before = { own: own.requests.length, instance: instance.requests.length };
    own.answer({ text: 'On its way.', usage: { input_tokens: 800, output_tokens: 100 } });
    const r = await draft(t);
    expect(r).toMatchObject({ text: 'On its way.', source: 'own_key', cost_usd: 0 });
    expect(own.requests.length).toBe(before.own + 1);
    expect(instance.requests.length).toBe(before.instance);
    const sent = own.requests[before.own]!;
    expect(JSON.stringify(sent.headers)).toContain(GOOD);
    expect(sent.body.model).toBe('claude-sonnet-5-5');
    const [row] = await usageOf(t);
    expect(row).toMatchObject({ source: 'own_key', outcome: 'ok', input_tokens: 800, output_tokens: 100 });
    expect(Number(row!.cost_usd)).toBe(0);
  });

  it('a refused key is turned off, owners and admins are told once, then the instance provider answers', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    await putKey(t, BAD);
    // Two calls at once, both refused: one notice per admin all the same.
    const errs = await Promise.all([draft(t).catch((e) => e), draft(t).catch((e) => e)]);
    for (const err of errs) {
      expect(err).toMatchObject({ status: 502, code: 'ai_unavailable' });
      expect(err.detail).not.toContain(BAD);
    }
    const config = (await svc.api.get('/v1/ai/config', t.as)).body;
    expect(config.own_key).toMatchObject({ provider: 'anthropic', status: 'failed', last4: '9876' });
    expect(config.own_key.error).toBeTruthy();
    expect(config.own_key.error).not.toContain(BAD);
    // Back on the instance's provider: metered again.
    expect(config).toMatchObject({ provider: 'openai', metered: true });
    for (const who of [t.as, admin.as]) {
      const notices = await keyNotices(who);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatchObject({ ticket: null, data: { provider: 'anthropic' } });
      expect(typeof notices[0].data.reason).toBe('string');
    }
    expect(await keyNotices(agent.as)).toEqual([]);

    instance.answer({ text: 'From the instance.', usage: { input_tokens: 100, output_tokens: 10 } });
    const next = await draft(t);
    expect(next).toMatchObject({ text: 'From the instance.', source: 'instance' });
    const rows = await usageOf(t);
    expect(rows.map((r) => [r.source, r.outcome])).toEqual([
      ['own_key', 'failed'],
      ['own_key', 'failed'],
      ['instance', 'ok'],
    ]);
    expect(await keyNotices(admin.as)).toHaveLength(1);
    expect(svc.logs.join('\n')).not.toContain(BAD);

    // A new key is active again.
    await putKey(t, GOOD);
    own.answer({ text: 'Own again.' });
    expect((await draft(t)).source).toBe('own_key');
  });
});
