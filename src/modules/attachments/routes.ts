// /v1/attachments: uploaded by agents and above (keys tickets:write), read by any member (keys
// tickets:read or tickets:write) or by anyone holding the url's token (an <img> tag).
// Multipart bodies are accepted by the upload route only: the multipart parser is registered
// in a scope of its own, so every other route still answers 415 to multipart.
import { unlink } from 'node:fs/promises';
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access, type RequestContext } from '../../platform/http/context.js';
import { documentedFileBody } from '../../platform/http/openapi.js';
import { IdParams } from '../../platform/http/schemas.js';
import { spoolDirOf } from './purge.js';
import { Attachment, DownloadQuery } from './schemas.js';
import { attachmentNotFound, createAttachment, findDownload } from './service.js';
import { receiveUpload } from './upload.js';
import { attachmentUrls, looksLikeToken } from './urls.js';

/** How long a storage server's signed URL (the redirect target) stays valid. */
const PRESIGNED_SECONDS = 300;

/** Served as themselves; every other type is served as application/octet-stream. */
const SAFE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'video/mp4',
  'video/webm',
  'video/quicktime',
  'application/zip',
]);
/** Shown in the page rather than downloaded. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export function servedType(contentType: string): string {
  if (contentType === 'text/plain') return 'text/plain; charset=utf-8';
  return SAFE_TYPES.has(contentType) ? contentType : 'application/octet-stream';
}

/** RFC 6266: an ASCII fallback and the exact name in RFC 8187 encoding. */
export function contentDisposition(filename: string, contentType: string): string {
  const kind = INLINE_TYPES.has(contentType) ? 'inline' : 'attachment';
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

export default async function attachmentRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'tickets:read', 'tickets:write');
  const write = access.member('agent', 'tickets:write');
  const urls = attachmentUrls(deps.config);
  const maxBytes = deps.config.attachmentMaxMb * 1024 * 1024;

  await app.register(async (scope: App) => {
    await scope.register(multipart);
    scope.post(
      '/v1/attachments',
      {
        // Idempotency-Key hashes the raw body, which a streamed multipart upload does not have
        // at that point: the key is not applied here (docs/decisions.md "Attachments").
        config: {
          access: write,
          idempotent: false,
          // The body is streamed by the handler, not validated by Fastify: documented here.
          swaggerTransform: documentedFileBody(
            `The file; its part's filename is kept. At most ATTACHMENT_MAX_MB (${deps.config.attachmentMaxMb} ` +
              'MB here, 25 by default); over it 413 too_large. No other part: 422 at body.file.',
          ),
        },
        schema: {
          tags: ['attachments'],
          summary: 'Upload a file (multipart/form-data, one field named file)',
          description:
            `One part: a file field named \`file\`, up to ATTACHMENT_MAX_MB (${deps.config.attachmentMaxMb} MB ` +
            'here; over it 413 too_large). The content type is sniffed from the bytes. The upload stays ' +
            'unattached until a message lists it in attachment_ids; unattached uploads are removed after 24 hours.',
          consumes: ['multipart/form-data'],
          response: { 201: Attachment },
        },
      },
      async (req, reply) => {
        const upload = await receiveUpload(req, maxBytes, spoolDirOf(deps.config));
        try {
          const attachment = await createAttachment(deps, req.ctx, upload);
          reply.code(201).header('location', `/v1/attachments/${attachment.id}`);
          return attachment;
        } finally {
          await unlink(upload.path).catch(() => {});
        }
      },
    );
  });

  // A url token stands for the credential: checked before authorization, it gives the request a
  // read-only context of the token's workspace. Tampered and expired tokens answer 404, like a
  // missing attachment. Values not shaped like a token are left to validation (422).
  const viaToken = new WeakSet<FastifyRequest>();
  async function tokenCredential(req: FastifyRequest) {
    const token = (req.query as { token?: unknown }).token;
    if (!looksLikeToken(token)) return;
    const id = (req.params as { id?: string }).id ?? '';
    const workspaceId = urls.verify(token, id);
    if (!workspaceId) throw attachmentNotFound();
    const ctx: RequestContext = {
      workspaceId,
      // Not a real key: the token's grant, read-only and for this one attachment.
      actor: { kind: 'api_key', apiKeyId: 'attachment-url-token', createdBy: null },
      role: null,
      scopes: ['tickets:read'],
      teams: [],
      ip: req.ip,
    };
    req.auth = { kind: 'key', ctx };
    viaToken.add(req);
  }

  app.get(
    '/v1/attachments/:id',
    {
      config: { access: read },
      onRequest: tokenCredential,
      schema: {
        tags: ['attachments'],
        summary: 'Download a file: a redirect to a short-lived signed URL, or the bytes',
        description:
          'Works with the `token` of the Attachment url and no other credential (img tags), or with a ' +
          'normal credential. Storage that can sign answers 302 to its own URL (valid 5 minutes); otherwise the ' +
          'bytes come with Content-Disposition, X-Content-Type-Options: nosniff and a sandboxing ' +
          'Content-Security-Policy. Only PNG, JPEG, GIF and WebP are inline; HTML, SVG, XML and other ' +
          'types that are not on a short safe list are served as application/octet-stream.',
        params: IdParams,
        querystring: DownloadQuery,
        response: {
          200: {
            description: 'The file',
            // Every type servedType() answers with (the fuzzer got text/plain, documented nowhere).
            content: Object.fromEntries(
              ['text/plain', ...SAFE_TYPES, 'application/octet-stream'].map((type) => [
                type,
                { schema: Type.String({ format: 'binary' }) },
              ]),
            ),
          },
          302: { description: 'Redirect to the storage server (Location)', type: 'null' },
        },
      },
    },
    async (req, reply) => {
      const file = await findDownload(deps, req.ctx, req.params.id, { viaToken: viaToken.has(req) });
      const type = servedType(file.contentType);
      const disposition = contentDisposition(file.filename, file.contentType);
      reply
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('referrer-policy', 'no-referrer');
      const signed = await deps.storage.presignedGet(file.storageKey, {
        contentType: type,
        contentDisposition: disposition,
        expiresInSeconds: PRESIGNED_SECONDS,
      });
      if (signed) {
        return reply.code(302).header('cache-control', 'no-store').header('location', signed).send();
      }
      const stream = await deps.storage.open(file.storageKey);
      if (!stream) {
        req.log.warn({ attachment: req.params.id }, 'attachment bytes missing from storage');
        throw attachmentNotFound();
      }
      return reply
        .header('content-type', type)
        .header('content-length', String(file.size))
        .header('content-disposition', disposition)
        .header('cache-control', 'private, max-age=300')
        .send(stream);
    },
  );
}
