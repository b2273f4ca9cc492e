// Form controls with their labels, hints and the API's field errors wired for assistive
// technology (aria-describedby, aria-invalid). Native inputs and selects: they are accessible and
// keyboard-friendly as they are; Radix primitives are for menus and dialogs.
import * as Dialog from '@radix-ui/react-dialog';
import { type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, useId, useState } from 'react';
import { ApiError } from '../lib/errors';

/** The API's message for one field of the request (`errors[].location`, e.g. `body.name`). */
export function fieldError(error: unknown, name: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  return error.fields.find((f) => f.location === `body.${name}` || f.location.endsWith(`.${name}`))?.message;
}

interface FieldProps {
  label: string;
  hint?: ReactNode;
  error?: string;
}

export function TextField({ label, hint, error, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined}
        {...input}
      />
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

export function SelectField({
  label,
  hint,
  error,
  options,
  ...select
}: FieldProps & SelectHTMLAttributes<HTMLSelectElement> & { options: Array<[value: string, text: string]> }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined}
        {...select}
      >
        {options.map(([v, t]) => (
          <option key={v} value={v}>
            {t}
          </option>
        ))}
      </select>
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

export function CheckboxField({ label, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field field-check">
      <input id={id} type="checkbox" aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
    </div>
  );
}

/** A "Delete" button (with the thing's name for screen readers) that asks first, in a dialog. */
export function DeleteButton({
  name,
  ...confirm
}: Omit<ConfirmButtonProps, 'children' | 'className'> & { name: string }) {
  return (
    <ConfirmButton {...confirm}>
      <span aria-hidden="true">Delete</span>
      <span className="visually-hidden">Delete {name}</span>
    </ConfirmButton>
  );
}

interface ConfirmButtonProps {
  children: ReactNode;
  title: string;
  description: ReactNode;
  confirm: string;
  onConfirm(): Promise<unknown> | unknown;
  className?: string;
}

/**
 * A button that asks before doing something that cannot be undone (delete, revoke, rotate): a
 * dialog naming what happens, with the focus on Cancel.
 */
export function ConfirmButton({
  children,
  title,
  description,
  confirm,
  onConfirm,
  className = 'button danger',
}: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        setError(null);
      }}
    >
      <Dialog.Trigger className={className}>{children}</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog" role="alertdialog">
          <Dialog.Title>{title}</Dialog.Title>
          <Dialog.Description className="hint">{description}</Dialog.Description>
          {error ? (
            <p className="error" role="alert">
              {error instanceof Error ? error.message : String(error)}
            </p>
          ) : null}
          <div className="dialog-actions">
            <Dialog.Close className="button" autoFocus>
              Cancel
            </Dialog.Close>
            <button
              type="button"
              className="button danger"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                try {
                  await onConfirm();
                  setOpen(false);
                } catch (err) {
                  setError(err);
                } finally {
                  setBusy(false);
                }
              }}
            >
              {confirm}
            </button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
