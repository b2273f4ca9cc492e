// Writing custom field values (`fields` on create and PATCH of tickets, contacts, companies):
// merged into the stored values; null, "" or [] clears a key; an undefined key is a 422 at
// body.fields.<key>; each type validated and normalised; archived fields keep their value but
// refuse a change.
import type { Unit } from '../../platform/db/tx.js';
import { invalid } from '../../platform/http/errors.js';
import type { FieldEntity } from './schemas.js';
import { type FieldDef, unitFieldDefs } from './service.js';

export interface FieldChange {
  key: string;
  from: unknown;
  to: unknown;
}

const LIMITS = { text: 1000, long_text: 10000, url: 2000, email: 254 };
// The address form of the WHATWG HTML spec (what browsers check in <input type=email>).
const EMAIL_RE =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isCleared = (v: unknown) => v === null || v === '' || (Array.isArray(v) && v.length === 0);

export function isRealDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** The stored form of one value; throws a 422 at `loc` when it does not fit the field. */
function normalise(def: FieldDef, raw: unknown, loc: string): unknown {
  const str = (max: number) => {
    if (typeof raw !== 'string') throw invalid(loc, `must be a string for a ${def.type} field`);
    if (raw.length > max) throw invalid(loc, `must be at most ${max} characters`);
    return raw;
  };
  switch (def.type) {
    case 'text': {
      const v = str(LIMITS.text);
      if (/[\r\n]/.test(v)) throw invalid(loc, 'must be a single line');
      return v;
    }
    case 'long_text':
      return str(LIMITS.long_text);
    case 'number':
      if (typeof raw !== 'number' || !Number.isFinite(raw)) throw invalid(loc, 'must be a number');
      return raw;
    case 'checkbox':
      if (typeof raw !== 'boolean') throw invalid(loc, 'must be true or false');
      return raw;
    case 'date': {
      const v = str(10);
      if (!isRealDate(v)) throw invalid(loc, 'must be a real date written YYYY-MM-DD');
      return v;
    }
    case 'url': {
      const v = str(LIMITS.url).trim();
      let u: URL;
      try {
        u = new URL(v);
      } catch {
        throw invalid(loc, 'must be an http or https URL');
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid(loc, 'must be an http or https URL');
      return v;
    }
    case 'email': {
      const v = str(LIMITS.email).trim();
      if (!EMAIL_RE.test(v)) throw invalid(loc, 'must be an email address');
      return v.toLowerCase();
    }
    case 'select': {
      if (typeof raw !== 'string') throw invalid(loc, 'must be an option id');
      if (!def.options.some((o) => o.id === raw)) throw invalid(loc, `has no option ${raw}`);
      return raw;
    }
    case 'multi_select': {
      if (!Array.isArray(raw)) throw invalid(loc, 'must be a list of option ids');
      const out: string[] = [];
      for (const v of raw) {
        if (typeof v !== 'string' || !def.options.some((o) => o.id === v))
          throw invalid(loc, `has no option ${String(v)}`);
        if (!out.includes(v)) out.push(v);
      }
      return out;
    }
    case 'user': {
      if (typeof raw !== 'string' || !UUID_RE.test(raw)) throw invalid(loc, 'must be the id of a member');
      return raw.toLowerCase();
    }
  }
}

/**
 * The values after merging `input` into `before`, and what changed (one entry per key).
 * Checks user values against the workspace's members in the unit's transaction.
 */
export async function applyFieldValues(
  u: Unit,
  entity: FieldEntity,
  before: Record<string, unknown>,
  input: Record<string, unknown>,
  at: string,
): Promise<{ fields: Record<string, unknown>; changes: FieldChange[] }> {
  const fields: Record<string, unknown> = { ...before };
  const changes: FieldChange[] = [];
  const keys = Object.keys(input);
  if (keys.length === 0) return { fields, changes };
  const defs = await unitFieldDefs(u, entity);
  const users: Array<[string, string]> = [];
  for (const key of keys) {
    const loc = `${at}.${key}`;
    const def = defs.get(key);
    if (!def) throw invalid(loc, `is not a ${entity} field of this workspace`);
    const raw = input[key];
    const next = isCleared(raw) ? undefined : normalise(def, raw, loc);
    const prev = before[key];
    if (JSON.stringify(prev) === JSON.stringify(next)) continue;
    if (def.archived) throw invalid(loc, 'is archived: its value cannot change');
    if (def.type === 'user' && next !== undefined) users.push([next as string, loc]);
    if (next === undefined) delete fields[key];
    else fields[key] = next;
    changes.push({ key, from: prev ?? null, to: next ?? null });
  }
  if (users.length > 0) {
    const members = await u.trx
      .selectFrom('members')
      .select('user_id')
      .where('workspace_id', '=', u.workspaceId)
      .where(
        'user_id',
        'in',
        users.map(([id]) => id),
      )
      .execute();
    const known = new Set(members.map((m) => m.user_id));
    const bad = users.find(([id]) => !known.has(id));
    if (bad) throw invalid(bad[1], 'is not a member of this workspace');
  }
  return { fields, changes };
}
