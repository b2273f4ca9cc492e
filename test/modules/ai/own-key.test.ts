// PUT/DELETE /v1/ai/key: the workspace's own provider key, sealed (the database column does not
// hold it, and it does not open in another workspace), shown by its last 4 only, never in a
// response, the audit log or the logs; config shows it, unmetered (costs 0, prices null); it
// makes AI available in a workspace of an instance without a provider; admins only; bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';

const KEY = 'sk-own-workspace-key-7a3f9Q2z';

async function rowOf(svc: Service, t: Tenant) {
  return svc.rt.deps.database.db
    .selectFrom('ai_settings')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .executeTakeFirst();
}

describe('on an instance with a provider', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(
      { AI_PROVIDER: 'openai', AI_API_KEY: 'sk-instance-0000', AI_MODEL: 'gpt-4o' },
      { jobs: false },
    );
  });
  afterAll(async () => svc?.stop());

  it('seals the key, shows its last 4, and never returns or logs it', async () => {
    const t = await newTenant(svc.api);
    const put = await svc.api.req('PUT', '/v1/ai/key', { ...t.as, body: { provider: 'anthropic', api_key: KEY } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ provider: 'anthropic', base_url: null, last4: '9Q2z', status: 'active', error: null });
    const row = await rowOf(svc, t);
    expect(row?.own_key_sealed).toBeTruthy();
    expect(row?.own_key_sealed).not.toContain(KEY);
    expect(row?.own_key_sealed).not.toContain(KEY.slice(3, 20));
    expect(svc.rt.deps.secrets.open(row!.own_key_sealed!, `ai-key:${t.workspaceId}`)).toBe(KEY);
    // Sealed for this workspace: the same value does not open as another's.
    expect(svc.rt.deps.secrets.open(row!.own_key_sealed!, 'ai-key:00000000-0000-0000-0000-000000000000')).toBeNull();

    const config = await svc.api.get('/v1/ai/config', t.as);
    expect(config.body).toMatchObject({
      enabled: true,
      provider: 'anthropic',
      metered: false,
      embeddings: true,
      models: { default: 'claude-sonnet-5-5', fast: 'claude-haiku-5-5' },
      own_key: { provider: 'anthropic', base_url: null, last4: '9Q2z', status: 'active', error: null },
    });
    expect(Object.values(config.body.costs).every((usd) => usd === 0)).toBe(true);
    const models = await svc.api.get('/v1/ai/models', t.as);
    expect(models.body.data.every((m: any) => m.usd_per_mtok === null && m.typical_reply_usd === null)).toBe(true);
    expect(models.body.data.every((m: any) => m.vendor === 'anthropic')).toBe(true);
    const audit = await svc.api.get('/v1/audit-logs', t.as);
    for (const text of [config.text, models.text, audit.text, svc.logs.join('\n')]) expect(text).not.toContain(KEY);
    expect(audit.text).toContain('ai_key.updated');
  });

  it('takes a base URL; DELETE forgets the key and the instance provider is back', async () => {
    const t = await newTenant(svc.api);
    const put = await svc.api.req('PUT', '/v1/ai/key', {
      ...t.as,
      body: { provider: 'openai', api_key: KEY, base_url: 'https://llm.example.com/v1/' },
    });
    expect(put.body).toMatchObject({ provider: 'openai', base_url: 'https://llm.example.com/v1', status: 'active' });
    // An OpenAI-compatible server that is not OpenAI's: the open models.
    const models = await svc.api.get('/v1/ai/models', t.as);
    expect(models.body.data.some((m: any) => m.vendor === 'meta')).toBe(true);
    const del = await svc.api.delete('/v1/ai/key', t.as);
    expect(del.status).toBe(204);
    const row = await rowOf(svc, t);
    expect(row).toMatchObject({ own_key_sealed: null, own_key_last4: null, own_key_status: null });
    const config = await svc.api.get('/v1/ai/config', t.as);
    expect(config.body).toMatchObject({ provider: 'openai', metered: true, own_key: null });
    expect((await svc.api.delete('/v1/ai/key', t.as)).status).toBe(204);
  });

  it('shows the last 4 characters of a key that ends in characters outside the BMP', async () => {
    // The fuzzer's case (scripts/fuzz-api.sh): the last 4 UTF-16 units began with half of a
    // surrogate pair, which PostgreSQL refused in the audit entry's JSON: a 500.
    const t = await newTenant(svc.api);
    const apiKey = 'sk-emoji-\u{1F511}\u000f\u{1F512}';
    const put = await svc.api.req('PUT', '/v1/ai/key', { ...t.as, body: { provider: 'anthropic', api_key: apiKey } });
    expect(put.status).toBe(200);
    expect(put.body.last4).toBe('-\u{1F511}\u000f\u{1F512}');
    const config = await svc.api.get('/v1/ai/config', t.as);
    expect(config.body.own_key.last4).toBe(put.body.last4);
  });

  it('refuses bad input with its location and keeps the key it had', async () => {
    const t = await newTenant(svc.api);
    await svc.api.req('PUT', '/v1/ai/key', { ...t.as, body: { provider: 'anthropic', api_key: KEY } });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ provider: 'cohere', api_key: KEY }, 'body.provider'],
      [{ provider: 'openai', api_key: 'short' }, 'body.api_key'],
      [{ provider: 'openai', api_key: 'k'.repeat(501) }, 'body.api_key'],
      [{ provider: 'openai', api_key: 'has a space in it' }, 'body.api_key'],
      [{ provider: 'openai', api_key: KEY, base_url: 'ftp://llm.example.com' }, 'body.base_url'],
      [{ provider: 'openai', api_key: KEY, base_url: 'not a url' }, 'body.base_url'],
      [{ provider: 'openai', api_key: KEY, base_url: 'http://127.0.0.1:11434/v1' }, 'body.base_url'],
      [{ provider: 'openai', api_key: KEY, base_url: 'https://user:pw@llm.example.com' }, 'body.base_url'],
      [{ provider: 'openai' }, 'body.api_key'],
    ];
    for (const [body, location] of bad) {
      const r = await svc.api.req('PUT', '/v1/ai/key', { ...t.as, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(
        r.body.errors.map((e: any) => e.location),
        JSON.stringify(body),
      ).toContain(location);
    }
    expect((await svc.api.get('/v1/ai/config', t.as)).body.own_key).toMatchObject({
      provider: 'anthropic',
      last4: '9Q2z',
    });
  });

  it('is for admins and settings:write keys; others get 403 and change nothing', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const read = await newApiKey(svc.api, t, ['settings:read']);
    for (const as of [agent.as, viewer.as, { token: read.key }]) {
      const put = await svc.api.req('PUT', '/v1/ai/key', { ...as, body: { provider: 'openai', api_key: KEY } });
      expect(isErrorBody(put.body, 403, 'forbidden')).toBe(true);
      expect(isErrorBody((await svc.api.delete('/v1/ai/key', as)).body, 403, 'forbidden')).toBe(true);
    }
    expect(await rowOf(svc, t)).toBeUndefined();
    // Members see that a key is set (last 4), never the key.
    const admin = await addMember(svc, t, 'admin');
    await svc.api.req('PUT', '/v1/ai/key', { ...admin.as, body: { provider: 'openai', api_key: KEY } });
    const seen = await svc.api.get('/v1/ai/config', viewer.as);
    expect(seen.body.own_key.last4).toBe('9Q2z');
    expect(seen.text).not.toContain(KEY);
  });
});

describe('on an instance without a provider', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { jobs: false });
  });
  afterAll(async () => svc?.stop());

  it('turns AI on for that workspace alone; a loopback base URL where private targets are allowed', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const put = await svc.api.req('PUT', '/v1/ai/key', {
      ...a.as,
      body: { provider: 'openai', api_key: KEY, base_url: 'http://127.0.0.1:11434/v1' },
    });
    expect(put.status).toBe(200);
    expect((await svc.api.get('/v1/ai/config', a.as)).body).toMatchObject({
      enabled: true,
      provider: 'openai',
      metered: false,
    });
    expect((await svc.api.get('/v1/ai/models', a.as)).status).toBe(200);
    expect((await svc.api.get('/v1/ai/config', b.as)).body).toMatchObject({
      enabled: false,
      provider: null,
      own_key: null,
    });
    expect(isErrorBody((await svc.api.get('/v1/ai/models', b.as)).body, 404, 'ai_disabled')).toBe(true);
  });
});
