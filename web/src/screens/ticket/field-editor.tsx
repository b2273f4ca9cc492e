// A custom field's editor on the ticket page, one per type: a choice is saved when made, text when
// the field is left (or Enter); the field's own error is shown under it.
import { type ReactNode, useEffect, useId, useState } from 'react';
import type { Schemas } from '../../lib/api';
import { errorText } from '../../lib/api';
import { fieldError } from '../../ui/form';

type Field = Schemas['CustomField'];

export function FieldEditor({
  field: f,
  value,
  members,
  readOnly,
  error,
  onSave,
}: {
  field: Field;
  value: unknown;
  members: Schemas['Member'][];
  readOnly: boolean;
  error: unknown;
  onSave(v: unknown): Promise<boolean>;
}) {
  const id = useId();
  const [draft, setDraft] = useState(value === undefined || value === null ? '' : String(value));
  useEffect(() => setDraft(value === undefined || value === null ? '' : String(value)), [value]);
  const message = error ? (fieldError(error, f.key) ?? errorText(error)) : null;
  const described = message ? `${id}-err` : f.description ? `${id}-hint` : undefined;
  const saveText = () => {
    const v = draft.trim();
    if (v === (value === undefined || value === null ? '' : String(value))) return;
    void onSave(v === '' ? null : f.type === 'number' ? Number(v) : v);
  };
  const common = { id, disabled: readOnly, 'aria-describedby': described, 'aria-invalid': message ? true : undefined };
  let control: ReactNode;
  switch (f.type) {
    case 'checkbox':
      control = (
        <input {...common} type="checkbox" checked={value === true} onChange={(e) => void onSave(e.target.checked)} />
      );
      break;
    case 'select':
      control = (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => void onSave(e.target.value || null)}
        >
          <option value="">—</option>
          {f.options.map((o) => (
            <option key={o.id} value={o.id}>
              {o.label}
            </option>
          ))}
        </select>
      );
      break;
    case 'user':
      control = (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => void onSave(e.target.value || null)}
        >
          <option value="">—</option>
          {members.map((m) => (
            <option key={m.user.id} value={m.user.id}>
              {m.user.name}
            </option>
          ))}
        </select>
      );
      break;
    case 'multi_select': {
      const chosen = Array.isArray(value) ? (value as string[]) : [];
      control = (
        <fieldset className="multi" aria-describedby={described} disabled={readOnly}>
          <legend className="visually-hidden">{f.name}</legend>
          {f.options.map((o) => (
            <label key={o.id}>
              <input
                type="checkbox"
                checked={chosen.includes(o.id)}
                onChange={(e) => void onSave(e.target.checked ? [...chosen, o.id] : chosen.filter((x) => x !== o.id))}
              />
              {o.label}
            </label>
          ))}
        </fieldset>
      );
      break;
    }
    case 'date':
      control = <input {...common} type="date" value={draft} onChange={(e) => void onSave(e.target.value || null)} />;
      break;
    case 'long_text':
      control = (
        <textarea {...common} rows={3} value={draft} onChange={(e) => setDraft(e.target.value)} onBlur={saveText} />
      );
      break;
    default:
      control = (
        <input
          {...common}
          type={f.type === 'number' ? 'number' : f.type === 'url' ? 'url' : f.type === 'email' ? 'email' : 'text'}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={saveText}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              saveText();
            }
          }}
        />
      );
  }
  return (
    <div className={`prop prop-field prop-${f.type}`}>
      {f.type === 'multi_select' ? <span className="prop-label">{f.name}</span> : <label htmlFor={id}>{f.name}</label>}
      <div className="prop-value">
        {control}
        {f.description && !message && (
          <p id={`${id}-hint`} className="hint">
            {f.description}
          </p>
        )}
        {message && (
          <p id={`${id}-err`} className="field-error" role="alert">
            {message}
          </p>
        )}
      </div>
    </div>
  );
}
