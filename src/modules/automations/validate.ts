// Save-time checks of an automation's conditions and actions (docs/api.md "Automations"): each
// condition field with the operators and values of its type, each action with a value it can
// apply. What is stored is the normalised form the engine reads (label names as the label is
// named, ids lower-cased, HTML sanitized). A 422 names the offending entry, e.g.
// body.conditions.2.op or body.actions.0.value.
import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import { isUuid } from '../../platform/crypto/random.js';
import type { Unit } from '../../platform/db/tx.js';
import { roleAtLeast } from '../../platform/http/context.js';
import { ApiError, invalid } from '../../platform/http/errors.js';
import { OPS_BY_TYPE, predicate } from '../custom-fields/filters.js';
import type { FieldEntity } from '../custom-fields/schemas.js';
import { type FieldDef, fieldDefs } from '../custom-fields/service.js';
import { applyFieldValues, isRealDate } from '../custom-fields/values.js';
import { loadMailbox } from '../mailboxes/service.js';
import { getMemberView } from '../members/service.js';
import { tagIdsByName } from '../tags/records.js';
import { cleanTagName, loadTag } from '../tags/service.js';
import { cleanBody } from '../tickets/outbound-message.js';
import { CHANNELS, PRIORITIES, SEVERITIES, STATUSES } from '../tickets/schemas.js';
import { ACTION_TYPES, type Action, type ActionType, type Condition, MAX_AI_DECIDE } from './schemas.js';

export type ConditionInput = Static<typeof Condition>;
export type ActionInput = Static<typeof Action>;

/** A condition as stored (value absent for set / not_set, question only on ai_decide). */
export interface StoredCondition {
  field: string;
  op: string;
  value?: string | number | boolean | string[];
  question?: string;
}

/** An action as stored: value always a string ('' when the type takes none). */
export interface StoredAction {
  type: ActionType;
  value: string;
  field?: string;
}

export const SENTIMENTS = ['positive', 'neutral', 'negative', 'frustrated'] as const;

export const TEXT_FIELDS = ['subject', 'body', 'from_email'] as const;
const TEXT_OPS = ['contains', 'not_contains', 'equals', 'not_equals'];
const ENUM_OPS = ['equals', 'not_equals'];
const TAG_OPS = ['equals', 'not_equals', 'contains', 'not_contains'];
const AI_OPS = ['gt', 'lt'];

/** The values each enum condition field takes. */
export const ENUM_VALUES: Record<string, readonly string[]> = {
  channel: CHANNELS,
  priority: PRIORITIES,
  severity: [...SEVERITIES, 'none'],
  status: STATUSES,
  sentiment: [...SENTIMENTS, 'none'],
};

const FIELD_RE = /^(contact\.)?field\.([a-z][a-z0-9_]{0,39})$/;

/** `field.<key>` → ticket, `contact.field.<key>` → contact; null for any other condition field. */
export function customFieldOf(field: string): { entity: FieldEntity; key: string } | null {
  const m = FIELD_RE.exec(field);
  return m ? { entity: m[1] ? 'contact' : 'ticket', key: m[2]! } : null;
}

/** equals and not_equals mean eq and ne on custom fields (rule 3); other ops are FieldOps. */
export const fieldOpOf = (op: string) => (op === 'equals' ? 'eq' : op === 'not_equals' ? 'ne' : op);

/** Label names in a tag condition's value (one, or a comma-separated list / array for contains). */
export const tagNamesOf = (value: unknown): string[] =>
  (Array.isArray(value) ? value.map(String) : String(value ?? '').split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');

const oneOf = (list: readonly string[]) => list.join(', ');

/** A label by id or by name (any case), as it is named now; null when there is none. */
async function findLabel(u: Unit, ref: string) {
  const r: string = ref.trim();
  const id = isUuid(r) ? r.toLowerCase() : await tagIdsByName(u.trx, u.workspaceId, ref.trim().normalize('NFC'));
  return id === null ? null : loadTag(u.trx, u.workspaceId, id);
}

/** Per-save caches: the workspace's field definitions per entity. */
class Defs {
  private readonly cache = new Map<FieldEntity, Promise<Map<string, FieldDef>>>();
  constructor(private readonly u: Unit) {}
  of(entity: FieldEntity): Promise<Map<string, FieldDef>> {
    let p = this.cache.get(entity);
    if (!p) {
      p = fieldDefs(this.u.trx, this.u.workspaceId, entity);
      this.cache.set(entity, p);
    }
    return p;
  }
}

/** Plain text: no HTML tags, no control characters but line breaks and tabs. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const NOT_PLAIN = /<[a-zA-Z/!?]|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export async function cleanConditions(
  u: Unit,
  list: ConditionInput[],
  at = 'body.conditions',
): Promise<StoredCondition[]> {
  const defs = new Defs(u);
  const out: StoredCondition[] = [];
  let aiCount = 0;
  for (const [i, c] of list.entries()) {
    const loc = `${at}.${i}`;
    const field = c.field.trim();
    const op = c.op.trim();
    const badOp = (allowed: readonly string[]) =>
      invalid(`${loc}.op`, `${field} takes ${oneOf(allowed)}, not ${JSON.stringify(op)}`);
    if (c.question !== undefined && field !== 'ai_decide') {
      throw invalid(`${loc}.question`, 'only ai_decide conditions take a question');
    }
    const text = (): string => {
      if (typeof c.value !== 'string') throw invalid(`${loc}.value`, 'must be a string');
      const v = c.value.trim();
      if (v === '') throw invalid(`${loc}.value`, 'must not be blank');
      return v;
    };

    if ((TEXT_FIELDS as readonly string[]).includes(field)) {
      if (!TEXT_OPS.includes(op)) throw badOp(TEXT_OPS);
      out.push({ field, op, value: text() });
      continue;
    }
    if (ENUM_VALUES[field]) {
      if (!ENUM_OPS.includes(op)) throw badOp(ENUM_OPS);
      const v = text();
      if (!ENUM_VALUES[field].includes(v)) throw invalid(`${loc}.value`, `must be one of ${oneOf(ENUM_VALUES[field])}`);
      out.push({ field, op, value: v });
      continue;
    }
    if (field === 'mailbox_id') {
      if (!ENUM_OPS.includes(op)) throw badOp(ENUM_OPS);
      const v = text();
      const mailbox = isUuid(v) ? await loadMailbox(u.trx, u.workspaceId, v.toLowerCase()) : null;
      if (!mailbox) throw invalid(`${loc}.value`, 'no such mailbox in this workspace');
      out.push({ field, op, value: mailbox.id });
      continue;
    }
    if (field === 'tag') {
      if (!TAG_OPS.includes(op)) throw badOp(TAG_OPS);
      const names = tagNamesOf(c.value);
      if (typeof c.value !== 'string' && !Array.isArray(c.value)) {
        throw invalid(`${loc}.value`, 'must be a label name (or a list of names for contains and not_contains)');
      }
      if (names.length === 0) throw invalid(`${loc}.value`, 'must name a label');
      if ((op === 'equals' || op === 'not_equals') && names.length !== 1) {
        throw invalid(`${loc}.value`, `${op} takes one label; use contains or not_contains for a list`);
      }
      const canonical: string[] = [];
      for (const n of names) {
        cleanTagName(n, `${loc}.value`, true);
        const label = await findLabel(u, n);
        if (!label) throw invalid(`${loc}.value`, `no label named ${JSON.stringify(n)} in this workspace`);
        if (!canonical.includes(label.name)) canonical.push(label.name);
      }
      out.push({ field, op, value: canonical.join(', ') });
      continue;
    }
    if (field === 'ai_decide') {
      aiCount++;
      if (aiCount > MAX_AI_DECIDE) {
        throw invalid(`${loc}.field`, `an automation has at most ${MAX_AI_DECIDE} ai_decide conditions`);
      }
      if (!AI_OPS.includes(op)) throw badOp(AI_OPS);
      const p = c.value;
      if (typeof p !== 'number' || !Number.isFinite(p))
        throw invalid(`${loc}.value`, 'must be a probability (a number)');
      if (p < 0.01 || p > 0.99) throw invalid(`${loc}.value`, 'must be a probability between 0.01 and 0.99');
      if (c.question === undefined) throw invalid(`${loc}.question`, 'is required for ai_decide');
      const q = c.question.trim();
      if ([...q].length < 3 || [...q].length > 300) {
        throw invalid(`${loc}.question`, 'must be 3 to 300 characters of plain text');
      }
      if (NOT_PLAIN.test(q)) throw invalid(`${loc}.question`, 'must be plain text (no HTML, no control characters)');
      out.push({ field, op, value: p, question: q });
      continue;
    }
    const custom = customFieldOf(field);
    if (custom) {
      const def = (await defs.of(custom.entity)).get(custom.key);
      if (!def) throw invalid(`${loc}.field`, `${custom.key} is not a ${custom.entity} field of this workspace`);
      const fop = fieldOpOf(op);
      const allowed = OPS_BY_TYPE[def.type];
      if (!allowed.includes(fop)) {
        throw invalid(
          `${loc}.op`,
          `a ${def.type} field takes ${oneOf(allowed)} (equals and not_equals mean eq and ne), not ${JSON.stringify(op)}`,
        );
      }
      if (fop === 'set' || fop === 'not_set') {
        out.push({ field, op });
        continue;
      }
      if (c.value === undefined) throw invalid(`${loc}.value`, `is required with op ${op}`);
      if (def.type === 'user' && tagNamesOf(c.value).includes('me')) {
        throw invalid(`${loc}.value`, 'an automation acts for nobody: name member ids, not me');
      }
      // The same checks as list filters and views: the predicate is built and thrown away.
      predicate(sql`'{}'::jsonb`, def, { key: def.key, op: fop, value: c.value, location: `${loc}.value` }, null);
      out.push({ field, op, value: c.value });
      continue;
    }
    throw invalid(
      `${loc}.field`,
      `unknown condition field ${JSON.stringify(field)}: use subject, body, from_email, channel, mailbox_id, ` +
        'priority, severity, status, tag, sentiment, ai_decide, field.<key> or contact.field.<key>',
    );
  }
  return out;
}

/**
 * A set_field value (always a string) as the field stores it: a number, true or false, a
 * YYYY-MM-DD date, comma-separated option ids, text; '' (null) clears. Throws a 422 at `loc`.
 */
export function fieldValueOf(def: FieldDef, value: string, loc: string): string | number | boolean | string[] | null {
  const v = value.trim();
  if (v === '') return null;
  switch (def.type) {
    case 'number': {
      const n = Number(v);
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v) || !Number.isFinite(n)) {
        throw invalid(loc, `must be a number for the ${def.type} field ${def.key}`);
      }
      return n;
    }
    case 'checkbox':
      if (v !== 'true' && v !== 'false') throw invalid(loc, `must be true or false for the checkbox field ${def.key}`);
      return v === 'true';
    case 'date':
      if (!isRealDate(v)) throw invalid(loc, `must be a real date written YYYY-MM-DD for the date field ${def.key}`);
      return v;
    case 'multi_select':
      return v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    case 'select':
    case 'user':
    case 'url':
    case 'email':
      return v;
    default:
      return v;
  }
}

export async function cleanActions(u: Unit, list: ActionInput[], at = 'body.actions'): Promise<StoredAction[]> {
  const defs = new Defs(u);
  const out: StoredAction[] = [];
  for (const [i, a] of list.entries()) {
    const loc = `${at}.${i}`;
    const type = a.type.trim() as ActionType;
    if (!(ACTION_TYPES as readonly string[]).includes(type)) {
      throw invalid(`${loc}.type`, `unknown action type ${JSON.stringify(a.type)}: use ${oneOf(ACTION_TYPES)}`);
    }
    if (a.field !== undefined && type !== 'set_field') throw invalid(`${loc}.field`, 'only set_field takes a field');
    const raw = a.value;
    const need = (): string => {
      if (raw === undefined || raw.trim() === '') throw invalid(`${loc}.value`, `is required for ${type}`);
      return raw.trim();
    };
    const pick = (values: readonly string[]) => {
      const v = need();
      if (!values.includes(v)) throw invalid(`${loc}.value`, `must be one of ${oneOf(values)}`);
      return v;
    };
    switch (type) {
      case 'set_status':
        out.push({ type, value: pick(STATUSES) });
        break;
      case 'set_priority':
        out.push({ type, value: pick(PRIORITIES) });
        break;
      case 'set_severity': {
        const v = (raw ?? '').trim();
        if (v !== '' && !(SEVERITIES as readonly string[]).includes(v)) {
          throw invalid(`${loc}.value`, `must be one of ${oneOf(SEVERITIES)}, or an empty string to clear`);
        }
        if (raw === undefined) throw invalid(`${loc}.value`, 'is required (an empty string clears the severity)');
        out.push({ type, value: v });
        break;
      }
      case 'assign_user': {
        const v = need();
        const member = isUuid(v) ? await getMemberView(u.trx, u.workspaceId, v.toLowerCase()) : null;
        if (!member) throw invalid(`${loc}.value`, 'is not a member of this workspace');
        if (!roleAtLeast(member.role, 'agent')) {
          throw invalid(`${loc}.value`, 'is a viewer; viewers cannot be assigned tickets');
        }
        out.push({ type, value: member.user.id });
        break;
      }
      case 'assign_team': {
        const v = need();
        const team = isUuid(v)
          ? await u.trx
              .selectFrom('teams')
              .select('id')
              .where('workspace_id', '=', u.workspaceId)
              .where('id', '=', v.toLowerCase())
              .executeTakeFirst()
          : undefined;
        if (!team) throw invalid(`${loc}.value`, 'no such team in this workspace');
        out.push({ type, value: team.id });
        break;
      }
      case 'add_tag':
      case 'remove_tag': {
        const v = need();
        if (!isUuid(v)) cleanTagName(v, `${loc}.value`, true);
        const label = await findLabel(u, v);
        if (!label) throw invalid(`${loc}.value`, `no label ${JSON.stringify(v)} in this workspace`);
        if (type === 'add_tag') {
          if (label.archived) throw invalid(`${loc}.value`, `label ${JSON.stringify(label.name)} is archived`);
          if (!label.applies_to.includes('tickets')) {
            throw invalid(`${loc}.value`, `label ${JSON.stringify(label.name)} does not apply to tickets`);
          }
        }
        out.push({ type, value: label.name });
        break;
      }
      case 'send_reply':
      case 'add_note': {
        if (raw === undefined) throw invalid(`${loc}.value`, `is required for ${type} (the HTML body)`);
        out.push({ type, value: cleanBody(raw, false, `${loc}.value`).html });
        break;
      }
      case 'mark_spam':
      case 'ai_triage':
        if (raw !== undefined && raw.trim() !== '') throw invalid(`${loc}.value`, `${type} takes no value`);
        out.push({ type, value: '' });
        break;
      case 'set_field': {
        if (a.field === undefined) throw invalid(`${loc}.field`, 'is required for set_field (a ticket field key)');
        const key = a.field.trim();
        const def = (await defs.of('ticket')).get(key);
        if (!def) throw invalid(`${loc}.field`, `${key} is not a ticket field of this workspace`);
        if (def.archived) throw invalid(`${loc}.field`, `${key} is archived: its value cannot change`);
        if (raw === undefined) throw invalid(`${loc}.value`, 'is required for set_field (an empty string clears)');
        const value = fieldValueOf(def, raw, `${loc}.value`);
        // The checks of a ticket's own field writes (types, options, members), located here.
        try {
          await applyFieldValues(u, 'ticket', {}, { [key]: value }, `${loc}.value`);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'validation_failed') {
            throw invalid(`${loc}.value`, err.errors?.[0]?.message ?? 'is not a value of this field');
          }
          throw err;
        }
        out.push({ type, value: raw.trim(), field: key });
        break;
      }
    }
  }
  return out;
}
