// Schemas sampled and broken for test/bad-input.test.ts: local validators configured like the
// service's, a valid sample of a schema (the baseline each variant breaks in exactly one place),
// and hostile values.
import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export type Schema = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Local validators configured like the service's (strict bodies; coercing query and params), so
// the test knows which variants the schema itself refuses and never sends a valid request.

export const ajvFor = (coerce: boolean) => {
  const ajv = new Ajv({ coerceTypes: coerce ? 'array' : false, useDefaults: true, strict: false, allErrors: false });
  (addFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  return ajv;
};
export const strictAjv = ajvFor(false);
export const coercingAjv = ajvFor(true);
export const compiled = new Map<unknown, ValidateFunction>();
export function validator(schema: Schema, coerce: boolean): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = (coerce ? coercingAjv : strictAjv).compile(schema);
    compiled.set(schema, v);
  }
  return v;
}
export const accepts = (schema: Schema, value: unknown, coerce: boolean) =>
  validator(schema, coerce)(structuredClone(value) as unknown);

/** The same shape Fastify's query parser gives: repeated keys become arrays. */
export function queryObject(pairs: Array<[string, string]>): Record<string, string | string[]> {
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

export const STRING_CANDIDATES = [
  'UTC',
  'a',
  'abc',
  'abc-def',
  '#aabbcc',
  'a1',
  'A',
  '1',
  'Europe/Paris',
  'hello world',
];

export function sample(s: Schema | undefined): unknown {
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

export function sampleString(s: Schema): string {
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

export const SQLISH = ["1' OR '1'='1", "'; drop table users; --", '1; select pg_sleep(5)', '" OR ""="'];
/** Over 100 kB, and over the declared maximum whatever it is (within the 1 MiB body limit). */
export const hugeString = (s: Schema) => 'a'.repeat(Math.min(900_000, Math.max(100_000, (s.maxLength ?? 0) + 1)));
export const WRONG_VALUES: unknown[] = [
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
export function propertiesOf(s: Schema, path: string[] = [], depth = 0): Array<{ path: string[]; schema: Schema }> {
  const out: Array<{ path: string[]; schema: Schema }> = [];
  if (depth > 4 || !s.properties) return out;
  for (const [k, p] of Object.entries(s.properties as Record<string, Schema>)) {
    out.push({ path: [...path, k], schema: p });
    if (p.type === 'object' && p.properties) out.push(...propertiesOf(p, [...path, k], depth + 1));
  }
  return out;
}
/** Nested strict objects (the top level included), where an unknown field must be refused. */
export function strictObjectsOf(s: Schema, path: string[] = [], depth = 0): string[][] {
  if (depth > 4 || s.type !== 'object') return [];
  const out = s.additionalProperties === false || depth === 0 ? [path] : [];
  for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    out.push(...strictObjectsOf(p, [...path, k], depth + 1));
  }
  return out;
}
export function withValue(base: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(base) as Record<string, any>;
  let at = copy;
  for (const k of path.slice(0, -1)) {
    if (at[k] === null || typeof at[k] !== 'object') at[k] = {};
    at = at[k];
  }
  at[path[path.length - 1]!] = value;
  return copy;
}
export const isStringy = (s: Schema) =>
  s.type === 'string' ||
  (Array.isArray(s.type) && s.type.includes('string')) ||
  (Array.isArray(s.anyOf) && s.anyOf.some((b: Schema) => b.type === 'string'));
