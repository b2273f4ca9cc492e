// The server-rendered pages' helper (src/platform/http/pages.ts) on its own: the one error page
// policy (which status a refused request's page gets) and the one form reader's limit and fields.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, invalid, tooLarge } from '../../../src/platform/http/errors.js';
import {
  FORM_BODY_LIMIT,
  pageErrorStatus,
  pageErrors,
  parseUrlencoded,
  readForms,
} from '../../../src/platform/http/pages.js';

const CSP = "default-src 'none'";

describe('the error page policy', () => {
  it('a refused path value names no page (404), any other refused value is a 400, the rest keep their status', () => {
    expect(pageErrorStatus(invalid('path.workspace', 'is invalid').toBody())).toBe(404);
    expect(pageErrorStatus(invalid('query.score', 'is too long').toBody())).toBe(400);
    expect(pageErrorStatus(invalid('body.email', 'is required').toBody())).toBe(400);
    expect(pageErrorStatus(new ApiError('unsupported_media_type', 'Send a form.').toBody())).toBe(400);
    expect(pageErrorStatus(tooLarge('Too large.').toBody())).toBe(413);
    expect(pageErrorStatus(new ApiError('rate_limited', 'Slow down.').toBody())).toBe(429);
    expect(pageErrorStatus(new ApiError('internal_error', 'Oops.').toBody())).toBe(500);
  });
});

describe('a scope with readForms and pageErrors', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify({ logger: false });
    await app.register(async (scope) => {
      readForms(scope);
      pageErrors(scope, CSP);
      scope.post('/form', async (req) => req.body);
      scope.get('/limited', async () => {
        throw new ApiError('rate_limited', 'Slow down.', undefined, { 'retry-after': '60' });
      });
    });
    await app.ready();
  });
  afterAll(() => app.close());

  const post = (body: string) =>
    app.inject({
      method: 'POST',
      url: '/form',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
    });

  it('reads the first value of each name, as the database can hold it', async () => {
    const r = await post('a=1&a=2&b=x%00y%0D%0Az&__proto__=p');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ a: '1', b: 'xy\nz' });
    expect(parseUrlencoded('c=%F0%9F%98%80')).toEqual({ c: '😀' });
  });

  it('takes a form up to FORM_BODY_LIMIT and answers a larger one with the 413 page', async () => {
    const prefix = 'message=';
    const fits = await post(prefix + 'x'.repeat(FORM_BODY_LIMIT - prefix.length));
    expect(fits.statusCode).toBe(200);
    const over = await post(prefix + 'x'.repeat(FORM_BODY_LIMIT - prefix.length + 1));
    expect(over.statusCode).toBe(413);
    expect(over.headers['content-type']).toContain('text/html');
    expect(over.headers['cache-control']).toBe('no-store');
    expect(over.headers['content-security-policy']).toBe(CSP);
    expect(over.headers['x-content-type-options']).toBe('nosniff');
    expect(over.body).toContain('Too large');
  });

  it("keeps an error's headers on its page", async () => {
    const r = await app.inject({ method: 'GET', url: '/limited' });
    expect(r.statusCode).toBe(429);
    expect(r.headers['retry-after']).toBe('60');
    expect(r.body).toContain('Too many requests');
  });
});
