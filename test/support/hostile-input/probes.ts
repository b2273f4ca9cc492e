// The probes of test/bad-input.test.ts: for each route of the route table, one request per hostile
// input with what a correct answer looks like, how to send one, and what is wrong with an answer.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { RouteEntry } from '../../../src/app.js';
import { ERROR_CODES } from '../../../src/platform/http/errors.js';
import type { Tenant } from '../helpers.js';
import {
  accepts,
  hugeString,
  isStringy,
  propertiesOf,
  queryObject,
  type Schema,
  SQLISH,
  sample,
  strictObjectsOf,
  WRONG_VALUES,
  withValue,
} from './schema.js';

// ---------------------------------------------------------------------------------------------
// Probes: one request each, with what a correct answer looks like.

export interface Probe {
  route: RouteEntry;
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Acceptable statuses; any 4xx when absent. */
  status?: number[];
  /** The first error's location must start with this (for 422 validation_failed). */
  location?: string;
  /** A reported bug: only the status is checked. */
}

export const paramNames = (url: string) => [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
export const fillUrl = (url: string, values: Record<string, string>) =>
  url.replace(/:(\w+)(\([^)]*\))?/g, (_m, name: string) => values[name] ?? randomUUID()).replace(/\*/g, 'x');

export const HOSTILE_PARAMS: Array<[string, string]> = [
  ...SQLISH.map((v): [string, string] => [`sql ${v}`, encodeURIComponent(v)]),
  ['NUL', '%00'],
  ['NUL inside', `abc%00${randomUUID()}`],
  ['path traversal', encodeURIComponent('../../etc/passwd')],
  ['150 characters', 'b'.repeat(150)],
  ['negative number', '-1'],
  ['zero', '0'],
  ['enormous number', '99999999999999999999'],
  ['hash number', '%23-5'],
  ['nil uuid', '00000000-0000-0000-0000-000000000000'],
  ['unicode tricks', encodeURIComponent('\u202e💥\ufeff')],
];

/**
 * Paths the router itself cannot take (invalid percent-encoding, a parameter over the router's
 * maxParamLength): answered through `frameworkErrors` with the same error body, 400 or 404.
 */
export const ROUTER_REJECTS: Array<[string, string]> = [
  ['invalid percent-encoding', '%ff%fe'],
  ['overlong UTF-8 NUL', '%c0%80'],
  ['lone surrogate (CESU-8)', '%ed%a0%80'],
  ['10k characters', 'c'.repeat(10_000)],
];

export const FORGED_AUTH: Array<[string, string]> = [
  ['sql token', "Bearer ' OR '1'='1"],
  ['sql api key', "Bearer svc_live_' OR '1'='1 --"],
  ['5000-character token', `Bearer ${'x'.repeat(5000)}`],
  [
    'unsigned JWT (alg none)',
    `Bearer ${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: randomUUID(), purpose: 'access', exp: 4_102_444_800 }),
    ).toString('base64url')}.`,
  ],
  ['Basic scheme', 'Basic Zm9vOmJhcg=='],
];

/**
 * Public routes that authenticate with a header of their own and take a raw body instead of
 * JSON: they get that header, and raw-body probes instead of the JSON ones.
 */
export const RAW_BODY_ROUTES: Record<string, { credential: Record<string, string>; contentType: string }> = {
  'POST /v1/inbound/email': {
    credential: { 'svc-inbound-secret': 'test-inbound-secret-0123456789' },
    contentType: 'message/rfc822',
  },
};
export const rawBodyRoute = (route: RouteEntry) => RAW_BODY_ROUTES[`${route.method} ${route.url}`];

/** Whom the probes act as: the workspace's owner, and a visitor of its chat widget. */
export interface Credentials {
  tenant: Tenant;
  visitorToken: string;
}

export function credentialsFor(route: RouteEntry, { tenant, visitorToken }: Credentials): Record<string, string> {
  switch (route.access.kind) {
    case 'public':
      return rawBodyRoute(route)?.credential ?? {};
    case 'user':
    case 'identity':
      return { authorization: `Bearer ${tenant.owner.token}` };
    case 'workspace':
      return { authorization: `Bearer ${tenant.owner.token}`, 'svc-workspace': tenant.workspaceId };
    case 'visitor':
      return { authorization: `Visitor ${visitorToken}` };
  }
}

export const JSON_HEADERS = { 'content-type': 'application/json' };

export function probesFor(route: RouteEntry, who: Credentials): Probe[] {
  const { tenant } = who;
  const probes: Probe[] = [];
  const cred = credentialsFor(route, who);
  const params = paramNames(route.url);
  const paramsSchema = route.schema.params as Schema | undefined;
  const bodySchema = route.schema.body as Schema | undefined;
  const querySchema = route.schema.querystring as Schema | undefined;

  // Baselines: valid params (random, so no record matches), body and query.
  const sampledParams = (paramsSchema ? sample(paramsSchema) : {}) as Record<string, unknown>;
  const paramValues: Record<string, string> = {};
  for (const p of params) {
    const v = sampledParams[p];
    paramValues[p] = typeof v === 'string' && v !== 'a' ? v : randomUUID();
  }
  const basePath = fillUrl(route.url, paramValues);
  const baseBody = bodySchema ? sample(bodySchema) : undefined;
  const bodyIsValid = bodySchema ? accepts(bodySchema, baseBody, false) : false;
  const baseQuery: Array<[string, string]> = [];
  if (querySchema) {
    for (const [k, v] of Object.entries((sample(querySchema) ?? {}) as Record<string, unknown>)) {
      // No cursor in the baseline: only a list's own cursors are valid.
      if (k !== 'cursor' && v !== null && typeof v !== 'object') baseQuery.push([k, String(v)]);
    }
  }
  const queryIsValid = querySchema ? accepts(querySchema, queryObject(baseQuery), true) : true;
  const qs = (pairs: Array<[string, string]>) => (pairs.length ? `?${new URLSearchParams(pairs).toString()}` : '');
  const baseQs = querySchema && queryIsValid ? qs(baseQuery) : '';
  const baseBodyText = baseBody === undefined ? undefined : JSON.stringify(baseBody);
  const withBase = (p: Omit<Probe, 'route' | 'method'>): Probe => ({ route, method: route.method, ...p });
  const loc = (path: string[]) => (bodyIsValid ? ['body', ...path].join('.') : 'body');

  // --- Bodies: declared properties with wrong types, huge strings, unknown fields, bad shapes.
  if (bodySchema) {
    const json = (label: string, value: unknown, location: string) =>
      withBase({
        label,
        path: basePath + baseQs,
        headers: { ...cred, ...JSON_HEADERS },
        body: JSON.stringify(value),
        status: [422],
        location,
      });
    for (const { path, schema } of propertiesOf(bodySchema)) {
      const name = path.join('.');
      const candidates = [...WRONG_VALUES];
      if (isStringy(schema)) candidates.push(hugeString(schema));
      if (schema.type === 'array' && typeof schema.maxItems === 'number') {
        candidates.push(Array.from({ length: schema.maxItems + 1 }, () => sample(schema.items)));
      }
      if (typeof schema.maximum === 'number') candidates.push(schema.maximum + 1);
      if (typeof schema.minimum === 'number') candidates.push(schema.minimum - 1);
      for (const value of candidates) {
        const body = withValue(baseBody, path, value);
        const isHuge = typeof value === 'string' && value.length >= 100_000;
        // A value the schema accepts is not hostile here, except a huge string, which must never be.
        if (!isHuge && accepts(bodySchema, body, false)) continue;
        const shown = isHuge ? `${(value as string).length}-character string` : JSON.stringify(value);
        probes.push(json(`body.${name} = ${shown}`, body, loc(path)));
      }
    }
    for (const path of strictObjectsOf(bodySchema)) {
      const extra = withValue(baseBody, [...path, 'hostile_unknown_field'], 'x');
      probes.push(
        json(`unknown field at ${['body', ...path].join('.')}`, extra, loc([...path, 'hostile_unknown_field'])),
      );
    }
    // An own "__proto__" key (prototype pollution attempt) and "constructor".
    const rest = baseBodyText && baseBodyText !== '{}' ? `,${baseBodyText.slice(1)}` : '}';
    for (const key of ['__proto__', 'constructor']) {
      probes.push(
        withBase({
          label: `"${key}" key`,
          path: basePath + baseQs,
          headers: { ...cred, ...JSON_HEADERS },
          body: `{"${key}":{"role":"owner","isAdmin":true}${rest}`,
          status: [422],
          location: loc([key]),
        }),
      );
    }
    for (const [label, value] of [
      ['array', [baseBody]],
      ['number', 42],
      ['string', 'just a string'],
      ['null', null],
      ['boolean', true],
    ] as Array<[string, unknown]>) {
      probes.push(json(`body is a JSON ${label}`, value, 'body'));
    }
    probes.push(withBase({ label: 'no body', path: basePath + baseQs, headers: { ...cred }, status: [400, 415, 422] }));
    probes.push(
      withBase({
        label: 'empty JSON body',
        path: basePath + baseQs,
        headers: { ...cred, ...JSON_HEADERS },
        body: '',
        status: [400, 422],
      }),
    );
    probes.push(
      withBase({
        label: 'JSON sent as text/plain',
        path: basePath + baseQs,
        headers: { ...cred, 'content-type': 'text/plain' },
        body: baseBodyText ?? '{}',
        status: [415, 422],
      }),
    );
    probes.push(
      withBase({
        label: 'form-encoded body',
        path: basePath + baseQs,
        headers: { ...cred, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x&role=owner',
        status: [415],
      }),
    );
    // NUL and lone surrogates inside a declared string (they reach no database).
    const firstString = propertiesOf(bodySchema).find((p) => isStringy(p.schema))?.path ?? ['hostile_text'];
    for (const [label, value] of [
      ['NUL character', 'abc\u0000def'],
      ['only a NUL', '\u0000'],
      ['lone high surrogate', 'abc\ud800'],
      ['lone low surrogate', '\udc00xyz'],
    ]) {
      probes.push(
        withBase({
          label: `${label} in body.${firstString.join('.')}`,
          path: basePath + baseQs,
          headers: { ...cred, ...JSON_HEADERS },
          body: JSON.stringify(withValue(baseBody ?? {}, firstString, value)),
          status: [422],
          location: ['body', ...firstString].join('.'),
        }),
      );
    }
    probes.push(
      withBase({
        label: 'NUL in a key',
        path: basePath + baseQs,
        headers: { ...cred, ...JSON_HEADERS },
        body: `{"a\\u0000b":1${rest}`,
        status: [422],
        location: 'body',
      }),
    );
  }

  // --- Raw-body routes: JSON is the wrong type; no credential, a wrong one, or no body at all.
  const rawRoute = rawBodyRoute(route);
  if (rawRoute) {
    const path = basePath + baseQs;
    const mail = 'From: a@example.com\r\nSubject: probe\r\n\r\nhello\r\n';
    const rawType = { 'content-type': rawRoute.contentType };
    probes.push(
      withBase({ label: 'JSON body', path, headers: { ...cred, ...JSON_HEADERS }, body: '{"a":1}', status: [415] }),
    );
    probes.push(withBase({ label: 'no credential', path, headers: rawType, body: mail, status: [401] }));
    const forgedCredential = Object.fromEntries(Object.keys(rawRoute.credential).map((k) => [k, 'forged']));
    probes.push(
      withBase({
        label: 'forged credential',
        path,
        headers: { ...rawType, ...forgedCredential },
        body: mail,
        status: [401],
      }),
    );
    probes.push(withBase({ label: 'empty raw body', path, headers: { ...cred, ...rawType }, body: '', status: [422] }));
  }

  // --- Bytes that are not JSON at all (every route that takes a body, declared or not).
  if (!rawRoute && (bodySchema || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method))) {
    const raw = (label: string, body: string | Buffer, status: number[], extra: Record<string, string> = {}) =>
      probes.push(
        withBase({ label, path: basePath + baseQs, headers: { ...cred, ...JSON_HEADERS, ...extra }, body, status }),
      );
    raw('invalid UTF-8 (0xff 0xfe)', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), [400]);
    raw(
      'overlong UTF-8 NUL (0xc0 0x80)',
      Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0x80]), Buffer.from('"}')]),
      [400],
    );
    raw(
      'UTF-8 encoded surrogate (0xed 0xa0 0x80)',
      Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      [400],
    );
    raw('truncated JSON', '{"name": "x",', [400]);
    raw('single-quoted JSON', "{'name': 'x'}", [400]);
    raw('trailing garbage', '{"name": "x"} DROP', [400]);
    raw('NaN literal', '{"n": NaN}', [400]);
    raw('deeply nested arrays', `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, [400, 413, 422]);
    raw('gzip bytes claiming JSON', gzipSync(baseBodyText ?? '{"a":1}'), [400, 415], { 'content-encoding': 'gzip' });
    raw('a body over 1 MiB', `{"a":"${'x'.repeat(1_100_000)}"}`, [413]);
  }

  // --- Path parameters: SQL-looking text, NUL, bad encodings, very long ids.
  if (params.length > 0) {
    const body = bodyIsValid ? baseBodyText : undefined;
    for (const name of params) {
      for (const [label, value] of HOSTILE_PARAMS) {
        probes.push(
          withBase({
            label: `path.${name} ${label}`,
            path: fillUrl(route.url, { ...paramValues, [name]: value }) + baseQs,
            headers: { ...cred, ...(body !== undefined ? JSON_HEADERS : {}) },
            ...(body !== undefined ? { body } : {}),
            status: [400, 404, 414, 422],
            location: 'path.',
          }),
        );
      }
      for (const [label, value] of ROUTER_REJECTS) {
        probes.push(
          withBase({
            label: `path.${name} ${label}`,
            path: fillUrl(route.url, { ...paramValues, [name]: value }) + baseQs,
            headers: { ...cred },
            status: [400, 404],
          }),
        );
      }
    }
  }

  // --- Query strings: negative, zero, too big, non-numeric limits; garbage cursors; unknown keys.
  if (querySchema) {
    const body = bodyIsValid ? baseBodyText : undefined;
    const queryProbe = (label: string, pairs: Array<[string, string]>, location: string, raw?: string) =>
      withBase({
        label,
        path: basePath + (raw ?? qs(pairs)),
        headers: { ...cred, ...(body !== undefined ? JSON_HEADERS : {}) },
        ...(body !== undefined ? { body } : {}),
        status: [400, 422],
        location,
      });
    const others = (k: string) => (queryIsValid ? baseQuery.filter(([key]) => key !== k) : []);
    const qloc = (k: string) => (queryIsValid ? `query.${k}` : 'query.');
    for (const [k, s] of Object.entries((querySchema.properties ?? {}) as Record<string, Schema>)) {
      const values = [
        '-1',
        '-5',
        '0',
        '101',
        '99999999999999999999',
        'abc',
        '1.5',
        '1e400',
        'NaN',
        '',
        'true',
        '0x',
        ...SQLISH,
      ];
      if (typeof s.maximum === 'number') values.push(String(s.maximum + 1));
      if (typeof s.maxLength === 'number') values.push('q'.repeat(Math.max(5000, s.maxLength + 1)));
      for (const v of values) {
        const pairs: Array<[string, string]> = [...others(k), [k, v]];
        if (accepts(querySchema, queryObject(pairs), true)) continue;
        probes.push(queryProbe(`query ${k}=${v.length > 40 ? `${v.length} characters` : v}`, pairs, qloc(k)));
      }
      const twice: Array<[string, string]> = [...others(k), [k, '1'], [k, '2']];
      if (!accepts(querySchema, queryObject(twice), true)) {
        probes.push(queryProbe(`query ${k} given twice`, twice, qloc(k)));
      }
    }
    if ('cursor' in (querySchema.properties ?? {})) {
      const forged = `${Buffer.from(JSON.stringify(['2020-01-01T00:00:00.000Z', "x' OR '1'='1"])).toString('base64url')}.${'A'.repeat(22)}`;
      for (const [label, v] of [
        ['garbage', 'garbage'],
        ['5000 characters', 'z'.repeat(5000)],
        ['forged signature', forged],
        ['a dot only', '.'],
        ['NUL', '\u0000'],
        ...SQLISH.map((s) => [`sql ${s}`, s]),
      ]) {
        probes.push(queryProbe(`query cursor ${label}`, [...others('cursor'), ['cursor', v!]], qloc('cursor')));
      }
    }
    if (querySchema.additionalProperties === false) {
      for (const k of ['hostile_unknown', '__proto__', 'constructor']) {
        probes.push(queryProbe(`unknown query parameter ${k}`, [...others(k), [k, '1']], 'query.'));
      }
    }
    const numeric = Object.entries((querySchema.properties ?? {}) as Record<string, Schema>).find(
      ([, s]) => s.type === 'integer' || s.type === 'number',
    )?.[0];
    if (numeric) {
      const pairs = others(numeric);
      const raw = `?${[...pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`), `${numeric}=%ff%fe`].join('&')}`;
      probes.push(queryProbe(`query ${numeric} with invalid percent-encoding`, [], qloc(numeric), raw));
    }
  }

  // --- Forged credentials and workspace headers (the rest of the request is valid).
  if (route.access.kind !== 'public') {
    const body = bodyIsValid ? baseBodyText : undefined;
    const rest = { path: basePath + baseQs, ...(body !== undefined ? { body } : {}) };
    const ct = body !== undefined ? JSON_HEADERS : {};
    for (const [label, authorization] of FORGED_AUTH) {
      const headers = {
        ...ct,
        authorization,
        ...(cred['svc-workspace'] ? { 'svc-workspace': tenant.workspaceId } : {}),
      };
      probes.push(withBase({ label: `credential: ${label}`, headers, status: [401], ...rest }));
    }
    if (route.access.kind === 'workspace') {
      for (const [label, ws] of [
        ['sql', "1' OR '1'='1"],
        ['5000 characters', 'w'.repeat(5000)],
        ['a workspace the user is not in', randomUUID()],
        ['nil uuid', '00000000-0000-0000-0000-000000000000'],
      ]) {
        probes.push(
          withBase({
            label: `SVC-Workspace: ${label}`,
            headers: { ...ct, authorization: cred.authorization!, 'svc-workspace': ws! },
            status: [404],
            ...rest,
          }),
        );
      }
    }
  }
  return probes;
}

// ---------------------------------------------------------------------------------------------
// Answers.

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

export async function send(url: string, p: Probe): Promise<Answer> {
  const r = await fetch(url + p.path, { method: p.method, headers: p.headers, body: p.body });
  return { status: r.status, contentType: r.headers.get('content-type') ?? '', text: await r.text() };
}

export const LEAKS: Array<[string, RegExp]> = [
  ['a stack frame', /\bat [\w$.<>[\] ]*\(?(?:file:|node:|\/)[^)\s]*:\d+:\d+/],
  ['a stack frame', /\n\s+at /],
  ['a source file', /\.(?:ts|js|mjs|cjs):\d+/],
  ['node_modules', /node_modules/],
  ['SQL', /\b(?:SELECT|INSERT|UPDATE \w+ SET|DELETE FROM|RETURNING|WHERE)\b/],
  [
    'a database error',
    /syntax error|invalid input syntax|byte sequence|violates|duplicate key|relation "|pglite|postgres|kysely/i,
  ],
  ['a framework error', /FST_ERR|statusCode/],
];

/** What is wrong with an answer to a hostile probe (empty when it is right). */
export function problemsOf(p: Probe, a: Answer): string[] {
  const out: string[] = [];
  const where = `${p.method} ${p.route.url} [${p.label}]`;
  const say = (what: string) => out.push(`${where}: ${what} → ${a.status} ${a.text.slice(0, 300)}`);
  if (a.status < 400 || a.status > 499) say('expected a 4xx');
  else if (p.status && !p.status.includes(a.status)) say(`expected ${p.status.join(' or ')}`);
  for (const [what, re] of LEAKS) if (re.test(a.text)) say(`the body shows ${what}`);
  if (!/^application\/json/.test(a.contentType)) say(`content-type ${a.contentType}`);
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    say('the body is not JSON');
    return out;
  }
  const keysOk =
    body !== null &&
    typeof body === 'object' &&
    Object.keys(body).every((k) => ['status', 'code', 'detail', 'errors'].includes(k));
  if (!keysOk || body.status !== a.status || typeof body.code !== 'string' || typeof body.detail !== 'string') {
    say('not the spec error body {status, code, detail, errors?}');
    return out;
  }
  // A code of the closed catalogue that goes with this status (413 is too_large, 422 here validation_failed).
  if ((ERROR_CODES as Record<string, number>)[body.code] !== a.status)
    say(`code ${body.code} does not go with ${a.status}`);
  if (a.status === 413 && body.code !== 'too_large') say('413 without code too_large');
  if (a.status === 422 && p.location && body.code !== 'validation_failed') say('422 without code validation_failed');
  if (
    body.errors !== undefined &&
    !(
      Array.isArray(body.errors) &&
      body.errors.every((e: any) => e && typeof e.location === 'string' && typeof e.message === 'string')
    )
  ) {
    say('errors is not an array of {location, message}');
  }
  if (a.status === 422 && body.code === 'validation_failed') {
    const first = body.errors?.[0]?.location;
    if (typeof first !== 'string' || !/^(?:body|query|path|header)(?:\.|$)/.test(first)) {
      say('a validation failure without a location');
    } else if (p.location && !first.startsWith(p.location)) {
      say(`the error should point at ${p.location}, not ${first}`);
    }
  }
  return out;
}
