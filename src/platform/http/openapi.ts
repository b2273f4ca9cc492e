// Helpers for the OpenAPI document (GET /v1/openapi.json) that need no module: operation ids
// made from method and path in one place, and request bodies that are documented but not
// validated by Fastify (multipart uploads, raw email).
import type { FastifySchema } from 'fastify';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const pascal = (words: string) =>
  words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * `GET /v1/tickets/{id}/messages` → `getTicketsByIdMessages`: the method, then each path segment
 * (without the `/v1` version prefix), a `{param}` written `By<Param>`. Unique because method and
 * path are; stable because it changes only when the route does.
 */
export function operationIdOf(method: string, path: string): string {
  const segments = path
    .split('/')
    .filter((s) => s !== '' && s !== 'v1')
    .map((s) => {
      const param = /^\{(.+)\}$/.exec(s);
      return param ? `By${pascal(param[1]!)}` : pascal(s);
    });
  return method.toLowerCase() + segments.join('');
}

/** `ticket.created` → `webhookTicketCreated`. */
export const webhookOperationIdOf = (name: string) => `webhook${pascal(name)}`;

type Operation = { operationId?: string };
type PathItem = Partial<Record<(typeof HTTP_METHODS)[number], Operation>>;

/**
 * Gives every operation of `paths` and `webhooks` that declares none its generated id; a clash
 * (two routes whose paths differ only in punctuation) fails the start rather than shipping a
 * document that a client generator rejects.
 */
export function addOperationIds(doc: { paths?: Record<string, unknown>; webhooks?: Record<string, unknown> }): void {
  const seen = new Map<string, string>();
  const visit = (where: string, item: PathItem, idOf: (method: string) => string) => {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      op.operationId ??= idOf(method);
      const other = seen.get(op.operationId);
      if (other) throw new Error(`OpenAPI operationId ${op.operationId} of ${method} ${where} is also ${other}'s`);
      seen.set(op.operationId, `${method} ${where}`);
    }
  };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    visit(path, item as PathItem, (method) => operationIdOf(method, path));
  }
  for (const [name, item] of Object.entries(doc.webhooks ?? {})) {
    visit(`webhook ${name}`, item as PathItem, () => webhookOperationIdOf(name));
  }
}

/** One media type of a documented body: its JSON Schema (for a file, `type: string, format: binary`). */
export type DocumentedContent = Record<string, { schema: object }>;

/**
 * A route config's `swaggerTransform` for a body that Fastify does not parse into a validated
 * object (a streamed multipart upload, raw bytes of a registered content-type parser): the
 * document shows it, validation is left to the handler. `headers` documents request headers the
 * same way (a credential checked in onRequest, for instance).
 */
export function documentedBody(content: DocumentedContent, extra: { headers?: object } = {}) {
  return ({ schema, url }: { schema: FastifySchema; url: string }) => ({
    schema: { ...schema, body: { content }, ...(extra.headers ? { headers: extra.headers } : {}) },
    url,
  });
}

/**
 * documentedBody for a multipart upload of one part, a file named `file` (attachments, the
 * widget's uploads, pictures): `description` says what the file may be and its limits.
 */
export const documentedFileBody = (description: string) =>
  documentedBody({
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        additionalProperties: false,
        properties: {
          file: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description },
        },
      },
    },
  });
