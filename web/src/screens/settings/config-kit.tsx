// What the settings screens of "what tickets are made of" share (labels, custom fields, views,
// saved replies, SLA policies, business hours): label colours with their swatch, the caller's
// role (lib/role.ts: admins change definitions, others read them), a dialog holding a form with its errors
// next to the fields, and lists that follow their live events.
import * as Dialog from '@radix-ui/react-dialog';
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import type { Schemas } from '../../lib/api';
import { ApiError } from '../../lib/errors';
import { every } from '../../lib/every';
import { fieldError } from '../../ui/form';
import { ErrorNote } from '../../ui/page';
import { count } from '../../ui/words';
import './config.css';

export type LabelColor = Schemas['Tag']['color'];
/** The API's label colours (src/modules/tags/schemas.ts), in the picker's order; the type check names one it adds. */
export const LABEL_COLORS: readonly LabelColor[] = every<LabelColor>()([
  'gray',
  'red',
  'orange',
  'amber',
  'yellow',
  'lime',
  'green',
  'teal',
  'cyan',
  'blue',
  'indigo',
  'violet',
  'purple',
  'pink',
  'rose',
]);
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A small coloured square; decorative (the colour's name is said next to it when it matters). */
export function Swatch({ color }: { color: LabelColor | null | undefined }) {
  if (!color) return null;
  return <span className={`swatch swatch-${color}`} aria-hidden="true" />;
}

/** A label as it looks on tickets: its colour and name. */
export function Chip({ color, children }: { color: LabelColor | null | undefined; children: ReactNode }) {
  return (
    <span className="chip">
      <Swatch color={color} />
      {children}
    </span>
  );
}

/** A colour picker: a native select of the 15 label colours, with the chosen one's swatch. */
export function ColorField({
  label,
  value,
  onChange,
  none,
  hint,
}: {
  label: string;
  value: LabelColor | '';
  onChange(c: LabelColor | ''): void;
  /** The text of the "no colour" choice; without it a colour must be chosen. */
  none?: string;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="color-field">
        <Swatch color={value || null} />
        <select
          id={id}
          value={value}
          onChange={(e) => onChange(e.target.value as LabelColor | '')}
          aria-describedby={hint ? `${id}-hint` : undefined}
        >
          {none !== undefined && <option value="">{none}</option>}
          {LABEL_COLORS.map((c) => (
            <option key={c} value={c}>
              {cap(c)}
            </option>
          ))}
        </select>
      </div>
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
    </div>
  );
}

/** Refetches a list when one of its live event types lands (data/change.ts). */
export { useLiveRefresh } from '../../data/change';

/** Errors of a form: the ones found before sending, or the API's for each field. */
export type Problems = Record<string, string | undefined>;

/** The message for field `name` after the last attempt: the form's own check, or the API's answer. */
export const problem = (error: unknown, name: string, conflict = false): string | undefined =>
  error instanceof Invalid
    ? error.problems[name]
    : conflict && error instanceof ApiError && error.status === 409
      ? error.message
      : fieldError(error, name);

/** Whether the API's error named one of `names` (then it is shown next to that field only). */
const namesField = (error: unknown, names: string[], conflict: boolean): boolean =>
  error instanceof ApiError && ((conflict && error.status === 409) || names.some((n) => fieldError(error, n)));

/**
 * A dialog holding a form: the title, the fields, and Cancel / the submit button. `check` finds
 * problems before anything is sent (shown next to their fields, the first one focused); the
 * API's errors land next to the fields they name (`fields`) or above the buttons.
 */
export function FormDialog({
  open,
  onOpenChange,
  title,
  description,
  submit,
  onSubmit,
  fields = [],
  error,
  children,
  wide,
  conflict = false,
}: {
  open: boolean;
  onOpenChange(open: boolean): void;
  title: string;
  description?: ReactNode;
  submit: string;
  /** Sends the form; a rejection is shown. */
  onSubmit(): Promise<unknown>;
  /** The body's field names shown in this form (their API errors go next to them). */
  fields?: string[];
  /** The last error (kept by the caller so that fields can show theirs). */
  error: [unknown, (e: unknown) => void];
  children: ReactNode;
  wide?: boolean;
  /** A 409 (a name or key taken) is shown by one of the fields (problem(err, name, true)). */
  conflict?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = error;
  const form = useRef<HTMLFormElement>(null);
  const [attempt, setAttempt] = useState(0);
  // After a failed attempt, the first field said to be wrong gets the focus.
  useEffect(() => {
    if (attempt) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt]);
  const send = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setErr(null);
    try {
      await onSubmit();
      onOpenChange(false);
    } catch (x) {
      setErr(x);
      setAttempt((n) => n + 1);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        if (!o) setErr(null);
        onOpenChange(o);
      }}
    >
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content
          className={`dialog config-dialog${wide ? ' wide' : ''}`}
          {...(description ? {} : { 'aria-describedby': undefined })}
        >
          <Dialog.Title>{title}</Dialog.Title>
          {description && <Dialog.Description className="hint">{description}</Dialog.Description>}
          <form ref={form} onSubmit={send} noValidate>
            {children}
            {err && !(err instanceof Invalid) && !namesField(err, fields, conflict) ? <ErrorNote error={err} /> : null}
            {err instanceof Invalid && (
              <p className="error" role="alert">
                {err.message}
              </p>
            )}
            <div className="dialog-actions">
              <Dialog.Close className="button" type="button">
                Cancel
              </Dialog.Close>
              <button type="submit" className="primary" disabled={busy}>
                {submit}
              </button>
            </div>
          </form>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

/**
 * What a form's own check throws: the problems by field (shown next to them) and a summary
 * read out above the buttons.
 */
export class Invalid extends Error {
  constructor(readonly problems: Problems) {
    super('Some fields need attention: see the messages next to them.');
  }
}

/** Throws Invalid when any problem is set. */
export function check(problems: Problems): void {
  if (Object.values(problems).some(Boolean)) throw new Invalid(problems);
}

/** "90 minutes" as people say it: 1 h 30 min, 2 days. */
export function duration(minutes: number): string {
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const parts = [d ? count(d, 'day') : '', h ? `${h} h` : '', m ? `${m} min` : ''].filter(Boolean);
  return parts.join(' ') || '0 min';
}
