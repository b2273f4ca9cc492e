// The builder's actions: one row each (what to do, and its value: a status, a person, a team, a
// label, a reply or note, a custom field's new value).
import { type ReactNode, useId } from 'react';
import { fieldError, SelectField, TextField } from '../../../ui/form';
import { ACTIONS, type Action, type Choices, ENUMS, FieldNote } from './choices';

export function ActionRow({
  n,
  a,
  choices,
  error,
  at,
  onChange,
  onRemove,
}: {
  n: number;
  a: Action;
  choices: Choices;
  error: unknown;
  at: string;
  onChange(a: Action): void;
  onRemove?: () => void;
}) {
  const textId = useId();
  const label = `Action ${n}: value`;
  const value = a.value ?? '';
  const valueError = fieldError(error, `${at}.value`);
  const types = ACTIONS.some(([t]) => t === a.type) ? ACTIONS : [...ACTIONS, [a.type, a.type] as [string, string]];
  const changeType = (type: string) => {
    const first: Record<string, string> = {
      set_status: 'solved',
      set_priority: 'high',
      set_severity: 'sev3',
      assign_user: choices.members[0]?.user.id ?? '',
      assign_team: choices.teams[0]?.id ?? '',
      add_tag: choices.tags[0]?.name ?? '',
      remove_tag: choices.tags[0]?.name ?? '',
    };
    onChange({
      type,
      ...(type === 'mark_spam' || type === 'ai_triage' ? {} : { value: first[type] ?? '' }),
      ...(type === 'set_field' ? { field: choices.ticketFields[0]?.key ?? '' } : {}),
    });
  };
  let input: ReactNode = null;
  const select = (options: Array<[string, string]>, lbl = label) => (
    <SelectField
      label={lbl}
      value={value}
      onChange={(e) => onChange({ ...a, value: e.target.value })}
      options={options}
      error={valueError}
    />
  );
  switch (a.type) {
    case 'set_status':
      input = select(ENUMS.status!, `Action ${n}: status`);
      break;
    case 'set_priority':
      input = select(ENUMS.priority!, `Action ${n}: priority`);
      break;
    case 'set_severity':
      input = select([...ENUMS.severity!.slice(0, 4), ['', 'None (clear it)']], `Action ${n}: severity`);
      break;
    case 'assign_user':
      input = select(
        [['', 'Choose a person'], ...choices.members.map((m): [string, string] => [m.user.id, m.user.name])],
        `Action ${n}: person`,
      );
      break;
    case 'assign_team':
      input = select(
        [['', 'Choose a team'], ...choices.teams.map((t): [string, string] => [t.id, t.name])],
        `Action ${n}: team`,
      );
      break;
    case 'add_tag':
    case 'remove_tag':
      input = (
        <TextField
          label={`Action ${n}: label`}
          value={value}
          list="automation-labels"
          onChange={(e) => onChange({ ...a, value: e.target.value })}
          hint={choices.tags.length === 0 ? 'Make labels in Settings → Labels first.' : 'The label’s name.'}
          error={valueError}
        />
      );
      break;
    case 'send_reply':
    case 'add_note':
      input = (
        <div className="field wide">
          <label htmlFor={textId}>{a.type === 'send_reply' ? `Action ${n}: reply` : `Action ${n}: note`}</label>
          <textarea
            id={textId}
            rows={3}
            value={value}
            onChange={(e) => onChange({ ...a, value: e.target.value })}
            aria-invalid={valueError ? true : undefined}
            aria-describedby={valueError ? `${textId}-error` : undefined}
          />
          {valueError && (
            <p id={`${textId}-error`} className="field-error">
              {valueError}
            </p>
          )}
        </div>
      );
      break;
    case 'set_field':
      input = (
        <>
          <SelectField
            label={`Action ${n}: field`}
            value={a.field ?? ''}
            onChange={(e) => onChange({ ...a, field: e.target.value })}
            options={[['', 'Choose a field'], ...choices.ticketFields.map((f): [string, string] => [f.key, f.name])]}
            error={fieldError(error, `${at}.field`)}
          />
          <TextField
            label={`Action ${n}: field value`}
            value={value}
            onChange={(e) => onChange({ ...a, value: e.target.value })}
            hint="A number, true or false, a date (YYYY-MM-DD), option ids separated by commas, or empty to clear."
            error={valueError}
          />
        </>
      );
      break;
    default:
      input = null;
  }
  return (
    <li className="builder-row">
      <span className="row-number" aria-hidden="true">
        {n}
      </span>
      <SelectField
        label={`Action ${n}`}
        value={a.type}
        onChange={(e) => changeType(e.target.value)}
        options={types}
        error={fieldError(error, `${at}.type`)}
      />
      {input}
      {onRemove && (
        <button type="button" className="button remove" onClick={onRemove}>
          Remove<span className="visually-hidden"> action {n}</span>
        </button>
      )}
      <FieldNote error={error} name={at} />
      {n === 1 && (
        <datalist id="automation-labels">
          {choices.tags.map((t) => (
            <option key={t.id} value={t.name} />
          ))}
        </datalist>
      )}
    </li>
  );
}
