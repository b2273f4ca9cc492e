// The builder's conditions: one row each (field, operator, and the value as that field takes it:
// a list of choices, a number, a date, a label name, or a yes/no question for the AI).
import { fieldError, SelectField, TextField } from '../../../ui/form';
import { BASE_FIELDS, type Choices, type Condition, customOf, ENUMS, FieldNote, OP_TEXT, opsOf } from './choices';

export function ConditionRow({
  n,
  c,
  choices,
  error,
  at,
  onChange,
  onRemove,
}: {
  n: number;
  c: Condition;
  choices: Choices;
  error: unknown;
  at: string;
  onChange(c: Condition): void;
  onRemove(): void;
}) {
  const fieldOptions: Array<[string, string]> = [
    ...BASE_FIELDS,
    ...choices.ticketFields.map((f): [string, string] => [`field.${f.key}`, `Ticket field: ${f.name}`]),
    ...choices.contactFields.map((f): [string, string] => [`contact.field.${f.key}`, `Contact field: ${f.name}`]),
  ];
  if (!fieldOptions.some(([v]) => v === c.field)) fieldOptions.push([c.field, c.field]);
  const ops = opsOf(c.field, choices);
  const opOptions = (ops.includes(c.op) ? ops : [c.op, ...ops]).map((o): [string, string] => [
    o,
    c.field === 'ai_decide'
      ? o === 'gt'
        ? 'yes with a probability above'
        : 'yes with a probability below'
      : (OP_TEXT[o] ?? o),
  ]);
  const changeField = (field: string) => {
    const nextOps = opsOf(field, choices);
    const value = field === 'ai_decide' ? 0.7 : ENUMS[field] ? ENUMS[field]![0]![0] : '';
    onChange({ field, op: nextOps[0]!, value, ...(field === 'ai_decide' ? { question: '' } : {}) });
  };
  return (
    <li className="builder-row">
      <span className="row-number" aria-hidden="true">
        {n}
      </span>
      <SelectField
        label={`Condition ${n}: field`}
        value={c.field}
        onChange={(e) => changeField(e.target.value)}
        options={fieldOptions}
        error={fieldError(error, `${at}.field`)}
      />
      <SelectField
        label={`Condition ${n}: operator`}
        value={c.op}
        onChange={(e) =>
          onChange({ ...c, op: e.target.value, ...(/^(not_)?set$/.test(e.target.value) ? { value: undefined } : {}) })
        }
        options={opOptions}
        error={fieldError(error, `${at}.op`)}
      />
      <ConditionValue n={n} c={c} choices={choices} error={fieldError(error, `${at}.value`)} onChange={onChange} />
      {c.field === 'ai_decide' && (
        <TextField
          label={`Condition ${n}: question`}
          value={c.question ?? ''}
          onChange={(e) => onChange({ ...c, question: e.target.value })}
          hint="A yes/no question about the ticket, 3 to 300 characters."
          error={fieldError(error, `${at}.question`)}
        />
      )}
      <button type="button" className="button remove" onClick={onRemove}>
        Remove<span className="visually-hidden"> condition {n}</span>
      </button>
      <FieldNote error={error} name={at} />
    </li>
  );
}

function ConditionValue({
  n,
  c,
  choices,
  error,
  onChange,
}: {
  n: number;
  c: Condition;
  choices: Choices;
  error: string | undefined;
  onChange(c: Condition): void;
}) {
  const label = `Condition ${n}: value`;
  const text = Array.isArray(c.value) ? c.value.join(', ') : c.value === undefined ? '' : String(c.value);
  if (c.op === 'set' || c.op === 'not_set') return null;
  if (ENUMS[c.field]) {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={ENUMS[c.field]!}
        error={error}
      />
    );
  }
  if (c.field === 'mailbox_id') {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={[['', 'Choose a mailbox'], ...choices.mailboxes.map((m): [string, string] => [m.id, m.name])]}
        error={error}
      />
    );
  }
  if (c.field === 'ai_decide') {
    return (
      <TextField
        label={`${label} (probability)`}
        type="number"
        min={0.01}
        max={0.99}
        step={0.01}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value === '' ? '' : Number(e.target.value) })}
        error={error}
      />
    );
  }
  if (c.field === 'tag') {
    return (
      <TextField
        label={label}
        value={text}
        list="automation-labels"
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        hint={c.op.includes('contains') ? 'A label name, or several separated by commas.' : 'A label name.'}
        error={error}
      />
    );
  }
  const custom = customOf(c.field, choices);
  if (custom && (custom.type === 'select' || custom.type === 'multi_select')) {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={[['', 'Choose an option'], ...custom.options.map((o): [string, string] => [o.id, o.label])]}
        error={error}
      />
    );
  }
  if (custom?.type === 'checkbox') {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value === 'true' })}
        options={[
          ['true', 'Checked'],
          ['false', 'Not checked'],
        ]}
        error={error}
      />
    );
  }
  if (custom?.type === 'user') {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={[['', 'Choose a person'], ...choices.members.map((m): [string, string] => [m.user.id, m.user.name])]}
        error={error}
      />
    );
  }
  return (
    <TextField
      label={label}
      type={custom?.type === 'date' ? 'date' : custom?.type === 'number' ? 'number' : 'text'}
      value={text}
      onChange={(e) => onChange({ ...c, value: e.target.value })}
      error={error}
    />
  );
}
