// One pagination helper for every list: `limit` 1..100 (default 50), an opaque cursor
// that encodes a keyset position, `{data, next_cursor}`. Cursors are signed (HMAC) and
// bound to their list (route, workspace, filters): a tampered or foreign cursor is a
// 422, never a 500 or a wrong page.
import { createHmac, hkdfSync } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { constantTimeEqual } from '../crypto/random.js';
import { invalid } from './errors.js';

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size, 1 to 100.' }),
  cursor: Type.String({ minLength: 1, maxLength: 1024, description: 'Opaque cursor from the previous page.' }),
};
export const PageQuerySchema = Type.Object(
  { limit: Type.Optional(PageQuery.limit), cursor: Type.Optional(PageQuery.cursor) },
  { additionalProperties: false },
);
export type PageQueryInput = Static<typeof PageQuerySchema>;

export type KeyValue = string | number | boolean | null;

const PAGE_HEAD = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export class Pager {
  readonly #key: Buffer;
  constructor(secretKey: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secretKey, 'svc-cursor', 'cursor signing key v1', 32));
  }

  #mac(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('base64url').slice(0, 22);
  }

  /** `list` names the list and everything that shapes it (route, workspace, filters, sort). */
  encode(list: string, position: KeyValue[]): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.#mac(`${list}\n${body}`)}`;
  }

  /** The keyset position of a cursor made by encode() for the same list; 422 otherwise. */
  decode(list: string, cursor: string | undefined, arity: number): KeyValue[] | null {
    if (cursor === undefined) return null;
    const bad = () => invalid('query.cursor', 'is not a cursor of this list; start again without one');
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw bad();
    const body = cursor.slice(0, dot);
    if (!constantTimeEqual(cursor.slice(dot + 1), this.#mac(`${list}\n${body}`))) throw bad();
    let position: unknown;
    try {
      position = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw bad();
    }
    if (!Array.isArray(position) || position.length !== arity) throw bad();
    return position as KeyValue[];
  }

  /**
   * The same page as JSON bytes, from rows that carry each item's JSON already, UTF-8 encoded
   * (built by PostgreSQL, kept by a cache): nothing is parsed, serialised or encoded again, the
   * page is one copy of its items. A row without JSON (gone between a page's statements) is
   * left out; its position still counts for the cursor.
   */
  pageBytes<R>(
    list: string,
    rows: R[],
    limit: number,
    keyOf: (row: R) => KeyValue[],
    json: (row: R) => Buffer | undefined,
  ): Buffer {
    const more = rows.length > limit;
    const pageRows = more ? rows.slice(0, limit) : rows;
    const last = pageRows[pageRows.length - 1];
    const cursor = more && last !== undefined ? JSON.stringify(this.encode(list, keyOf(last))) : 'null';
    const parts: Buffer[] = [PAGE_HEAD];
    for (const r of pageRows) {
      const j = json(r);
      if (j === undefined) continue;
      if (parts.length > 1) parts.push(COMMA);
      parts.push(j);
    }
    parts.push(Buffer.from(`],"next_cursor":${cursor}}`));
    return Buffer.concat(parts);
  }

  /** Rows fetched with `limit + 1`: the page and the cursor after its last row. */
  page<R, T>(list: string, rows: R[], limit: number, keyOf: (row: R) => KeyValue[], present: (row: R) => T): Page<T> {
    const more = rows.length > limit;
    const pageRows = more ? rows.slice(0, limit) : rows;
    const last = pageRows[pageRows.length - 1];
    return {
      data: pageRows.map(present),
      next_cursor: more && last !== undefined ? this.encode(list, keyOf(last)) : null,
    };
  }
}
