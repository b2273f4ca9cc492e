// Idempotency-Key on authenticated POST routes (docs/api.md "Idempotency", rules 1-7).
//
// 1. Claim (before the handler, its own statement): the key's row, state `running`, with a
//    random claim token and a lease. Another request with the key meanwhile gets 409.
// 2. Every transaction the handler commits binds itself to the claim, in that transaction
//    (WriteFence, src/platform/db/tx.ts): the row becomes `committed` and keeps what the
//    transaction returned. If the claim was taken over, the transaction rolls back instead.
// 3. The answer is stored (`done`) after it is sent, unless it is a 5xx, a 429 or over 1 MiB.
//
// After a crash, a retry finds one of three rows once the lease has passed:
//   running   nothing was committed under the key: the retry takes the claim and runs;
//   committed writes were committed, the answer was not stored: the retry takes the claim and
//             runs the handler again with each committed transaction replaced by what it
//             returned, so it rebuilds the same answer without writing twice;
//   done      the stored answer is sent back.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { sql, type Transaction } from 'kysely';
import type { SecretBox } from '../crypto/secrets.js';
import type { Database } from '../db/index.js';
import type { DB } from '../db/schema.js';
import type { WriteFence, Writer } from '../db/tx.js';
import { callerKey } from './context.js';
import { ApiError, invalid } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: Idempotency-Key is not applied (sign-in, token and stream routes). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency?: { caller: string; key: string; replayed: boolean; fence: KeyFence | null };
  }
}

const KEEP_MS = 24 * 3600 * 1000;
const MAX_STORED = 1024 * 1024;
const KEY_RE = /^[\x20-\x7e]{1,255}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
const newToken = () => randomBytes(16).toString('base64url');
/** Results are JSON; a bigint (a count, say) is kept as its digits. */
const toJson = (v: unknown) => JSON.stringify(v ?? null, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

/** The claim of one request on its key: the fence its transactions pass through. */
class KeyFence implements WriteFence {
  closed = false;
  /** What the transactions committed under this key returned, in order (replays included). */
  committed: unknown[];
  private readonly pending: unknown[];

  constructor(
    private readonly box: SecretBox,
    private readonly leaseMs: number,
    readonly caller: string,
    readonly key: string,
    readonly token: string,
    earlier: unknown[],
  ) {
    this.committed = [...earlier];
    this.pending = [...earlier];
  }

  replayed(): { value: unknown } | undefined {
    return this.pending.length > 0 ? { value: this.pending.shift() } : undefined;
  }

  async bind(trx: Transaction<DB>, value: unknown): Promise<void> {
    const results = toJson([...this.committed, value]);
    const held = await trx
      .updateTable('idempotency_keys')
      .set({
        state: 'committed',
        results: this.box.seal(results, sealedFor(this.caller, this.key)),
        locked_until: new Date(Date.now() + this.leaseMs),
      })
      .where('caller', '=', this.caller)
      .where('key', '=', this.key)
      .where('claim', '=', this.token)
      .where('state', 'in', ['running', 'committed'])
      .returning('key')
      .executeTakeFirst();
    if (!held) {
      throw new ApiError(
        'idempotency_in_progress',
        'A retry with this Idempotency-Key took it over while this request ran; this request changed nothing.',
      );
    }
  }

  bound(value: unknown): void {
    this.committed.push(JSON.parse(toJson(value)));
  }
}

const sealedFor = (caller: string, key: string) => `${caller}\n${key}`;

/**
 * Stored answers and results are encrypted (they can carry a secret shown once, such as a new
 * API key), bound to their caller and key. `leaseMs`: how long a claim (or a committed request
 * still finishing) holds the key before a retry may take it over.
 */
export function installIdempotency(
  app: FastifyInstance,
  database: Database,
  box: SecretBox,
  writer: Writer,
  leaseMs: number,
): void {
  const db = database.db;

  /**
   * Claims the key (the fence for the handler's writes), sends the stored answer ('sent'), or
   * throws; null without a key.
   */
  async function claim(req: FastifyRequest, reply: FastifyReply): Promise<KeyFence | 'sent' | null> {
    const header = req.headers['idempotency-key'];
    if (header === undefined) return null;
    if (typeof header !== 'string' || !KEY_RE.test(header)) {
      throw invalid('header.idempotency-key', 'must be 1 to 255 printable ASCII characters');
    }
    // The caller: the API key, or the signed-in user in the selected workspace (SVC-Workspace,
    // also on routes that do not need one).
    const auth = req.auth;
    const selected = req.ctx ?? (auth.kind === 'user' ? auth.ctx : null);
    const caller =
      auth?.kind === 'visitor'
        ? `v:${auth.visitor.visitorId}`
        : selected
          ? callerKey(selected)
          : `u:${req.user.userId}:`;
    const route = `${req.method} ${req.url.split('?')[0]}`;
    const bodyHash = sha256(`${req.url}\n${req.rawBody ?? ''}`);
    const now = Date.now();
    const fence = (token: string, earlier: unknown[]) => {
      const f = new KeyFence(box, leaseMs, caller, header, token, earlier);
      req.idempotency = { caller, key: header, replayed: false, fence: f };
      return f;
    };

    for (let attempt = 0; attempt < 3; attempt++) {
      const token = newToken();
      const inserted = await db
        .insertInto('idempotency_keys')
        .values({
          caller,
          key: header,
          workspace_id: req.ctx?.workspaceId ?? null,
          route,
          body_hash: bodyHash,
          state: 'running',
          claim: token,
          locked_until: new Date(now + leaseMs),
        })
        .onConflict((oc) => oc.columns(['caller', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (inserted) return fence(token, []);
      const row = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('caller', '=', caller)
        .where('key', '=', header)
        .executeTakeFirst();
      if (!row) continue; // removed meanwhile: claim again
      if (row.created_at.getTime() < now - KEEP_MS) {
        await db
          .deleteFrom('idempotency_keys')
          .where('caller', '=', caller)
          .where('key', '=', header)
          .where('claim', '=', row.claim)
          .execute();
        continue;
      }
      if (row.route !== route || row.body_hash !== bodyHash) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with another route or body.');
      }
      if (row.state === 'done') {
        req.idempotency = { caller, key: header, replayed: true, fence: null };
        const headers = (row.headers ?? {}) as Record<string, string>;
        for (const [k, v] of Object.entries(headers)) reply.header(k, v);
        reply.header('idempotent-replayed', 'true');
        reply.code(row.status_code ?? 200);
        reply.send(row.body ? (box.open(row.body, sealedFor(caller, header)) ?? '') : '');
        return 'sent';
      }
      if (row.locked_until.getTime() > now) {
        throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.');
      }
      // The request holding the key died (or outlived its lease): take the claim over. Its
      // transactions check the claim before they commit, so it can no longer write under the key.
      const taken = await db
        .updateTable('idempotency_keys')
        .set({ claim: token, locked_until: new Date(now + leaseMs) })
        .where('caller', '=', caller)
        .where('key', '=', header)
        .where('claim', '=', row.claim)
        .where('state', '=', row.state)
        .returning(['state', 'results'])
        .executeTakeFirst();
      if (!taken) {
        throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.');
      }
      const earlier =
        taken.state === 'committed' && taken.results
          ? (JSON.parse(box.open(taken.results, sealedFor(caller, header)) ?? '[]') as unknown[])
          : [];
      return fence(token, earlier);
    }
    throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.');
  }

  /** preHandler: the rest of the request (other preHandlers, the handler) runs inside the fence. */
  function claimHook(req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    claim(req, reply).then(
      (f) => {
        if (f === 'sent') return; // the stored answer is on its way: no handler
        if (f) writer.within(f, () => done());
        else done();
      },
      (err: Error) => done(err),
    );
  }

  async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const idem = req.idempotency;
    const fence = idem?.fence;
    if (!idem || idem.replayed || !fence) return payload;
    fence.closed = true;
    const status = reply.statusCode;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    if (status >= 500 || status === 429 || text === null || Buffer.byteLength(text) > MAX_STORED) {
      if (fence.committed.length === 0) {
        // Nothing was written under the key: it is free again (rule 4).
        await db
          .deleteFrom('idempotency_keys')
          .where('caller', '=', idem.caller)
          .where('key', '=', idem.key)
          .where('claim', '=', fence.token)
          .where('state', '=', 'running')
          .execute();
      } else {
        // Writes were committed: a retry must not write again, so the key stays, released at
        // once; the retry rebuilds the answer from what was committed.
        await db
          .updateTable('idempotency_keys')
          .set({ locked_until: new Date() })
          .where('caller', '=', idem.caller)
          .where('key', '=', idem.key)
          .where('claim', '=', fence.token)
          .execute();
      }
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
        body: box.seal(text, sealedFor(idem.caller, idem.key)),
        results: null,
      })
      .where('caller', '=', idem.caller)
      .where('key', '=', idem.key)
      .where('claim', '=', fence.token)
      .execute();
    return payload;
  }

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const acc = route.config?.access;
    if (!methods.includes('POST') || !acc || acc.kind === 'public' || route.config?.idempotent === false) return;
    const pre = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [claimHook, ...pre];
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
