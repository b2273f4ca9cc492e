// The database: Kysely over node-postgres (DATABASE_URL set) or the embedded PGlite
// (persisted in DATA_DIR, or in memory for tests). Same SQL, same migrations.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { Mutex, PgliteDialect, PgliteSession } from './pglite-dialect.js';
import type { DB } from './schema.js';
import { currentWorkspace, SWITCH_SQL, switchValues, TENANT_ROLE, unscoped, type Wall } from './scope.js';

export type { DB } from './schema.js';

export interface Database {
  kind: 'postgres' | 'pglite';
  db: Kysely<DB>;
  /**
   * The same database on connections that always use a prepared statement's generic plan
   * (`plan_cache_mode = force_generic_plan`), for statements written so that one plan suits
   * every value of their parameters: the ranked ticket search (src/modules/tickets/search.ts),
   * whose custom plans took as long to make as to run. On the embedded database, `db` itself.
   */
  search: Kysely<DB>;
  /**
   * Raw SQL for libraries that bring their own (pg-boss), out of any workspace's scope: a pool of
   * its own on PostgreSQL, the embedded session otherwise.
   */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /**
   * PostgreSQL only (null on the embedded database, which runs one transaction at a time): one
   * statement committed on its own, on a small pool apart from the requests' pool, so a
   * transaction can run it without queueing for a pool connection its peers hold (ticket numbers).
   */
  autonomous: ((text: string, values: unknown[]) => Promise<{ rows: unknown[] }>) | null;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Embedded only (null on PostgreSQL): the data directory as a tarball, for `template` (tests). */
  dump: (() => Promise<Blob>) | null;
  /** Row-level security between workspaces (scope.ts): down until `raiseWall` found the role. */
  wall: Wall;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  dataDir: string;
  memory?: boolean;
  poolSize?: number;
  /**
   * Embedded only: a dumped data directory (PGlite's dumpDataDir) to start from when the
   * database is new, instead of an empty one. The tests start each service from one migrated
   * copy (test/support/database-template.ts); migrations still run after it, as on any database.
   */
  template?: Blob;
}

/** The longest any one statement of a request may run on PostgreSQL. */
export const STATEMENT_TIMEOUT_MS = 30_000;

// int8 (counts, seq) as JS numbers: every such value stays far below 2^53.
const INT8 = 20;
const parseInt8 = (v: string) => Number(v);

/**
 * Names for the statements a process runs again and again, so that each connection parses
 * and plans them once (a server-side prepared statement) instead of on every request: what
 * pgjdbc's prepareThreshold and Npgsql's automatic preparation do. A statement text gets a
 * name on its fifth use; at most MAX_NAMED texts are named per process (so a connection holds
 * at most that many prepared statements), and the usage counts of unnamed texts are forgotten
 * when there are too many of them (texts that differ per request never get a name).
 */
export class StatementNames {
  static readonly THRESHOLD = 5;
  static readonly MAX_NAMED = 300;
  static readonly MAX_COUNTED = 5_000;
  readonly #named = new Map<string, string>();
  readonly #uses = new Map<string, number>();

  nameOf(text: string): string | undefined {
    const name = this.#named.get(text);
    if (name !== undefined || this.#named.size >= StatementNames.MAX_NAMED) return name;
    const uses = (this.#uses.get(text) ?? 0) + 1;
    if (uses < StatementNames.THRESHOLD) {
      if (this.#uses.size >= StatementNames.MAX_COUNTED) this.#uses.clear();
      this.#uses.set(text, uses);
      return undefined;
    }
    this.#uses.delete(text);
    const fresh = `svc_${this.#named.size + 1}`;
    this.#named.set(text, fresh);
    return fresh;
  }
}

type Query = (...args: unknown[]) => Promise<unknown>;

/**
 * A statement whose text starts with this is the last of its transaction: the connection sends
 * COMMIT right behind it, in the same write (Writer's last outbox append, platform/db/tx.ts), and
 * the transaction's own COMMIT that follows is answered without a round trip. A failing
 * statement makes PostgreSQL answer that COMMIT with a rollback; the statement's error is thrown.
 * On the embedded database it is a comment like any other.
 */
export const THEN_COMMIT = '/* then commit */ ';

/** What `query` answers for a BEGIN, COMMIT or ROLLBACK it did not need to send. */
const UNSENT = (command: string) => ({ command, rowCount: null, rows: [], fields: [] });

const BEGIN_RE = /^\s*(begin|start transaction)\b/i;
const END_RE = /^\s*(commit|rollback)\s*$/i;

/**
 * Wraps a connection's `query`: parameterised statements run under their names once they have
 * one (StatementNames), and before a statement whose workspace scope (scope.ts) differs from
 * the connection's, the connection is switched to it (while the wall is up).
 *
 * On a pipelined connection (pg's `pipeline` option: statements are sent without waiting for the
 * previous answer) it also saves round trips around transactions, each of which costs a write to
 * the socket and a wake-up of the server on both sides: a BEGIN is held back and sent in one
 * write with the transaction's first statement, and a THEN_COMMIT statement takes its COMMIT
 * along (docs/performance.md "Writes").
 */
function wrapClient(client: pg.PoolClient, statements: StatementNames | null, wall: Wall, pipelined = false): void {
  const query = client.query.bind(client) as Query;
  const stream = (client as unknown as { connection?: { stream?: { cork(): void; uncork(): void } } }).connection
    ?.stream;
  const batching = pipelined && stream !== undefined;
  // The connection's scope: null = the database's own user, undefined = not known (after a
  // rollback, which undoes a switch made inside the transaction).
  let at: string | null | undefined = null;
  // A BEGIN not sent yet (it goes with the next statement), and a transaction a THEN_COMMIT
  // statement already ended (the COMMIT or ROLLBACK that follows is not sent).
  let heldBegin: string | null = null;
  let ended = false;
  const run = (text: unknown, values: unknown): Promise<unknown> => {
    if (typeof text === 'string' && statements && Array.isArray(values) && values.length > 0) {
      const name = statements.nameOf(text);
      if (name !== undefined) return query({ name, text, values });
    }
    return values === undefined ? query(text) : query(text, values);
  };
  /** Sends what `parts` sends in one write to the socket. */
  const together = <T>(parts: () => T): T => {
    stream!.cork();
    try {
      return parts();
    } finally {
      stream!.uncork();
    }
  };
  const switchTo = (wanted: string | null) =>
    query({ name: 'svc_scope', text: SWITCH_SQL, values: switchValues(wanted) }).then(() => {
      at = wanted;
    });
  /** A statement on a pipelined connection: with the held BEGIN, the switch and its COMMIT as needed. */
  const batched = (text: string, values: unknown, wanted: string | null): Promise<unknown> => {
    const begin = heldBegin;
    heldBegin = null;
    const commit = text.startsWith(THEN_COMMIT);
    // Always inside a transaction here (after its BEGIN, or its last statement): a failed switch
    // fails every statement after it, so the statement need not wait for the switch's answer.
    const sent = together(() => {
      const ps: Promise<unknown>[] = [];
      if (begin !== null) ps.push(query(begin));
      if (wanted !== at) ps.push(switchTo(wanted));
      ps.push(run(text, values));
      if (commit) ps.push(query('commit'));
      return ps;
    });
    if (commit) ended = true;
    const main = sent.length - (commit ? 2 : 1);
    return Promise.allSettled(sent).then((results) => {
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const last = results[results.length - 1] as PromiseFulfilledResult<{ command?: string }> | PromiseRejectedResult;
      if (failed || (commit && last.status === 'fulfilled' && last.value?.command !== 'COMMIT')) {
        // A transaction ended here undid whatever it switched (one still open is undone by its
        // ROLLBACK, below).
        if (commit) at = undefined;
        if (failed) throw failed.reason;
        throw new Error('the transaction was rolled back at COMMIT');
      }
      return (results[main] as PromiseFulfilledResult<unknown>).value;
    });
  };
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    if (typeof values === 'function') {
      callback = values;
      values = undefined;
    }
    const wanted = wall.up ? currentWorkspace() : null;
    let p: Promise<unknown>;
    const ends = typeof text === 'string' && text.length < 16 && END_RE.test(text);
    if (batching && typeof text === 'string' && text.length < 64 && BEGIN_RE.test(text)) {
      heldBegin = text;
      ended = false;
      p = Promise.resolve(UNSENT('BEGIN'));
    } else if (batching && ends && (heldBegin !== null || ended)) {
      // Nothing was sent since BEGIN, or a THEN_COMMIT statement ended the transaction already.
      heldBegin = null;
      ended = false;
      p = Promise.resolve(UNSENT(text.trim().toUpperCase()));
    } else if (batching && typeof text === 'string' && (heldBegin !== null || text.startsWith(THEN_COMMIT))) {
      p = batched(text, values, wanted);
    } else if (wanted === at || ends)
      p = run(text, values); // COMMIT and ROLLBACK need no scope
    else p = switchTo(wanted).then(() => run(text, values));
    if (typeof text === 'string' && /^\s*rollback/i.test(text)) {
      p = p.finally(() => {
        at = undefined;
      });
    }
    if (typeof callback === 'function') {
      const cb = callback as (err: unknown, res?: unknown) => void;
      p.then(
        (r) => cb(null, r),
        (e) => cb(e),
      );
      return undefined;
    }
    return p;
  };
}

/**
 * Puts the wall up (scope.ts) once the migrations ran, when the role exists and the service's
 * user is a member of it; answers whether it is up.
 */
export async function raiseWall(database: Database): Promise<boolean> {
  const r = await unscoped(() =>
    database.executeSql("select pg_has_role(current_user, $1, 'MEMBER') as ok from pg_roles where rolname = $1", [
      TENANT_ROLE,
    ]),
  );
  database.wall.up = (r.rows[0] as { ok?: boolean } | undefined)?.ok === true;
  return database.wall.up;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const statements = new StatementNames();
    const options = {
      connectionString: opts.databaseUrl,
      // No JIT: every request is a short OLTP statement, and JIT compilation of a search whose
      // estimate crosses jit_above_cost costs about a second. No parallel workers either: under
      // concurrent requests they only compete for the same cores (a field-sorted list served
      // twice the requests without them). A statement still running after 30 s (a search whose
      // client is long gone) is cancelled; migrations lift the limit.
      options: `-c jit=off -c max_parallel_workers_per_gather=0 -c statement_timeout=${STATEMENT_TIMEOUT_MS}`,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    };
    // The requests' pool is pipelined (wrapClient: BEGIN and COMMIT ride with other statements).
    const pool = new pg.Pool({ ...options, max: opts.poolSize ?? 16, pipeline: true } as pg.PoolConfig);
    const side = new pg.Pool({ ...options, max: 2 });
    // pg-boss's own statements (sends, fetches, completions) on connections of their own: on the
    // requests' pool each would move a connection out of its workspace's scope and the next
    // request's statement back (two round trips more per create).
    const jobsPool = new pg.Pool({ ...options, max: 6 });
    jobsPool.on('error', () => {});
    // An idle client losing its server must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    side.on('error', () => {});
    // Nor a client checked out (pg-pool listens only to idle ones): its queries fail (a request
    // answers 503 unavailable) and the pool drops it on release.
    const keepAlive = (client: pg.PoolClient) => void client.on('error', () => {});
    for (const p of [pool, side, jobsPool]) p.on('connect', keepAlive);
    const wall: Wall = { up: false };
    pool.on('connect', (client) => wrapClient(client, statements, wall, true));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const searchPool = new pg.Pool({
      ...options,
      options: `${options.options} -c plan_cache_mode=force_generic_plan`,
      max: Math.max(2, Math.ceil((opts.poolSize ?? 16) / 2)),
    });
    searchPool.on('error', () => {});
    searchPool.on('connect', keepAlive);
    searchPool.on('connect', (client) => wrapClient(client, statements, wall));
    const search = new Kysely<DB>({ dialect: new PostgresDialect({ pool: searchPool }) });
    return {
      kind: 'postgres',
      db,
      search,
      // pg-boss and the like, on their own pool (never switched: always the database's own user).
      executeSql: (text, values) =>
        unscoped(async () => {
          const client = await jobsPool.connect();
          let failed: Error | undefined;
          try {
            const r = await client.query(text, values ?? []);
            return { rows: r.rows };
          } catch (err) {
            failed = err as Error;
            throw err;
          } finally {
            client.release(failed); // as pool.query does: a client that failed is not reused
          }
        }),
      autonomous: async (text, values) => {
        const r = await side.query(text, values);
        return { rows: r.rows };
      },
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: async () => {
        await db.destroy();
        // Kysely ends the pool only if it ever queried through it (pg-boss's executeSql may be all).
        if (!pool.ending) await pool.end();
        await search.destroy();
        if (!searchPool.ending) await searchPool.end();
        await side.end();
        if (!jobsPool.ending) await jobsPool.end();
      },
      dump: null,
      wall,
    };
  }

  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { btree_gin } = await import('@electric-sql/pglite/contrib/btree_gin');
  const dir = join(opts.dataDir, 'pglite');
  const fresh = opts.memory || !existsSync(join(dir, 'PG_VERSION'));
  const client = await PGlite.create({
    ...(opts.memory ? {} : { dataDir: dir }),
    ...(opts.template && fresh ? { loadDataDir: opts.template } : {}),
    extensions: { pg_trgm, btree_gin },
    parsers: { [INT8]: parseInt8 },
  });
  const mutex = new Mutex();
  const wall: Wall = { up: false };
  const session = new PgliteSession(client, wall);
  const db = new Kysely<DB>({ dialect: new PgliteDialect(session, mutex) });
  return {
    kind: 'pglite',
    db,
    search: db,
    executeSql: (text, values) => unscoped(() => mutex.run(() => session.execute(text, values ?? []))),
    autonomous: null,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await db.destroy();
      // Kysely closes the client only if it ever queried through it (pg-boss's executeSql may be all).
      await mutex.run(async () => {
        if (!client.closed) await client.close();
      });
    },
    dump: () =>
      mutex.run(async () => {
        await client.exec('CHECKPOINT');
        return client.dumpDataDir('none');
      }),
    wall,
  };
}
