// The fixed request pipeline every route shares: body parsing, validation compilers,
// the error model (every failure is {status, code, detail, errors?}), 404/405, and one
// JSON log line per request.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { type Serializer, type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
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

/** The plain text form of a UUID (the `uuid` format of every validator). */
export const UUID_FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ajvFor = (coerce: boolean) => {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  (addFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  // ajv-formats' uuid also takes `urn:uuid:…`, which PostgreSQL's uuid type refuses: a value the
  // schema accepted would then fail in the database. The plain RFC 9562 text form only.
  ajv.addFormat('uuid', UUID_FORMAT);
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
    onFirstUse(() => (httpPart === 'body' ? strict : coercing).compile(schema as object)),
  );
}

/**
 * A route's validator, compiled by ajv when it first validates a request rather than when the
 * route is added: compiling the ~180 request schemas was about half a second of every start, and
 * a process may never see a request on most routes. The same ajv and schema, so the same checks;
 * Fastify reads `schemaEnv` (then lets ajv coerce and default a whole value) and `errors`.
 */
function onFirstUse(compile: () => ValidateFunction) {
  let fn: ValidateFunction | undefined;
  const compiled = () => {
    fn ??= compile();
    return fn;
  };
  const validate = (data: unknown, cxt?: Parameters<ValidateFunction>[1]) => compiled()(data, cxt);
  Object.defineProperty(validate, 'schemaEnv', { get: () => compiled().schemaEnv });
  Object.defineProperty(validate, 'errors', { get: () => fn?.errors ?? null });
  return validate;
}

/**
 * Fastify's own response serializers (fast-json-stringify, its options), one per schema rather
 * than one per route and status code, compiled when it first serializes an answer rather than
 * when its route is added. Every route answers 4XX and 5XX with the same ErrorSchema, and
 * resources (Ticket, Contact, …) are shared by several routes: 575 compiles at start were 99
 * schemas, and most are never used by a given process. A serializer depends on nothing but its
 * schema and the options.
 */
export function sharedSerializers(): SerializerFactory {
  const selector = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = selector(externalSchemas, options);
    const shared = new WeakMap<object, Serializer>();
    return (route) => {
      const schema = route.schema;
      if (typeof schema !== 'object' || schema === null) return compile(route);
      let serializer = shared.get(schema);
      if (!serializer) {
        let fn: Serializer | undefined;
        serializer = (doc) => {
          fn ??= compile(route);
          return fn(doc);
        };
        shared.set(schema, serializer);
      }
      return serializer;
    };
  };
}

const UNSTORABLE = 'contains a NUL character or invalid Unicode';

/**
 * The first value of a parsed input that is refused wherever it appears: a string the database
 * cannot hold (NUL, lone surrogates), or a `__proto__` key (JSON.parse keeps it as an own
 * property, but schema checks and object spreads take it for the prototype, so it would be
 * dropped without a word; it is refused like any unknown field instead).
 */
function findRefused(value: unknown, path: string, depth = 0): FieldError | null {
  if (depth > 64) return { location: path, message: 'is nested too deeply' };
  if (typeof value === 'string') {
    return value.includes('\0') || !value.isWellFormed() ? { location: path, message: UNSTORABLE } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findRefused(value[i], `${path}.${i}`, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\0') || !k.isWellFormed()) {
        return { location: `${path}.${k.replace(/[\0\ud800-\udfff]/g, '?')}`, message: UNSTORABLE };
      }
      if (k === '__proto__') return { location: `${path}.__proto__`, message: 'is not a known field' };
      const bad = findRefused(v, `${path}.${k}`, depth + 1);
      if (bad) return bad;
    }
  }
  return null;
}

const refusal = (e: FieldError) => new ApiError('validation_failed', `${e.location} ${e.message}`, [e]);

/**
 * Path and query values the database cannot hold are refused for every route, here, where they
 * are first read as text (bodies: the JSON parser below). Runs after authorization, before the
 * route's schema.
 */
export function installTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    const bad = findRefused(req.params, 'path') ?? findRefused(req.query, 'query');
    if (bad) throw refusal(bad);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** JSON media types, parameters allowed (`application/json; charset=utf-8`: Stripe's webhooks, many clients). */
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i;

export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer' }, (req, body: Buffer, done) => {
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
    const bad = findRefused(parsed, 'body');
    if (bad) {
      done(refusal(bad));
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
  if (isDatabaseUnavailable(err)) {
    return {
      body: new ApiError('unavailable', 'The database cannot be reached right now; try again shortly.').toBody(),
    };
  }
  return { body: new ApiError('internal_error', 'Something went wrong on our side.').toBody() };
}

/**
 * Node errors of a connection refused, reset or cut, and PostgreSQL's SQLSTATEs for a server
 * that is not there: class 08 (connection exception), 57P01-57P03 (shutting down, restarting,
 * not accepting yet), 53300 (too many connections).
 */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
];

/**
 * The database is down, restarting or out of reach (a request then answers 503 `unavailable`,
 * not 500): the error or one of its causes.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; i++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300') {
      return true;
    }
    const message = typeof e.message === 'string' ? e.message : '';
    if (UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
    e = e.cause as typeof e;
  }
  return false;
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
    if (body.code === 'unavailable' && !(err instanceof ApiError)) {
      req.log.warn({ reqId: req.id, error: errorFacts(err) }, 'request failed: the database is unavailable');
    } else if (body.status >= 500) {
      body.detail = `Something went wrong on our side (request ${req.id}).`;
      req.log.error({ reqId: req.id, error: errorFacts(err) }, 'request failed');
    }
    if (headers) reply.headers(headers);
    reply.code(body.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}

/**
 * 404 for unknown paths; 405 (with Allow) when the path exists under other methods. A path that
 * names a fixed route (`/v1/tickets/counts`) asked with a method only a `/{id}` route has
 * (`DELETE /v1/tickets/counts`) is a 405 too, not a lookup of a record called "counts".
 */
export function installNotFound(app: FastifyInstance): void {
  const router = FindMyWay({ ignoreTrailingSlash: false });
  const noop = () => {};
  /** Fixed paths (no parameter) and the methods they are served under. */
  const fixed = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      try {
        router.on(m as 'GET', route.url, noop);
      } catch {
        // already known
      }
      if (!route.url.includes(':') && !route.url.includes('*')) {
        const known = fixed.get(route.url) ?? [];
        if (!known.includes(m)) fixed.set(route.url, [...known, m]);
      }
    }
  });
  const methodNotAllowed = (reply: FastifyReply, method: string, allowed: string[]) => {
    const err = new ApiError('method_not_allowed', `${method} is not allowed here; use ${allowed.join(', ')}.`);
    reply.header('allow', allowed.join(', '));
    return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(err.toBody()));
  };
  /** A request no route serves: 405 when its path is served under other methods, else 404. */
  const unrouted = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed =
      fixed.get(path) ??
      ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
        (m) => m !== req.method && router.find(m as 'GET', path) !== null,
      );
    if (allowed.length > 0) return methodNotAllowed(reply, req.method, allowed);
    const err = new ApiError('not_found', 'No such route.');
    return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(err.toBody()));
  };
  app.addHook('onRequest', async (req, reply) => {
    // Answered before the body is read: a body sent to no route is never parsed (a QUERY
    // request without Content-Type would otherwise be a 400 from the body parser).
    if (req.is404) return unrouted(req, reply);
    const route = req.routeOptions.url;
    if (route === undefined || !route.includes(':')) return;
    const allowed = fixed.get(req.url.split('?')[0] ?? '');
    if (allowed && !allowed.includes(req.method)) return methodNotAllowed(reply, req.method, allowed);
  });
  app.setNotFoundHandler(unrouted);
}

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    const auth = req.auth;
    req.log.info(
      {
        method: req.method,
        // The path only (query strings may carry tokens), with a token in the path (a rating
        // link, a portal sign-in link) replaced by its parameter's name.
        path: loggedPath(req),
        route: req.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(auth && (auth.kind === 'key' || auth.kind === 'user') && auth.ctx
          ? { workspace: auth.ctx.workspaceId }
          : auth?.kind === 'visitor'
            ? { workspace: auth.visitor.workspaceId }
            : {}),
      },
      'request',
    );
    done();
  });
}

/** Path parameters that are secrets: logged by name, never by value. */
const SECRET_PARAMS = ['token'] as const;

/** The request's path for the log: no query string, no secret path parameter. */
export function loggedPath(req: FastifyRequest): string {
  let path = req.url.split('?')[0] ?? '/';
  const params = (req.params ?? {}) as Record<string, unknown>;
  for (const name of SECRET_PARAMS) {
    const value = params[name];
    if (typeof value !== 'string' || value === '') continue;
    path = path
      .split('/')
      .map((seg) => (seg === value || safeDecode(seg) === value ? `:${name}` : seg))
      .join('/');
  }
  return path;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
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

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over the size limit, a
 * malformed request line or header, a request that took too long to arrive): the same error body
 * as everything else, then the connection closes, since the stream cannot be trusted.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large', 'The request headers are larger than this service accepts (16 KiB).')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request did not arrive in time.')
        : badRequest('The request could not be read as HTTP.');
  const body = JSON.stringify(e.toBody());
  const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[e.status];
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${e.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
