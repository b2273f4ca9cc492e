// The row types Kysely is given (src/platform/db/schema.ts and tables-*.ts, written by hand) against the database
// the migrations make, column by column: the same tables and columns, the same nullability, a
// default wherever the type lets an INSERT leave the column out, and a TypeScript type that can
// hold what PostgreSQL returns. A migration that adds, drops or changes a column without the row
// type following (or the other way round) fails here instead of at run time.
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Service, startService } from '../../support/helpers.js';

interface TsColumn {
  select: string;
  insert: string | null;
}

/** The files the row types are written in (schema.ts holds the DB map, the others the tables). */
const ROW_TYPE_FILES = readdirSync('src/platform/db')
  .filter((f) => f === 'schema.ts' || f === 'columns.ts' || /^tables-.*\.ts$/.test(f))
  .map((f) => `src/platform/db/${f}`);

/** `DB`'s tables and, for each, its columns' select and insert types as written. */
function rowTypes(): Map<string, Map<string, TsColumn>> {
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  const aliases = new Map<string, ts.TypeAliasDeclaration>();
  for (const file of ROW_TYPE_FILES) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    source.forEachChild((n) => {
      if (ts.isInterfaceDeclaration(n)) interfaces.set(n.name.text, n);
      if (ts.isTypeAliasDeclaration(n)) aliases.set(n.name.text, n);
    });
  }
  const text = (n: ts.Node) => n.getText(n.getSourceFile()).replace(/\s+/g, ' ');
  /** Select and insert types of a column's type node, through the file's own aliases. */
  const column = (node: ts.TypeNode): TsColumn => {
    if (ts.isTypeReferenceNode(node)) {
      const name = text(node.typeName);
      const args = node.typeArguments ?? [];
      if (name === 'Generated') return { select: text(args[0]!), insert: `${text(args[0]!)} | undefined` };
      if (name === 'GeneratedAlways') return { select: text(args[0]!), insert: null };
      if (name === 'ColumnType') return { select: text(args[0]!), insert: args[1] ? text(args[1]) : text(args[0]!) };
      const alias = aliases.get(name);
      if (alias) {
        // Generic aliases (Json<T>): the alias's body, with T as written or its default.
        const params = alias.typeParameters ?? [];
        const sub = (s: string) =>
          params.reduce((acc, p, i) => {
            const arg = args[i] ? text(args[i]) : p.default ? text(p.default) : 'unknown';
            return acc.replace(new RegExp(`\\b${p.name.text}\\b`, 'g'), arg);
          }, s);
        const inner = column(alias.type);
        return { select: sub(inner.select), insert: inner.insert === null ? null : sub(inner.insert) };
      }
    }
    return { select: text(node), insert: text(node) };
  };
  const db = interfaces.get('DB');
  if (!db) throw new Error('schema.ts has no DB interface');
  const tables = new Map<string, Map<string, TsColumn>>();
  for (const m of db.members) {
    if (!ts.isPropertySignature(m) || !m.type || !ts.isTypeReferenceNode(m.type)) continue;
    const table = interfaces.get(text(m.type.typeName));
    if (!table) throw new Error(`DB.${text(m.name)}: no interface ${text(m.type)}`);
    const columns = new Map<string, TsColumn>();
    for (const c of table.members) {
      if (ts.isPropertySignature(c) && c.type) columns.set(text(c.name), column(c.type));
    }
    tables.set(text(m.name), columns);
  }
  return tables;
}

/** Top-level members of a union written as text (`A | B<C | D> | null` → A, B<C | D>, null). */
function unionParts(t: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < t.length; i++) {
    const ch = t[i];
    if (ch === '<' || ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === '>' || ch === ')' || ch === ']' || ch === '}') depth--;
    else if (ch === '|' && depth === 0) {
      parts.push(t.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(t.slice(start).trim());
  return parts.filter(Boolean);
}

/** Which TypeScript types can hold what the driver returns for a PostgreSQL type. */
function fits(pgType: string, tsType: string, literalAliases: Set<string>): boolean {
  const parts = unionParts(tsType).filter((p) => p !== 'null');
  const isString = (p: string) => p === 'string' || /^'.*'$/.test(p) || literalAliases.has(p);
  switch (pgType) {
    case 'uuid':
    case 'text':
    case 'character varying':
    case 'citext':
    case 'inet':
    case 'USER-DEFINED':
      return parts.every(isString);
    case 'bigint':
      // pg returns int8 as text unless told otherwise; the code reads counters as numbers or text.
      return parts.every((p) => p === 'number' || p === 'string');
    case 'integer':
    case 'smallint':
    case 'real':
    case 'double precision':
      return parts.every((p) => p === 'number');
    case 'numeric':
      return parts.every((p) => p === 'number' || p === 'string');
    case 'boolean':
      return parts.every((p) => p === 'boolean');
    case 'timestamp with time zone':
    case 'date':
      return parts.every((p) => p === 'Date' || (pgType === 'date' && p === 'string'));
    case 'ARRAY':
      return parts.every((p) => p.endsWith('[]'));
    case 'jsonb':
    case 'json':
      return true; // any JSON shape
    case 'bytea':
      return parts.every((p) => p === 'Buffer' || p === 'Uint8Array');
    case 'tsvector':
      return parts.every((p) => p === 'string' || p === 'unknown');
    default:
      return false;
  }
}

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

describe('row types (src/platform/db/schema.ts) against the migrated database', () => {
  it('name the same tables and columns, with the same nullability, defaults and types', async () => {
    const written = rowTypes();
    const literalAliases = new Set(
      ROW_TYPE_FILES.flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/^export type (\w+) = '[^;]*;/gm)].map((m) => m[1]!),
      ),
    );
    const rows = await sql<{
      table_name: string;
      column_name: string;
      is_nullable: 'YES' | 'NO';
      column_default: string | null;
      is_identity: 'YES' | 'NO';
      is_generated: 'ALWAYS' | 'NEVER';
      data_type: string;
    }>`
      SELECT c.table_name, c.column_name, c.is_nullable, c.column_default, c.is_identity, c.is_generated, c.data_type
        FROM information_schema.columns c
        JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
       WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
         AND c.table_name NOT IN ('kysely_migration', 'kysely_migration_lock')
       ORDER BY c.table_name, c.ordinal_position`.execute(svc.rt.deps.database.db);
    const actual = new Map<string, typeof rows.rows>();
    for (const r of rows.rows) actual.set(r.table_name, [...(actual.get(r.table_name) ?? []), r]);

    const problems: string[] = [];
    expect([...written.keys()].sort()).toEqual([...actual.keys()].sort());
    for (const [table, columns] of actual) {
      const types = written.get(table);
      if (!types) continue;
      const names = columns.map((c) => c.column_name);
      for (const name of types.keys()) if (!names.includes(name)) problems.push(`${table}.${name}: no such column`);
      for (const c of columns) {
        const t = types.get(c.column_name);
        const at = `${table}.${c.column_name}`;
        if (!t) {
          problems.push(`${at}: missing from the row type`);
          continue;
        }
        const tsNullable = unionParts(t.select).includes('null');
        if (tsNullable !== (c.is_nullable === 'YES')) {
          problems.push(`${at}: ${c.is_nullable === 'YES' ? 'nullable' : 'NOT NULL'} but typed ${t.select}`);
        }
        const hasDefault = c.column_default !== null || c.is_identity === 'YES' || c.is_generated === 'ALWAYS';
        const optional = t.insert === null || unionParts(t.insert).includes('undefined');
        if (optional && !hasDefault && c.is_nullable === 'NO') {
          problems.push(`${at}: an INSERT may leave it out (${t.insert ?? 'never inserted'}) but it has no default`);
        }
        if (c.is_generated === 'ALWAYS' && t.insert !== null) problems.push(`${at}: generated, typed as writable`);
        if (!fits(c.data_type, t.select, literalAliases)) problems.push(`${at}: ${c.data_type} typed ${t.select}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
