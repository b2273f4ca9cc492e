// A button that copies a text (an address, a snippet, a secret) and says so; where the clipboard
// is not available (an insecure origin), it says to select and copy by hand.
import { useState } from 'react';

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
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
      </button>{' '}
      <span role="status" className="hint">
        {said}
      </span>
    </>
  );
}
