// Idempotency-Key on authenticated POST routes (interface.md "Idempotency", rules 1-7).
// The first request claims the key (state running); its answer is stored unless it is a
// 5xx, a 429 or larger than 1 MiB; a retry within 24 hours gets the stored answer back.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { SecretBox } from '../crypto/secrets.js';
import type { Database } from '../db/index.js';
import { callerKey } from './context.js';
import { ApiError, invalid } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: Idempotency-Key is not applied (sign-in, token and stream routes). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency?: { caller: string; key: string; replayed: boolean };
  }
}

const KEEP_MS = 24 * 3600 * 1000;
/** How long a claim protects a running request; after that a crashed claim can be taken over. */
const CLAIM_MS = 60_000;
const MAX_STORED = 1024 * 1024;
const KEY_RE = /^[\x20-\x7e]{1,255}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * Stored answers are encrypted (they can carry a secret shown once, such as a new API key),
 * bound to their caller and key.
 */
export function installIdempotency(app: FastifyInstance, database: Database, box: SecretBox): void {
  const db = database.db;

  async function claim(req: FastifyRequest, reply: FastifyReply) {
    const header = req.headers['idempotency-key'];
    if (header === undefined) return;
    if (typeof header !== 'string' || !KEY_RE.test(header)) {
      throw invalid('header.idempotency-key', 'must be 1 to 255 printable ASCII characters');
    }
    // The caller: the API key, or the signed-in user in the selected workspace (SVC-Workspace,
    // also on routes that do not need one).
    const auth = req.auth;
    const selected = req.ctx ?? (auth.kind === 'user' ? auth.ctx : null);
    const caller = selected ? callerKey(selected) : `u:${req.user.userId}:`;
    const route = `${req.method} ${req.url.split('?')[0]}`;
    const bodyHash = sha256(`${req.url}\n${req.rawBody ?? ''}`);
    const now = Date.now();

    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await db
        .insertInto('idempotency_keys')
        .values({
          caller,
          key: header,
          workspace_id: req.ctx?.workspaceId ?? null,
          route,
          body_hash: bodyHash,
          state: 'running',
          locked_until: new Date(now + CLAIM_MS),
        })
        .onConflict((oc) => oc.columns(['caller', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (inserted) {
        req.idempotency = { caller, key: header, replayed: false };
        return;
      }
      const row = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('caller', '=', caller)
        .where('key', '=', header)
        .executeTakeFirst();
      if (!row) continue; // removed meanwhile: claim again
      if (row.created_at.getTime() < now - KEEP_MS) {
        await db.deleteFrom('idempotency_keys').where('caller', '=', caller).where('key', '=', header).execute();
        continue;
      }
      if (row.route !== route || row.body_hash !== bodyHash) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with another route or body.');
      }
      if (row.state === 'running') {
        if (row.locked_until.getTime() > now) {
          throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.');
        }
        // The first request's process died: take the claim over.
        const taken = await db
          .updateTable('idempotency_keys')
          .set({ locked_until: new Date(now + CLAIM_MS) })
          .where('caller', '=', caller)
          .where('key', '=', header)
          .where('state', '=', 'running')
          .where('locked_until', '=', row.locked_until)
          .returning('key')
          .executeTakeFirst();
        if (!taken)
          throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.');
        req.idempotency = { caller, key: header, replayed: false };
        return;
      }
      req.idempotency = { caller, key: header, replayed: true };
      const headers = (row.headers ?? {}) as Record<string, string>;
      for (const [k, v] of Object.entries(headers)) reply.header(k, v);
      reply.header('idempotent-replayed', 'true');
      reply.code(row.status_code ?? 200);
      return reply.send(row.body ? (box.open(row.body, `${caller}\n${header}`) ?? '') : '');
    }
    throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.');
  }

  async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const idem = req.idempotency;
    if (!idem || idem.replayed) return payload;
    const where = db
      .deleteFrom('idempotency_keys')
      .where('caller', '=', idem.caller)
      .where('key', '=', idem.key)
      .where('state', '=', 'running');
    const status = reply.statusCode;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    if (status >= 500 || status === 429 || text === null || Buffer.byteLength(text) > MAX_STORED) {
      await where.execute();
      return payload;
    }
    const headers: Record<string, string> = {};
    const ct = reply.getHeader('content-type');
    if (ct !== undefined) headers['content-type'] = String(ct);
    const loc = reply.getHeader('location');
    if (loc !== undefined) headers['location'] = String(loc);
    await db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        status_code: status,
        headers: JSON.stringify(headers),
        body: box.seal(text, `${idem.caller}\n${idem.key}`),
      })
      .where('caller', '=', idem.caller)
      .where('key', '=', idem.key)
      .execute();
    return payload;
  }

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const acc = route.config?.access;
    if (!methods.includes('POST') || !acc || acc.kind === 'public' || route.config?.idempotent === false) return;
    const pre = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [claim, ...pre];
    const onSend = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
    route.onSend = [...onSend, store];
  });
}

/** Removes stored answers older than 24 hours (maintenance job). */
export async function pruneIdempotencyKeys(database: Database): Promise<number> {
  const r = await database.db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - interval '24 hours'`)
    .executeTakeFirst();
  return Number(r.numDeletedRows ?? 0);
}
