// GET /v1/images/{id}: a processed picture, public (an <img> on any page: the app, the help
// center, the widget, an email). Ids are random and name one set of bytes forever, so answers are
// cacheable for a year and revalidate with the id as ETag. Only PNGs this service made are ever
// served, with nosniff and a sandboxing CSP (docs/images.md "Serving"). Not rate limited: a page
// of 50 people shows 50 pictures, and each is a memory read once cached.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import { findPicture, imageKey, type PictureSize } from './store.js';

const ImageParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The picture id (the last segment of an avatar_url).' }),
});
const ImageQuery = Type.Object(
  {
    s: Type.Optional(
      Type.Union([Type.Literal('256'), Type.Literal('64')], { description: 'Size in pixels; default 256.' }),
    ),
  },
  { additionalProperties: false },
);

/** The spec's headers, on 200 and 304 alike. */
const HEADERS = {
  'cache-control': 'public, max-age=31536000, immutable',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  // Shown by pages of other origins (the widget on customers' sites, a custom help center domain).
  'cross-origin-resource-policy': 'cross-origin',
};

const etagOf = (id: string, size: PictureSize) => `"${id}-${size}"`;

function notModified(req: FastifyRequest, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  if (!inm) return false;
  return inm
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

export default async function imageRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/images/:id',
    {
      config: { access: access.public(), rateLimited: false },
      schema: {
        tags: ['images'],
        summary: 'A picture (public): PNG, 256 px or, with s=64, 64 px',
        description:
          'No authentication; ids are random and immutable. Answers carry `Cache-Control: public, ' +
          "max-age=31536000, immutable`, `X-Content-Type-Options: nosniff` and `Content-Security-Policy: default-src 'none'; " +
          'sandbox`, and an ETag (If-None-Match answers 304). A replaced or removed picture stays servable for 7 days.',
        params: ImageParams,
        querystring: ImageQuery,
        response: {
          200: {
            description: 'The picture',
            content: { 'image/png': { schema: Type.String({ format: 'binary' }) } },
          },
          304: { description: 'Not modified (If-None-Match)', type: 'null' },
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const size: PictureSize = req.query.s === '64' ? 64 : 256;
      const etag = etagOf(id, size);
      const cacheKey = `${id}-${size}`;
      let bytes = deps.pictures.served.get(cacheKey);
      if (!bytes) {
        const row = await findPicture(deps.database.db, id);
        if (!row) throw notFound('Picture not found.');
        const stream = await deps.storage.open(imageKey(id, size));
        if (!stream) {
          req.log.warn({ picture: id }, 'picture bytes missing from storage');
          throw notFound('Picture not found.');
        }
        bytes = await readAll(stream);
        deps.pictures.served.set(cacheKey, bytes);
      }
      reply.headers(HEADERS).header('etag', etag);
      if (notModified(req, etag)) return reply.code(304).send();
      return reply.header('content-type', 'image/png').header('content-length', String(bytes.length)).send(bytes);
    },
  );
}
