// Hostile input on every route: wrong types, huge strings, unknown fields, invalid UTF-8,
// NUL bytes, lone surrogates, broken JSON, oversized bodies, SQL-looking ids, negative or
// enormous limits, garbage cursors, forged credentials. Every answer must be a 4xx in the
// spec's error body (located for 422), never a stack trace or SQL, and the database must be
// exactly as it was. The routes come from the app's route table, so a route added later is
// covered without touching this file.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../src/app.js';
import { ERROR_CODES } from '../src/platform/http/errors.js';
import { newTenant, type Service, startService, type Tenant } from './support/helpers.js';
import { type OwnDatabase, ownDatabase } from './support/own-database.js';

type Schema = Record<string, any>;

let svc: Service;
let own: OwnDatabase;
let tenant: Tenant;
/** A chat widget visitor of the tenant, for the visitor routes (src/modules/widget). */
let visitorToken: string;
beforeAll(async () => {
  // No job worker: the hourly maintenance job prunes old rows and would move the fingerprint.
  // Row counts of every table must not move: other test files share PostgreSQL, so this one
  // runs on a database of its own.
  own = await ownDatabase('badinput');
  svc = await startService(own.env, { jobs: false });
  tenant = await newTenant(svc.api, 'Hostile Input Inc');
  const key = (await svc.api.get('/v1/workspace', tenant.as)).body.widget_key;
  visitorToken = (await svc.api.post('/v1/widget/session', { key })).body.visitor_token;
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

// ---------------------------------------------------------------------------------------------
// Local validators configured like the service's (strict bodies; coercing query and params), so
// the test knows which variants the schema itself refuses and never sends a valid request.

const ajvFor = (coerce: boolean) => {
  const ajv = new Ajv({ coerceTypes: coerce ? 'array' : false, useDefaults: true, strict: false, allErrors: false });
  (addFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  return ajv;
};
const strictAjv = ajvFor(false);
const coercingAjv = ajvFor(true);
const compiled = new Map<unknown, ValidateFunction>();
function validator(schema: Schema, coerce: boolean): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = (coerce ? coercingAjv : strictAjv).compile(schema);
    compiled.set(schema, v);
  }
  return v;
}
const accepts = (schema: Schema, value: unknown, coerce: boolean) =>
  validator(schema, coerce)(structuredClone(value) as unknown);

/** The same shape Fastify's query parser gives: repeated keys become arrays. */
function queryObject(pairs: Array<[string, string]>): Record<string, string | string[]> {
  const o: Record<string, string | string[]> = {};
  for (const [k, v] of pairs) {
    const prev = o[k];
    o[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// A valid sample of a schema: the baseline each variant breaks in exactly one place, so the
// error must point at that place.

const STRING_CANDIDATES = ['UTC', 'a', 'abc', 'abc-def', '#aabbcc', 'a1', 'A', '1', 'Europe/Paris', 'hello world'];

function sample(s: Schema | undefined): unknown {
  if (!s || typeof s !== 'object') return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const branches: Schema[] = s.anyOf ?? s.oneOf;
    const nonNull = branches.find((b) => b.type !== 'null') ?? branches[0];
    return sample(nonNull);
  }
  if (Array.isArray(s.allOf)) {
    return Object.assign({}, ...s.allOf.map((b: Schema) => sample(b) as object));
  }
  const type = Array.isArray(s.type) ? (s.type.find((t: string) => t !== 'null') ?? 'null') : s.type;
  switch (type) {
    case 'string':
      return sampleString(s);
    case 'integer':
    case 'number': {
      if (typeof s.minimum === 'number') return s.minimum;
      if (typeof s.exclusiveMinimum === 'number') return Math.floor(s.exclusiveMinimum) + 1;
      if (typeof s.maximum === 'number') return Math.min(1, s.maximum);
      return 1;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const n = Math.max(1, s.minItems ?? 0);
      const item = s.items as Schema | undefined;
      const branches: Schema[] | undefined = item?.anyOf ?? item?.oneOf;
      if (s.uniqueItems && branches && branches.length >= n) return branches.slice(0, n).map((b) => sample(b));
      return Array.from({ length: n }, () => sample(item));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) out[k] = sample(p);
      return out;
    }
    default:
      return null;
  }
}

function sampleString(s: Schema): string {
  switch (s.format) {
    case 'email':
      return 'hostile.baseline@example.com';
    case 'uuid':
      return randomUUID();
    case 'date-time':
      return new Date(Date.now() + 7 * 86_400_000).toISOString();
    case 'date':
      return '2031-01-01';
    case 'uri':
    case 'url':
      return 'https://example.com/';
  }
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Number.POSITIVE_INFINITY;
  const re = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : null;
  const fits = (c: string) => c.length >= min && c.length <= max && (!re || re.test(c));
  return STRING_CANDIDATES.find(fits) ?? 'a'.repeat(Math.max(1, min));
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

const SQLISH = ["1' OR '1'='1", "'; drop table users; --", '1; select pg_sleep(5)', '" OR ""="'];
/** Over 100 kB, and over the declared maximum whatever it is (within the 1 MiB body limit). */
const hugeString = (s: Schema) => 'a'.repeat(Math.min(900_000, Math.max(100_000, (s.maxLength ?? 0) + 1)));
const WRONG_VALUES: unknown[] = [
  12345,
  -1,
  1.5,
  1e20,
  true,
  null,
  {},
  [],
  [12345],
  [null],
  'not-a-valid-choice',
  '',
  '12',
  SQLISH[0],
];

/** Every declared property of an object schema, nested objects included, with its path. */
function propertiesOf(s: Schema, path: string[] = [], depth = 0): Array<{ path: string[]; schema: Schema }> {
  const out: Array<{ path: string[]; schema: Schema }> = [];
  if (depth > 4 || !s.properties) return out;
  for (const [k, p] of Object.entries(s.properties as Record<string, Schema>)) {
    out.push({ path: [...path, k], schema: p });
    if (p.type === 'object' && p.properties) out.push(...propertiesOf(p, [...path, k], depth + 1));
  }
  return out;
}
/** Nested strict objects (the top level included), where an unknown field must be refused. */
function strictObjectsOf(s: Schema, path: string[] = [], depth = 0): string[][] {
  if (depth > 4 || s.type !== 'object') return [];
  const out = s.additionalProperties === false || depth === 0 ? [path] : [];
  for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    out.push(...strictObjectsOf(p, [...path, k], depth + 1));
  }
  return out;
}
function withValue(base: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(base) as Record<string, any>;
  let at = copy;
  for (const k of path.slice(0, -1)) {
    if (at[k] === null || typeof at[k] !== 'object') at[k] = {};
    at = at[k];
  }
  at[path[path.length - 1]!] = value;
  return copy;
}
const isStringy = (s: Schema) =>
  s.type === 'string' ||
  (Array.isArray(s.type) && s.type.includes('string')) ||
  (Array.isArray(s.anyOf) && s.anyOf.some((b: Schema) => b.type === 'string'));

// ---------------------------------------------------------------------------------------------
// Probes: one request each, with what a correct answer looks like.

interface Probe {
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

const paramNames = (url: string) => [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
const fillUrl = (url: string, values: Record<string, string>) =>
  url.replace(/:(\w+)(\([^)]*\))?/g, (_m, name: string) => values[name] ?? randomUUID()).replace(/\*/g, 'x');

const HOSTILE_PARAMS: Array<[string, string]> = [
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
const ROUTER_REJECTS: Array<[string, string]> = [
  ['invalid percent-encoding', '%ff%fe'],
  ['overlong UTF-8 NUL', '%c0%80'],
  ['lone surrogate (CESU-8)', '%ed%a0%80'],
  ['10k characters', 'c'.repeat(10_000)],
];

const FORGED_AUTH: Array<[string, string]> = [
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
const RAW_BODY_ROUTES: Record<string, { credential: Record<string, string>; contentType: string }> = {
  'POST /v1/inbound/email': {
    credential: { 'svc-inbound-secret': 'test-inbound-secret-0123456789' },
    contentType: 'message/rfc822',
  },
};
const rawBodyRoute = (route: RouteEntry) => RAW_BODY_ROUTES[`${route.method} ${route.url}`];

function credentialsFor(route: RouteEntry): Record<string, string> {
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

const JSON_HEADERS = { 'content-type': 'application/json' };

function probesFor(route: RouteEntry): Probe[] {
  const probes: Probe[] = [];
  const cred = credentialsFor(route);
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

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

async function send(url: string, p: Probe): Promise<Answer> {
  const r = await fetch(url + p.path, { method: p.method, headers: p.headers, body: p.body });
  return { status: r.status, contentType: r.headers.get('content-type') ?? '', text: await r.text() };
}

const LEAKS: Array<[string, RegExp]> = [
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
function problemsOf(p: Probe, a: Answer): string[] {
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

// ---------------------------------------------------------------------------------------------
// The database fingerprint: row counts of every table, the last event seq, the last update.

async function fingerprint(): Promise<Record<string, unknown>> {
  const db = svc.rt.deps.database.db;
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'kysely_migration%'
    order by table_name`.execute(db);
  const out: Record<string, unknown> = {};
  for (const { name } of tables.rows) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}`.execute(db);
    out[`rows:${name}`] = r.rows[0]!.n;
  }
  const seq = await sql<{ s: string | null }>`select max(seq)::text as s from events`.execute(db);
  out['events:max_seq'] = seq.rows[0]!.s;
  const updated = await sql<{ name: string }>`
    select table_name as name from information_schema.columns
    where table_schema = 'public' and column_name = 'updated_at' order by table_name`.execute(db);
  for (const { name } of updated.rows) {
    const r = await sql<{ t: string | null }>`select max(updated_at)::text as t from ${sql.table(name)}`.execute(db);
    out[`updated:${name}`] = r.rows[0]!.t;
  }
  return out;
}

async function inPool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe('hostile input on every route', () => {
  it('answers every malformed or hostile request with a 4xx error body and changes nothing', async () => {
    const routes = svc.rt.app.routeTable;
    const probes = routes.flatMap(probesFor);
    // The walk really covers the table: each kind of input is exercised, and every route that
    // takes any input or a credential gets hostile requests.
    expect(routes.some((r) => r.schema.body)).toBe(true);
    expect(routes.some((r) => r.schema.querystring)).toBe(true);
    expect(routes.some((r) => paramNames(r.url).length > 0)).toBe(true);
    for (const r of routes) {
      const takesInput =
        r.schema.body || r.schema.querystring || paramNames(r.url).length > 0 || r.access.kind !== 'public';
      if (takesInput)
        expect(
          probes.some((p) => p.route === r),
          `${r.method} ${r.url}`,
        ).toBe(true);
    }
    // A bound against a runaway generator, not a target.
    expect(probes.length).toBeLessThan(20_000);

    const before = await fingerprint();
    const workspaceBefore = await svc.api.get('/v1/workspace', tenant.as);
    const meBefore = await svc.api.get('/v1/me', { token: tenant.owner.token });

    const problems: string[] = [];
    await inPool(probes, 8, async (p) => {
      try {
        problems.push(...problemsOf(p, await send(svc.url, p)));
      } catch (err) {
        problems.push(`${p.method} ${p.route.url} [${p.label}]: no answer (${(err as Error).message})`);
      }
    });
    // Soft, so that a wrong answer and a changed database both show in one run.
    expect.soft(problems).toEqual([]);

    // Nothing changed: same rows, same last event, same last update, same answers.
    expect(await fingerprint()).toEqual(before);
    expect((await svc.api.get('/v1/workspace', tenant.as)).body).toEqual(workspaceBefore.body);
    expect((await svc.api.get('/v1/me', { token: tenant.owner.token })).body).toEqual(meBefore.body);
    // And the service is still up.
    const health = await svc.api.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    // Thousands of requests and two whole-database fingerprints: 58-68 s on a slow day of this
    // 2-core machine, past the suite's default 60 s.
  }, 300_000);
});
