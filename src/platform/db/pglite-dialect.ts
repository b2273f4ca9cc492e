// Kysely over the embedded PGlite. PGlite is one PostgreSQL session, so the whole
// session is handed out as the single "connection" behind a mutex: a transaction
// holds it from BEGIN to COMMIT and nothing else (pg-boss included) can interleave.
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { currentWorkspace, SWITCH_SQL, switchValues, type Wall } from './scope.js';

/** First-come, first-served exclusive lock. */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => {
      release = r;
    });
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => next);
    return ready;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** Runs one statement; parameterless text may hold several statements (migrations, pg-boss). */
export async function pgliteExecute(pg: PGlite, text: string, values: readonly unknown[]) {
  if (values.length === 0) {
    const results = await pg.exec(text);
    const last = results[results.length - 1];
    return { rows: (last?.rows ?? []) as unknown[], affectedRows: last?.affectedRows ?? 0 };
  }
  const r = await pg.query(text, values as unknown[]);
  return { rows: r.rows as unknown[], affectedRows: r.affectedRows ?? 0 };
}

/**
 * The one session, switched to the workspace scope (scope.ts) of each statement before it runs
 * when that differs from the session's (while the wall is up). Callers hold the mutex.
 */
export class PgliteSession {
  // null = the database's own user; undefined = not known (after a rollback).
  #at: string | null | undefined = null;
  constructor(
    readonly pg: PGlite,
    private readonly wall: Wall,
  ) {}

  async execute(text: string, values: readonly unknown[]) {
    const wanted = this.wall.up ? currentWorkspace() : null;
    if (wanted !== this.#at) {
      await this.pg.query(SWITCH_SQL, switchValues(wanted));
      this.#at = wanted;
    }
    try {
      return await pgliteExecute(this.pg, text, values);
    } finally {
      if (/^\s*rollback/i.test(text)) this.#at = undefined;
    }
  }
}

class PgliteConnection implements DatabaseConnection {
  constructor(private readonly session: PgliteSession) {}

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    const r = await this.session.execute(q.sql, q.parameters);
    const kind = q.query?.kind;
    const isWrite = kind === 'InsertQueryNode' || kind === 'UpdateQueryNode' || kind === 'DeleteQueryNode';
    return {
      rows: r.rows as R[],
      ...(isWrite ? { numAffectedRows: BigInt(r.affectedRows) } : {}),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered by the embedded database
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database');
  }
}

class PgliteDriver implements Driver {
  #release: (() => void) | null = null;
  readonly connection: PgliteConnection;

  constructor(
    private readonly session: PgliteSession,
    private readonly mutex: Mutex,
  ) {
    this.connection = new PgliteConnection(session);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    this.#release = await this.mutex.acquire();
    return this.connection;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const iso = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await conn.executeQuery(CompiledQuery.raw(`begin${iso}`));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = null;
    release?.();
  }

  async destroy(): Promise<void> {
    await this.mutex.run(async () => {
      if (!this.session.pg.closed) await this.session.pg.close();
    });
  }
}

export class PgliteDialect implements Dialect {
  constructor(
    private readonly session: PgliteSession,
    private readonly mutex: Mutex,
  ) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver() {
    return new PgliteDriver(this.session, this.mutex);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
