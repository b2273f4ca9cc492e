// The setup of the sign-in protection tests (protection.test.ts, protection-challenge.test.ts):
// services on a database of its own, started with the settings a test needs and stopped after the
// file, and the helpers that register and log in. Each test file calls protectionSuite() at its
// top level and gets its own services (the files share worker processes, so nothing here lives
// at module level).

import { afterAll, beforeAll, expect } from 'vitest';
import { type Service, startService, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

export const PASSWORD = 'correct horse battery';

export async function registered(
  s: Service,
  name = 'Lou Lock',
): Promise<{ email: string; userId: string; token: string }> {
  const email = `${unique('prot')}@example.com`;
  const r = await s.api.post('/v1/auth/register', { email, password: PASSWORD, name, challenge_token: 'good-token' });
  expect(r.status, r.text).toBe(201);
  return { email, userId: r.body.user.id, token: r.body.access_token };
}

export const login = (s: Service, email: string, password: string, extra: Record<string, unknown> = {}) =>
  s.api.post('/v1/auth/login', { email, password, ...extra });

/** One file's services; registers the file's hooks. */
export function protectionSuite() {
  const services: Service[] = [];
  let own: OwnDatabase;
  async function service(env: Record<string, string>): Promise<Service> {
    const s = await startService({ ...own.env, ...env }, { jobs: false });
    services.push(s);
    return s;
  }
  /** A service with the default settings (10 per account, 30 per address, no challenge, no App Attest). */
  let plain: Service;
  beforeAll(async () => {
    own = await ownDatabase('auth_protection');
    plain = await service({});
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await own?.drop();
  });

  return {
    get plain() {
      return plain;
    },
    service,
  };
}

export { type Siteverify, siteverify } from '../../support/siteverify.js';
