// POST /v1/inbound/email?to=<recipient>: raw RFC 822 mail from an MTA (Content-Type
// message/rfc822), authenticated by the SVC-Inbound-Secret header (INBOUND_SECRET, compared in
// constant time). The answer is 202 once the bytes are committed to the spool (ingest.ts); a
// job makes the ticket (inbound.ts).
//
// Order: the secret and the content type are checked in onRequest, before a byte of the body
// is read (a stranger cannot make the server read 30 MB); then `to` is validated (422); the
// body limit is 30 MB
// (INBOUND_LIMITS.maxBytes), over it 413 too_large with nothing stored. Not rate limited: the
// secret is the credential and an MTA may deliver a burst.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { constantTimeEqual } from '../../platform/crypto/random.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ApiError, invalid, tooLarge, unauthorized } from '../../platform/http/errors.js';
import { documentedBody } from '../../platform/http/openapi.js';
import { isInboundMailError } from './errors.js';
import { ingestRaw } from './ingest.js';
import { INBOUND_LIMITS } from './parse.js';

export const INBOUND_SECRET_HEADER = 'svc-inbound-secret';

const InboundQuery = Type.Object(
  {
    to: Type.String({
      minLength: 3,
      maxLength: 998,
      pattern: '^[^\\s@]+@[^\\s@]+$',
      description: 'The recipient the mail was delivered for: a mailbox forwarding_address',
    }),
  },
  { additionalProperties: false },
);

const InboundAccepted = Type.Object(
  {
    id: Type.String({ description: 'The stored raw mail (spool record)' }),
    status: Type.Union([Type.Literal('received'), Type.Literal('unrouted')], {
      description: 'received: queued for processing; unrouted: no mailbox has this address, kept for the operator',
    }),
  },
  { title: 'InboundAccepted' },
);

const isRfc822 = (ct: string | undefined) => typeof ct === 'string' && /^message\/rfc822\s*(?:;|$)/i.test(ct.trim());

export default async function inboundRoutes(app: App, deps: Deps) {
  // Its own scope: the message/rfc822 parser exists for this route only.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser(
      'message/rfc822',
      { parseAs: 'buffer', bodyLimit: INBOUND_LIMITS.maxBytes },
      (_req, body, done) => done(null, body),
    );

    scope.post(
      '/v1/inbound/email',
      {
        bodyLimit: INBOUND_LIMITS.maxBytes,
        config: {
          access: access.public(),
          rateLimited: false,
          idempotent: false,
          // The raw bytes and the secret are checked by the handler and onRequest: documented here.
          swaggerTransform: documentedBody(
            {
              'message/rfc822': {
                schema: {
                  type: 'string',
                  format: 'binary',
                  contentMediaType: 'message/rfc822',
                  description: 'The whole message as received (RFC 5322 headers and MIME body), at most 30 MB.',
                },
              },
            },
            {
              headers: Type.Object({
                'SVC-Inbound-Secret': Type.String({
                  description: 'INBOUND_SECRET of this instance (401 otherwise).',
                }),
              }),
            },
          ),
        },
        schema: {
          tags: ['email'],
          summary: 'Deliver one raw inbound email (message/rfc822, header SVC-Inbound-Secret; at most 30 MB)',
          description:
            'For an MTA or mail relay. Answers 202 once the raw message is durably stored; a job threads it into a ' +
            'ticket. A `to` that matches no mailbox is accepted and kept as unrouted. 401 without the right ' +
            'SVC-Inbound-Secret, 413 too_large over 30 MB (nothing stored), 415 for another content type.',
          querystring: InboundQuery,
          response: { 202: InboundAccepted },
        },
        onRequest: async (req) => {
          const given = req.headers[INBOUND_SECRET_HEADER];
          if (typeof given !== 'string' || !constantTimeEqual(given, deps.config.inboundSecret)) {
            throw unauthorized('Missing or wrong SVC-Inbound-Secret.');
          }
          // A body of another type is refused before it is read; no body at all is the handler's 422.
          const hasBody =
            req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
          if (hasBody && !isRfc822(req.headers['content-type'])) {
            throw new ApiError('unsupported_media_type', 'Send the raw mail with Content-Type message/rfc822.');
          }
        },
      },
      async (req, reply) => {
        const raw = req.body as unknown;
        if (!Buffer.isBuffer(raw) || raw.length === 0) throw invalid('body', 'is empty: send the raw message');
        try {
          const r = await ingestRaw(deps, { raw, recipient: req.query.to, source: 'http' });
          reply.code(202);
          return { id: r.id, status: r.status };
        } catch (err) {
          if (isInboundMailError(err) && err.code === 'too_large') throw tooLarge(err.message);
          throw err;
        }
      },
    );
  });
}
