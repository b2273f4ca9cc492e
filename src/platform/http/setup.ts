// The fixed request pipeline every route shares: body parsing, validation compilers,
// the error model (every failure is {status, code, detail, errors?}), 404/405, and one
// JSON log line per request.
import { randomUUID } from 'node:crypto';
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { ApiError, badRequest, type ErrorBody, type FieldError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw JSON text of the body, for idempotency hashing. */
    rawBody?: string;
  }
}

const ajvFor = (coerce: boolean) => {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  (addFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  return ajv;
};

// One pair per process, not per app: Ajv keeps what it compiled per schema object, and the route
// schemas are the same objects in every app, so an app built again in the same process (the tests
// start dozens) does not compile them again (~0.3 s of each start).
const strict = ajvFor(false);
const coercing = ajvFor(true);

export function installValidation(app: FastifyInstance): void {
  // Bodies are strict JSON: "5" is not a number. Query strings and params arrive as text.
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object),
  );
}

/** Strings the database cannot hold (NUL, lone surrogates) anywhere in a parsed value. */
function findUnstorable(value: unknown, path: string, depth = 0): string | null {
  if (depth > 64) return path;
  if (typeof value === 'string') return value.includes('\0') || !value.isWellFormed() ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findUnstorable(value[i], `${path}.${i}`, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\0') || !k.isWellFormed()) return `${path}.${k.replace(/[\0\ud800-\udfff]/g, '?')}`;
      const bad = findUnstorable(v, `${path}.${k}`, depth + 1);
      if (bad) return bad;
    }
  }
  return null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/, { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      done(badRequest('The body is not valid UTF-8.'), undefined);
      return;
    }
    req.rawBody = text;
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      done(badRequest('The body is not valid JSON.'), undefined);
      return;
    }
    const bad = findUnstorable(parsed, 'body');
    if (bad) {
      done(
        new ApiError('validation_failed', `${bad}: contains a NUL character or invalid Unicode`, [
          { location: bad, message: 'contains a NUL character or invalid Unicode' },
        ]),
      );
      return;
    }
    done(null, parsed);
  });
}

const PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function locate(part: string, e: ErrorObject): string {
  const base = PART[part] ?? part;
  const path = e.instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') path.push(String((e.params as { missingProperty: string }).missingProperty));
  if (e.keyword === 'additionalProperties') {
    path.push(String((e.params as { additionalProperty: string }).additionalProperty));
  }
  return [base, ...path].join('.');
}

function describe(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') return 'is not a known field';
  if (e.keyword === 'required') return 'is required';
  return e.message ?? 'is invalid';
}

export function toErrorBody(err: FastifyError | ApiError | Error): {
  body: ErrorBody;
  headers?: Record<string, string>;
} {
  if (err instanceof ApiError) return { body: err.toBody(), ...(err.headers ? { headers: err.headers } : {}) };
  const fe = err as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (fe.validation) {
    const errors: FieldError[] = fe.validation.map((e) => ({
      location: locate(fe.validationContext ?? 'body', e),
      message: describe(e),
    }));
    const first = errors[0]!;
    return { body: new ApiError('validation_failed', `${first.location} ${first.message}`, errors).toBody() };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { body: new ApiError('too_large', 'The body is larger than this route accepts.').toBody() };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return {
        body: new ApiError('unsupported_media_type', 'Send the body as application/json.').toBody(),
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { body: badRequest('The body is not valid JSON.').toBody() };
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Framework-level client errors (bad URL encoding and the like): say what, never how.
    return { body: badRequest('The request could not be read.').toBody() };
  }
  return { body: new ApiError('internal_error', 'Something went wrong on our side.').toBody() };
}

/** Logged facts about an unexpected error: its kind and message, never its stack or SQL. */
function errorFacts(err: Error): Record<string, unknown> {
  const e = err as Error & { code?: unknown };
  return {
    type: err.constructor?.name ?? 'Error',
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    message: String(err.message ?? '').slice(0, 200),
  };
}

export function installErrors(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const { body, headers } = toErrorBody(err);
    if (body.status >= 500) {
      body.detail = `Something went wrong on our side (request ${req.id}).`;
      req.log.error({ reqId: req.id, error: errorFacts(err) }, 'request failed');
    }
    if (headers) reply.headers(headers);
    reply.code(body.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}

/** 404 for unknown paths; 405 (with Allow) when the path exists under other methods. */
export function installNotFound(app: FastifyInstance): void {
  const router = FindMyWay({ ignoreTrailingSlash: false });
  const noop = () => {};
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      try {
        router.on(m as 'GET', route.url, noop);
      } catch {
        // already known
      }
    }
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
      (m) => m !== req.method && router.find(m as 'GET', path) !== null,
    );
    const err =
      allowed.length > 0
        ? new ApiError('method_not_allowed', `${req.method} is not allowed here; use ${allowed.join(', ')}.`)
        : new ApiError('not_found', 'No such route.');
    if (allowed.length > 0) reply.header('allow', allowed.join(', '));
    reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(err.toBody()));
  });
}

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    const auth = req.auth;
    req.log.info(
      {
        method: req.method,
        // The path only: query strings may carry tokens.
        path: req.url.split('?')[0],
        route: req.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(auth && (auth.kind === 'key' || auth.kind === 'user') && auth.ctx
          ? { workspace: auth.ctx.workspaceId }
          : {}),
      },
      'request',
    );
    done();
  });
}

export const genReqId = () => randomUUID();

/**
 * Errors Fastify raises before routing (an undecodable URL, a parameter over the router's
 * length limit): the same error body as everything else, never the raw path echoed back.
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const body =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('not_found', 'No such record.').toBody()
      : badRequest('The URL could not be read.').toBody();
  reply.code(body.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}
