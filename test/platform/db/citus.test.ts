// Citus readiness (docs/operations.md "Distributing by workspace"): the schema the migrations make
// can be distributed by workspace_id without changing a key or a query.
//
// 1. The catalog walk: every table of the migrated database is either a tenant table (it has
//    workspace_id; Citus: create_distributed_table(<t>, 'workspace_id'), all co-located) or one of
//    the global tables listed below with the reason (Citus: a reference table, copied to every
//    node, or a table kept on the coordinator only). Citus accepts a distributed table only when
//    its primary key and every unique index contain the distribution column, and a foreign key
//    between two distributed tables only on the distribution column; a reference table may
//    point at reference tables only, a coordinator table at reference or coordinator tables.
//    The rules below are that, a little stricter (keys LEAD with workspace_id, so the indexes
//    serve the per-workspace queries too).
// 2. The join scan: every join in src/ onto a tenant table names workspace_id in its condition,
//    so no query joins rows of two workspaces (and Citus routes each to one shard group).
//
// Both fail naming the table (or the file and line) and the rule broken.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Service, startService } from '../../support/helpers.js';

/**
 * Global tables: replicated to every node (create_reference_table). Small, read everywhere,
 * written rarely, or looked up before the workspace is known.
 */
const REFERENCE: Record<string, string> = {
  workspaces: 'the tenants themselves; every tenant table points at it',
  users: 'a person belongs to several workspaces (members is the tenant side)',
  api_keys: 'a request with an API key is resolved by the key hash alone, before its workspace is known',
  mailbox_addresses:
    'inbound mail is routed by the forwarding address before its workspace is known; an address is unique across workspaces',
  images: "a user's picture belongs to no one workspace; pictures are served by id without a workspace",
};

/**
 * Global tables kept on the coordinator only (Citus local tables; their foreign keys to reference
 * tables make Citus add them to its metadata). Written often or keyed by something else than a
 * workspace, and never joined with a tenant table.
 */
const COORDINATOR: Record<string, string> = {
  sessions: "a person's sign-in, across their workspaces",
  session_retired_tokens: 'hangs off sessions',
  mfa_recovery_codes: "a person's two-factor codes",
  passkeys: "a person's passkeys",
  passkey_challenges: 'sign-in ceremonies, before a person (let alone a workspace) is known',
  oauth_identities: "a person's linked Google / Microsoft accounts",
  oauth_sign_in_flows: 'sign-in flows, before a person is known',
  oauth_exchange_codes: 'native sign-in codes, before a workspace is chosen',
  app_attest_keys: 'device attestation keys, per app install',
  app_attest_challenges: 'device attestation challenges, per app install',
  idempotency_keys: 'keyed by caller (a person or a key); workspace_id is null for calls without a workspace',
  inbound_emails:
    'the spool of raw mail, stored before its workspace is known (workspace_id null when no mailbox matched)',
  stripe_events: "Stripe's event ids, deduplicated before (and whether or not) a workspace is named",
};

/** Tables of the migration tool itself. */
const IGNORED = new Set(['kysely_migration', 'kysely_migration_lock']);

interface Catalog {
  tables: Array<{ name: string; columns: string[] }>;
  /** Primary keys and unique indexes: their columns in order (`(expression)` for an expression). */
  uniques: Array<{ table: string; name: string; primary: boolean; columns: string[] }>;
  foreignKeys: Array<{
    table: string;
    name: string;
    columns: string[];
    references: string;
    refColumns: string[];
    /** confdeltype / confupdtype: a no action, r restrict, c cascade, n set null, d set default. */
    onDelete: string;
    onUpdate: string;
  }>;
}

/** Reads tables, keys, unique indexes and foreign keys of one schema (pg_catalog: PGlite and PostgreSQL alike). */
async function readCatalog(db: Kysely<any>, schema: string): Promise<Catalog> {
  const tables = await sql<{ name: string; columns: string[] }>`
    SELECT c.relname AS name,
           array(SELECT a.attname::text FROM pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum) AS columns
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p')
     ORDER BY c.relname`.execute(db);
  const uniques = await sql<{ table: string; name: string; primary: boolean; columns: string[] }>`
    SELECT t.relname AS table, ic.relname AS name, i.indisprimary AS primary,
           array(SELECT coalesce(a.attname::text, '(expression)')
                   FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(att, ord)
                   LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.att
                  ORDER BY k.ord) AS columns
      FROM pg_index i
      JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = ${schema} AND i.indisunique
     ORDER BY t.relname, ic.relname`.execute(db);
  const foreignKeys = await sql<Catalog['foreignKeys'][number]>`
    SELECT t.relname AS table, con.conname AS name, r.relname AS references,
           array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(att, ord)
                   JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.att ORDER BY k.ord) AS columns,
           array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(att, ord)
                   JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.att ORDER BY k.ord) AS "refColumns",
           con.confdeltype::text AS "onDelete", con.confupdtype::text AS "onUpdate"
      FROM pg_constraint con
      JOIN pg_class t ON t.oid = con.conrelid
      JOIN pg_class r ON r.oid = con.confrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = ${schema} AND con.contype = 'f'
     ORDER BY t.relname, con.conname`.execute(db);
  return { tables: tables.rows, uniques: uniques.rows, foreignKeys: foreignKeys.rows };
}

type Kind = 'tenant' | 'reference' | 'coordinator';

/** What breaks the rules, one line per table and rule. */
function citusProblems(
  catalog: Catalog,
  reference: Record<string, string>,
  coordinator: Record<string, string>,
  ignored: Set<string> = new Set(),
): string[] {
  const problems: string[] = [];
  const kinds = new Map<string, Kind>();
  for (const t of catalog.tables) {
    if (ignored.has(t.name)) continue;
    const listed = t.name in reference ? 'reference' : t.name in coordinator ? 'coordinator' : null;
    if (listed) kinds.set(t.name, listed);
    else if (t.columns.includes('workspace_id')) kinds.set(t.name, 'tenant');
    else
      problems.push(
        `${t.name}: has no workspace_id and is not listed as a global table (add workspace_id, or list it with the reason)`,
      );
  }
  for (const name of [...Object.keys(reference), ...Object.keys(coordinator)]) {
    if (!catalog.tables.some((t) => t.name === name)) problems.push(`${name}: listed as global but no such table`);
  }
  for (const [table, kind] of kinds) {
    if (kind !== 'tenant') continue;
    const pk = catalog.uniques.find((u) => u.table === table && u.primary);
    if (!pk) problems.push(`${table}: tenant table without a primary key (it must lead with workspace_id)`);
    else if (pk.columns[0] !== 'workspace_id') {
      problems.push(`${table}: primary key (${pk.columns.join(', ')}) does not lead with workspace_id`);
    }
    for (const u of catalog.uniques.filter((x) => x.table === table && !x.primary)) {
      if (!u.columns.includes('workspace_id')) {
        problems.push(`${table}: unique index ${u.name} (${u.columns.join(', ')}) does not contain workspace_id`);
      }
    }
  }
  for (const fk of catalog.foreignKeys) {
    const from = kinds.get(fk.table);
    const to = kinds.get(fk.references);
    if (!from || !to) continue;
    const at = `${fk.table}: foreign key ${fk.name} (${fk.columns.join(', ')}) → ${fk.references} (${fk.refColumns.join(', ')})`;
    if (from === 'tenant' && to === 'tenant') {
      if (fk.columns[0] !== 'workspace_id' || fk.refColumns[0] !== 'workspace_id') {
        problems.push(`${at}: a foreign key between tenant tables must lead with workspace_id on both sides`);
      } else if ('nd'.includes(fk.onDelete) || 'nd'.includes(fk.onUpdate)) {
        // Citus refuses SET NULL / SET DEFAULT on a foreign key holding the distribution column,
        // even PostgreSQL 15's SET NULL (column) form (citusdata/citus#7132).
        problems.push(
          `${at}: ON DELETE/UPDATE SET NULL or SET DEFAULT between tenant tables (clear the column in the delete instead)`,
        );
      }
    } else if (from === 'reference' && to !== 'reference') {
      problems.push(`${at}: a reference table may point at reference tables only`);
    } else if (from === 'coordinator' && to === 'tenant') {
      problems.push(`${at}: a coordinator table may not point at a tenant table`);
    }
  }
  return problems;
}

// ---- the join scan -------------------------------------------------------------------------

/**
 * Joins onto a tenant table whose condition need not name workspace_id, each with the reason.
 * Keyed `file:table`. (None today: keep it that way.)
 */
const JOIN_ALLOWED: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.ts$/.test(f) && !/\.(test|d)\.ts$/.test(f) ? [p] : [];
  });
}

/** The text from `open` (an opening parenthesis) to its matching close, strings and templates skipped roughly. */
function balanced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

interface Join {
  file: string;
  line: number;
  table: string;
  condition: string;
}

/** Kysely's .innerJoin / .leftJoin / ... calls and raw SQL JOIN clauses of one file. */
function joinsOf(file: string, text: string): Join[] {
  const lineOf = (i: number) => text.slice(0, i).split('\n').length;
  const out: Join[] = [];
  for (const m of text.matchAll(/\.(?:inner|left|right|full)Join(?:Lateral)?\(/g)) {
    const call = balanced(text, m.index! + m[0].length - 1);
    const table = /^\(\s*'([a-z_]+)(?:\s+as\s+\w+)?'/.exec(call)?.[1];
    // A join onto a subquery or a value list: what it reads is checked where it is written.
    if (!table) continue;
    out.push({ file, line: lineOf(m.index!), table, condition: call });
  }
  // Raw SQL: JOIN <table> [AS] <alias> ON ... / USING (...), up to the next clause.
  const raw =
    /\b(?:LEFT\s+|RIGHT\s+|FULL\s+|INNER\s+)?(?:OUTER\s+)?JOIN\s+(?!LATERAL\b)([a-z_]+)\b(?:\s+(?:AS\s+)?(?!ON\b|USING\b)\w+)?\s+(ON|USING)\b([\s\S]*?)(?=\bJOIN\b|\bWHERE\b|\bGROUP\s+BY\b|\bORDER\s+BY\b|\bLIMIT\b|\bUNION\b|\bRETURNING\b|\)\s*(?:,|$|\bSELECT\b|\bINSERT\b|\bUPDATE\b|\bDELETE\b)|`)/g;
  for (const m of text.matchAll(raw)) {
    out.push({ file, line: lineOf(m.index!), table: m[1]!, condition: `${m[2]} ${m[3]}` });
  }
  return out;
}

/** The joins onto tenant tables in `files` and those without workspace_id in their condition. */
function joinProblems(files: string[], tenant: Set<string>): { checked: number; problems: string[] } {
  const problems: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const j of joinsOf(file, readFileSync(file, 'utf8'))) {
      if (!tenant.has(j.table) || `${file}:${j.table}` in JOIN_ALLOWED) continue;
      checked++;
      if (!/workspace_id|workspaceId/.test(j.condition)) {
        problems.push(`${j.file}:${j.line}: joins ${j.table} without workspace_id in the join condition`);
      }
    }
  }
  return { checked, problems };
}

// ---- the tests -----------------------------------------------------------------------------

let svc: Service;
let db: Kysely<any>;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
  db = svc.rt.deps.database.db as Kysely<any>;
});
afterAll(async () => svc?.stop());

describe('Citus readiness: the migrated schema', () => {
  it('keys every tenant table by workspace_id first, and lists each global table with its reason', async () => {
    const catalog = await readCatalog(db, 'public');
    expect(catalog.tables.length).toBeGreaterThan(50);
    expect(citusProblems(catalog, REFERENCE, COORDINATOR, IGNORED)).toEqual([]);
  });

  it('names the table and the rule when a table breaks one', async () => {
    // A throwaway schema of tables that break each rule once: the walk must find every one.
    const schema = `citus_probe_${process.pid}_${Date.now().toString(36)}`;
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
    try {
      const s = (name: string) => sql.id(schema, name);
      for (const ddl of [
        sql`CREATE TABLE ${s('workspaces')} (id uuid PRIMARY KEY)`,
        sql`CREATE TABLE ${s('good')} (workspace_id uuid REFERENCES ${s('workspaces')} (id), id uuid, code text,
              PRIMARY KEY (workspace_id, id), UNIQUE (workspace_id, code))`,
        sql`CREATE TABLE ${s('pk_by_id')} (workspace_id uuid, id uuid PRIMARY KEY)`,
        sql`CREATE TABLE ${s('no_pk')} (workspace_id uuid, note text)`,
        sql`CREATE TABLE ${s('global_token')} (workspace_id uuid, id uuid, token text UNIQUE, PRIMARY KEY (workspace_id, id))`,
        sql`CREATE TABLE ${s('child_by_id')} (workspace_id uuid, id uuid, good_id uuid,
              PRIMARY KEY (workspace_id, id), FOREIGN KEY (good_id, workspace_id) REFERENCES ${s('good')} (id, workspace_id))`,
        sql`CREATE TABLE ${s('child_set_null')} (workspace_id uuid, id uuid, good_id uuid, PRIMARY KEY (workspace_id, id),
              FOREIGN KEY (workspace_id, good_id) REFERENCES ${s('good')} (workspace_id, id) ON DELETE SET NULL (good_id))`,
        sql`CREATE TABLE ${s('orphan')} (good_id uuid, id uuid PRIMARY KEY)`,
        sql`CREATE TABLE ${s('lookup')} (key text PRIMARY KEY, workspace_id uuid, good_id uuid,
              FOREIGN KEY (workspace_id, good_id) REFERENCES ${s('good')} (workspace_id, id))`,
      ]) {
        await ddl.execute(db);
      }
      const problems = citusProblems(await readCatalog(db, schema), { workspaces: '', lookup: '', gone: '' }, {});
      const about = (table: string, rule: string) =>
        problems.some((p) => p.startsWith(`${table}:`) && p.includes(rule));
      expect(problems.some((p) => p.startsWith('good:'))).toBe(false);
      expect(about('pk_by_id', 'primary key (id) does not lead with workspace_id')).toBe(true);
      expect(about('no_pk', 'without a primary key')).toBe(true);
      expect(about('global_token', '(token) does not contain workspace_id')).toBe(true);
      expect(about('child_by_id', 'must lead with workspace_id')).toBe(true);
      expect(about('child_set_null', 'SET NULL')).toBe(true);
      expect(about('orphan', 'has no workspace_id and is not listed')).toBe(true);
      expect(about('lookup', 'a reference table may point at reference tables only')).toBe(true);
      expect(about('gone', 'no such table')).toBe(true);
      expect(problems).toHaveLength(8);
    } finally {
      await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(db);
    }
  });
});

describe('Citus readiness: the runbook in docs/operations.md', () => {
  it('distributes every tenant table and references every reference table, each after what it points at', async () => {
    const doc = readFileSync('docs/operations.md', 'utf8');
    const section = doc.slice(doc.indexOf('## Distributing by workspace'));
    const text = section.slice(0, section.indexOf('\n## ', 3));
    const named = (fn: string) => [...text.matchAll(new RegExp(`${fn}\\('([a-z_]+)'`, 'g'))].map((m) => m[1]!);
    const distributed = named('create_distributed_table');
    const referenced = named('create_reference_table');
    const catalog = await readCatalog(db, 'public');
    const tenant = catalog.tables
      .map((t) => t.name)
      .filter((t) => !IGNORED.has(t) && !(t in REFERENCE) && !(t in COORDINATOR));
    expect([...distributed].sort()).toEqual([...tenant].sort());
    expect([...referenced].sort()).toEqual(Object.keys(REFERENCE).sort());
    const problems: string[] = [];
    for (const order of [distributed, referenced]) {
      for (const fk of catalog.foreignKeys) {
        const at = order.indexOf(fk.table);
        const target = order.indexOf(fk.references);
        if (at >= 0 && target > at)
          problems.push(`${fk.table} is distributed before ${fk.references}, which it points at`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('Citus readiness: no query joins across workspaces', () => {
  it('names workspace_id in every join onto a tenant table in src/', async () => {
    const catalog = await readCatalog(db, 'public');
    const tenant = new Set(
      catalog.tables
        .filter((t) => !IGNORED.has(t.name) && !(t.name in REFERENCE) && !(t.name in COORDINATOR))
        .map((t) => t.name),
    );
    const files = sourceFiles('src');
    expect(files.length).toBeGreaterThan(100);
    const { checked, problems } = joinProblems(files, tenant);
    // The scan sees the joins (50 onto tenant tables when this was written, Kysely's and raw SQL's).
    expect(checked).toBeGreaterThan(40);
    expect(problems).toEqual([]);
  });

  it('finds a join without workspace_id, in Kysely and in raw SQL', () => {
    const text = [
      "db.selectFrom('messages as m').innerJoin('tickets as t', 't.id', 'm.ticket_id')",
      "db.selectFrom('messages as m').innerJoin('tickets as t', (j) => j.onRef('t.workspace_id', '=', 'm.workspace_id').onRef('t.id', '=', 'm.ticket_id'))",
      "db.selectFrom('members as m').innerJoin('users as u', 'u.id', 'm.user_id')",
      'sql`SELECT 1 FROM messages m JOIN tickets t ON t.id = m.ticket_id WHERE m.workspace_id = $1`',
      'sql`SELECT 1 FROM messages m LEFT JOIN tickets AS t ON t.workspace_id = m.workspace_id AND t.id = m.ticket_id`',
      'sql`SELECT 1 FROM messages m JOIN users u ON u.id = m.author_user_id`',
    ].join('\n');
    const found = joinsOf('probe.ts', text);
    expect(found.map((j) => `${j.line}:${j.table}`)).toEqual([
      '1:tickets',
      '2:tickets',
      '3:users',
      '4:tickets',
      '5:tickets',
      '6:users',
    ]);
    const bad = found.filter((j) => j.table === 'tickets' && !/workspace_id|workspaceId/.test(j.condition));
    expect(bad.map((j) => j.line)).toEqual([1, 4]);
  });
});
