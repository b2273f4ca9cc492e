// Every answer checked against the route's documented response schema (tests turn it on through
// createRuntime's `checkResponses`). The OpenAPI document is generated from the same schemas, so
// an answer that fails here is one a strict generated client would reject. Off in production:
// the serializer already drops fields the schema does not list.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorSchema } from './schemas.js';

export interface ResponseViolation {
  /** `GET /v1/tickets/:id`, or the path when no route matched. */
  route: string;
  status: number;
  /** What did not match: ajv's errors, or why the answer could not be checked. */
  problems: string[];
  /** The start of the body, to see the offending value. */
  body: string;
}

export type ResponseViolationSink = (violation: ResponseViolation) => void;

type Schemas = Record<string, unknown>;

/** The schema a status is documented under: its exact code, then `2XX`-style ranges, then default. */
function schemaFor(response: Schemas, status: number): unknown {
  return response[String(status)] ?? response[`${String(status)[0]}XX`] ?? response.default;
}

/**
 * The schema as the check applies it: `$id`s dropped (equal schemas compiled twice would clash,
 * and nothing refers to them), and every object that lists its properties closed to others
 * unless it says otherwise. Answers the serializer builds drop unlisted fields anyway; answers
 * whose JSON PostgreSQL built (sendJson) must list only documented fields, and this proves it.
 * Branches of an allOf stay open: each lists only its part of the object.
 */
function checkedSchema(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => checkedSchema(s, inAllOf));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$id') continue;
    out[k] = k === 'allOf' ? checkedSchema(v, true) : k === 'properties' ? mapValues(v) : checkedSchema(v);
  }
  if (!inAllOf && out.properties !== undefined && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

const mapValues = (props: unknown) =>
  Object.fromEntries(Object.entries(props as Record<string, unknown>).map(([k, v]) => [k, checkedSchema(v)]));

const describe = (e: ErrorObject) =>
  `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
      : ''
  }`;

export function installResponseCheck(app: FastifyInstance, sink: ResponseViolationSink): void {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: false, useDefaults: false });
  (addFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  const compiled = new Map<unknown, ValidateFunction>();
  const validatorOf = (schema: unknown) => {
    let v = compiled.get(schema);
    if (!v) {
      v = ajv.compile(checkedSchema(schema) as object);
      compiled.set(schema, v);
    }
    return v;
  };

  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const status = reply.statusCode;
    const routeUrl = req.routeOptions?.url;
    const route = `${req.method} ${routeUrl ?? req.url.split('?')[0]}`;
    const response = (req.routeOptions?.schema?.response ?? null) as Schemas | null;
    // Answers outside the route table (404 for unknown paths, 405) must still be error bodies.
    const schema = response ? schemaFor(response, status) : status >= 400 ? ErrorSchema : undefined;
    if (routeUrl?.startsWith('/docs') || routeUrl === '/v1/openapi.json') return payload;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    const report = (problems: string[]) =>
      sink({ route, status, problems, body: (text ?? `<${typeof payload}>`).slice(0, 500) });
    if (schema === undefined) {
      if (response) report([`status ${status} is not documented for this route`]);
      return payload;
    }
    if (status === 204 || status === 304) return payload;
    const type = String(reply.getHeader('content-type') ?? '');
    if (!/^application\/([\w.+-]+\+)?json\b/.test(type)) return payload; // files, pages, streams
    if (text === null) {
      report(['the body is not text']);
      return payload;
    }
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      report(['the body is not JSON']);
      return payload;
    }
    const validate = validatorOf(schema);
    if (!validate(body)) report((validate.errors ?? []).map(describe));
    return payload;
  });
}
