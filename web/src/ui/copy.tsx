// Copying a value (an API key, a signing secret, a forwarding address, the widget's snippet): a
// button that copies and says so, and a read-only field with its label and that button. Where the
// clipboard is not available (an insecure origin), it says to select and copy by hand.
import { useId, useState } from 'react';

/** `what` names the copied thing for screen readers ("Copy" then reads "Copy API key"). */
export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what?: string }) {
  const [said, setSaid] = useState('');
  return (
    <>
      <button
        type="button"
        className="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setSaid('Copied.');
          } catch {
            setSaid('Could not copy: select the text and copy it with Ctrl+C.');
          }
          setTimeout(() => setSaid(''), 4000);
        }}
      >
        {label}
        {what && <span className="visually-hidden"> {what}</span>}
      </button>{' '}
      <span role="status" className="hint">
        {said}
      </span>
    </>
  );
}

export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const id = useId();
  return (
    <div className="field copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input
          id={id}
          readOnly
          value={value}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
          aria-describedby={hint ? `${id}-hint` : undefined}
        />
        <CopyButton text={value} what={label.toLowerCase()} />
      </div>
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
    </div>
  );
}
