// Responses whose JSON PostgreSQL already built (json_build_object in the query): sent as
// they are, without parsing them into objects and serialising them again. The query that
// builds the text names exactly the response schema's fields, so it is the allow-list the
// schema would otherwise apply; the route keeps its response schema for the documentation.
import type { FastifyReply } from 'fastify';

/** JSON text in the shape of a response schema. */
export type JsonText = string & { readonly __jsonText: true };

/** `body`: JSON text, or its UTF-8 bytes (a page assembled from kept items). */
export function sendJson(reply: FastifyReply, status: number, body: JsonText | Buffer): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
