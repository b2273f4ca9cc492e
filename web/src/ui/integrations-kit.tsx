// Small pieces the integrations screens (automations, mailboxes, API keys, webhooks, audit log,
// notifications) share, generic enough for any settings screen: who may change settings (the
// person's role in the selected workspace, so a 403 is never the first they learn of it), the
// note that says so, and a read-only value with a Copy button (a key, a secret, an address).
import { useId, useState } from 'react';
import { useWorkspace } from '../lib/context';
import { useSession } from '../lib/session';
import './integrations-kit.css';

/** The signed-in person's role in the selected workspace (null while unknown). */
export function useRole(): string | null {
  const s = useSession();
  const ws = useWorkspace();
  if (s.status !== 'signed_in') return null;
  return s.me?.workspaces.find((w) => w.id === ws)?.role ?? null;
}

/** Owners and admins change the workspace's settings. */
export function useCanAdmin(): boolean {
  const role = useRole();
  return role === 'owner' || role === 'admin';
}

export function AdminOnly({ what = 'change this' }: { what?: string }) {
  return <p className="hint admin-only">Only owners and admins can {what}. Ask one of them.</p>;
}

/**
 * A value to copy (an API key, a signing secret, a forwarding address): read-only text with its
 * label and a Copy button that says when it copied.
 */
export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const id = useId();
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
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
        <button
          type="button"
          className="button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(value);
              setCopied('yes');
            } catch {
              setCopied('no');
            }
          }}
        >
          Copy<span className="visually-hidden"> {label.toLowerCase()}</span>
        </button>
      </div>
      <p className="hint" role="status">
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Could not copy: select the text and copy it.' : ''}
      </p>
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
    </div>
  );
}
