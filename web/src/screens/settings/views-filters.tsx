// A view's custom field conditions (filters.fields): one row each, a ticket field, an operator
// from the ones its type takes (interface.md's table), and a value editor that fits the type
// (choices as checkboxes or a list, a member, a date, a number, yes/no, text).
import { useId, useRef } from 'react';
import type { Schemas, View } from '../../lib/api';
import { SelectField, TextField } from '../../ui/form';

export type FieldFilter = NonNullable<View['filters']['fields']>[number];
type Op = FieldFilter['op'];
type Field = Schemas['CustomField'];

const OPS: Record<Field['type'], Op[]> = {
  text: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  long_text: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  url: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  email: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  date: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  checkbox: ['eq', 'ne', 'set', 'not_set'],
  select: ['any', 'eq', 'ne', 'none', 'set', 'not_set'],
  user: ['any', 'eq', 'ne', 'none', 'set', 'not_set'],
  multi_select: ['any', 'all', 'none', 'eq', 'ne', 'set', 'not_set'],
};

function opText(op: Op, type: Field['type']): string {
  const date = type === 'date';
  const multi = type === 'multi_select';
  switch (op) {
    case 'eq':
      return multi ? 'is exactly' : 'is';
    case 'ne':
      return multi ? 'is not exactly' : 'is not';
    case 'contains':
      return 'contains';
    case 'not_contains':
      return 'does not contain';
    case 'gt':
      return date ? 'is after' : 'is more than';
    case 'gte':
      return date ? 'is on or after' : 'is at least';
    case 'lt':
      return date ? 'is before' : 'is less than';
    case 'lte':
      return date ? 'is on or before' : 'is at most';
    case 'any':
      return multi ? 'has any of' : 'is any of';
    case 'all':
      return 'has all of';
    case 'none':
      return multi ? 'has none of' : 'is none of';
    case 'set':
      return 'has a value';
    case 'not_set':
      return 'is empty';
  }
}

/** Operators that take a list of values. */
const takesList = (op: Op, type: Field['type']) => type === 'multi_select' || op === 'any' || op === 'none';

/** A value that fits a new operator (a list kept as a list, one value kept as one). */
function reshape(value: FieldFilter['value'], op: Op, type: Field['type']): FieldFilter['value'] {
  if (op === 'set' || op === 'not_set') return undefined;
  const list = Array.isArray(value) ? value : value === undefined || value === '' ? [] : [String(value)];
  if (takesList(op, type)) return list;
  if (type === 'checkbox') return typeof value === 'boolean' ? value : true;
  if (type === 'number') return typeof value === 'number' ? value : undefined;
  return list[0] ?? '';
}

export function fieldsSummary(conditions: FieldFilter[], fields: Field[]): string {
  return conditions
    .map((c) => {
      const f = fields.find((x) => x.key === c.key);
      const type = f?.type ?? 'text';
      const name = (id: unknown) => f?.options.find((o) => o.id === id)?.label ?? String(id);
      const v =
        c.value === undefined
          ? ''
          : Array.isArray(c.value)
            ? ` ${c.value.map(name).join(', ')}`
            : typeof c.value === 'boolean'
              ? c.value
                ? ' checked'
                : ' unchecked'
              : ` ${name(c.value)}`;
      return `${f?.name ?? c.key} ${opText(c.op, type)}${v}`;
    })
    .join(' · ');
}

export function FieldConditions({
  value,
  onChange,
  fields,
  members,
  error,
}: {
  value: FieldFilter[];
  onChange(v: FieldFilter[]): void;
  fields: Field[];
  members: Array<{ id: string; name: string }>;
  error?: string;
}) {
  const id = useId();
  // Stable keys for the rows (a condition has no id of its own).
  const rowKeys = useRef<number[]>([]);
  const next = useRef(0);
  while (rowKeys.current.length < value.length) rowKeys.current.push(next.current++);
  rowKeys.current.length = value.length;
  const usable = fields.filter((f) => !f.archived || value.some((c) => c.key === f.key));
  const set = (i: number, c: FieldFilter) => onChange(value.map((x, j) => (j === i ? c : x)));
  return (
    <fieldset aria-describedby={error ? `${id}-error` : undefined}>
      <legend>Custom fields</legend>
      {usable.length === 0 && value.length === 0 ? (
        <p className="hint">Tickets have no custom fields yet (Settings, Custom fields).</p>
      ) : null}
      {value.map((c, i) => {
        const f = fields.find((x) => x.key === c.key);
        const type = f?.type ?? 'text';
        const n = i + 1;
        return (
          <div key={rowKeys.current[i]} className="inline-fields">
            <SelectField
              label={`Condition ${n}: field`}
              value={c.key}
              onChange={(e) => {
                const nf = fields.find((x) => x.key === e.target.value);
                const op = OPS[nf?.type ?? 'text'][0]!;
                set(i, { key: e.target.value, op, value: reshape(undefined, op, nf?.type ?? 'text') });
              }}
              options={[['', 'Choose a field…'], ...usable.map((x): [string, string] => [x.key, x.name])]}
              aria-invalid={error && !c.key ? true : undefined}
            />
            <SelectField
              label={`Condition ${n}: operator`}
              value={c.op}
              disabled={!f}
              onChange={(e) => {
                const op = e.target.value as Op;
                set(i, { ...c, op, value: reshape(c.value, op, type) });
              }}
              options={OPS[type].map((op): [string, string] => [op, opText(op, type)])}
            />
            {f && c.op !== 'set' && c.op !== 'not_set' && (
              <ValueEditor
                label={`Condition ${n}: value`}
                field={f}
                condition={c}
                members={members}
                invalid={Boolean(error)}
                onChange={(v) => set(i, { ...c, value: v })}
              />
            )}
            <button
              type="button"
              className="button"
              aria-label={`Remove condition ${n}`}
              onClick={() => {
                rowKeys.current.splice(i, 1);
                onChange(value.filter((_, j) => j !== i));
              }}
            >
              Remove
            </button>
          </div>
        );
      })}
      {usable.length > 0 && (
        <button type="button" className="button" onClick={() => onChange([...value, { key: '', op: 'eq', value: '' }])}>
          Add a condition
        </button>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}

function ValueEditor({
  label,
  field,
  condition,
  members,
  invalid,
  onChange,
}: {
  label: string;
  field: Field;
  condition: FieldFilter;
  members: Array<{ id: string; name: string }>;
  invalid: boolean;
  onChange(v: FieldFilter['value']): void;
}) {
  const { op, value } = condition;
  const choices: Array<[string, string]> =
    field.type === 'user'
      ? [['me', 'Whoever looks at the view'], ...members.map((m): [string, string] => [m.id, m.name])]
      : field.options.map((o): [string, string] => [o.id, o.label]);
  const empty = value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
  const bad = invalid && empty ? true : undefined;
  if (field.type === 'select' || field.type === 'user' || field.type === 'multi_select') {
    if (takesList(op, field.type)) {
      const list = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field">
          <legend>{label}</legend>
          <div className="checks">
            {choices.map(([id, text]) => (
              <label key={id}>
                <input
                  type="checkbox"
                  checked={list.includes(id)}
                  aria-invalid={bad}
                  onChange={(e) => onChange(e.target.checked ? [...list, id] : list.filter((x) => x !== id))}
                />
                {text}
              </label>
            ))}
          </div>
        </fieldset>
      );
    }
    return (
      <SelectField
        label={label}
        value={typeof value === 'string' ? value : ''}
        onChange={(e) => onChange(e.target.value)}
        options={[['', 'Choose…'], ...choices]}
        aria-invalid={bad}
      />
    );
  }
  if (field.type === 'checkbox') {
    return (
      <SelectField
        label={label}
        value={value === false ? 'false' : 'true'}
        onChange={(e) => onChange(e.target.value === 'true')}
        options={[
          ['true', 'Checked'],
          ['false', 'Not checked'],
        ]}
      />
    );
  }
  return (
    <TextField
      label={label}
      type={field.type === 'number' ? 'number' : field.type === 'date' ? 'date' : 'text'}
      value={value === undefined ? '' : String(value)}
      aria-invalid={bad}
      onChange={(e) =>
        onChange(
          field.type === 'number' ? (e.target.value === '' ? undefined : Number(e.target.value)) : e.target.value,
        )
      }
    />
  );
}
