// The chat widget's settings (docs/widget.md): on or off, the greeting, require email, the
// websites allowed to embed it (GET, PATCH /v1/widget/settings, admins only); the install snippet
// with the workspace's widget_key; the identity-verification secret (POST
// /v1/workspace/widget-secret/rotate: shown once, each rotation replaces it) with the server-side
// code that signs a user id with it. Non-admins are told, not sent to a 403.
import { Link } from '@tanstack/react-router';
import { type FormEvent, useId, useState } from 'react';
import type { paths } from '../../api.gen';
import { useRotateWidgetSecret, useSaveWidgetSettings, useWidgetSettings } from '../../data/widget';
import { useWorkspaceRecord } from '../../data/workspace';
import { publicAddress } from '../../lib/address';
import { useWorkspace } from '../../lib/context';
import { isAdmin, useRole } from '../../lib/role';
import { CopyButton } from '../../ui/copy';
import { CheckboxField, ConfirmButton, fieldError, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import './channels.css';

type WidgetSettings = paths['/v1/widget/settings']['get']['responses'][200]['content']['application/json'];

export default function WidgetSection() {
  const ws = useWorkspace();
  const role = useRole();
  const admin = isAdmin(role);
  const workspace = useWorkspaceRecord(ws);
  const settings = useWidgetSettings(ws, admin);
  return (
    <>
      <PageTitle>Chat widget</PageTitle>
      <p className="hint">
        Visitors of your website chat with you through the widget; their conversations arrive in{' '}
        <Link to="/chats">Chats</Link>.
      </p>
      {workspace.data && <InstallSnippet widgetKey={workspace.data.widget_key} />}
      {role !== null && !admin ? (
        <p className="hint">Only admins can see and change the widget's settings and its identity secret.</p>
      ) : (
        <>
          {settings.error ? <ErrorNote error={settings.error} what="Could not load the widget's settings" /> : null}
          {settings.data ? <WidgetForm initial={settings.data} /> : !settings.error && <Loading />}
          <IdentitySecret />
        </>
      )}
    </>
  );
}

function InstallSnippet({ widgetKey }: { widgetKey: string }) {
  // PUBLIC_URL, not this page's address: the widget's socket is at PUBLIC_URL (the session's
  // gateway_url), so a site's policy names one address for both (the app may be open at another
  // spelling, such as 127.0.0.1 for localhost).
  const base = publicAddress();
  const socket = base.replace(/^http/, 'ws');
  const snippet = `<script src="${base}/widget.js" data-key="${widgetKey}" async></script>`;
  return (
    <section className="channel-box" aria-labelledby="widget-install-title">
      <h2 id="widget-install-title">Install</h2>
      <p>
        Put this before <code>&lt;/body&gt;</code> on every page where visitors may chat:
      </p>
      <pre className="code-block">
        <code>{snippet}</code>
      </pre>
      <CopyButton text={snippet} label="Copy the snippet" />
      <p className="hint">
        The key ({widgetKey}) is public: it only names this workspace. A page with a Content-Security-Policy must allow{' '}
        {base} in script-src and img-src, and {base} {socket} in connect-src.
      </p>
    </section>
  );
}

const ORIGIN = /^https?:\/\/[^/\s?#]+$/i;

function WidgetForm({ initial }: { initial: WidgetSettings }) {
  const saveSettings = useSaveWidgetSettings(useWorkspace());
  const [enabled, setEnabled] = useState(initial.enabled);
  const [greeting, setGreeting] = useState(initial.greeting);
  const [requireEmail, setRequireEmail] = useState(initial.require_email);
  const [origins, setOrigins] = useState<string[]>(initial.allowed_origins);
  const [adding, setAdding] = useState('');
  const [addError, setAddError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const greetingId = useId();

  const add = () => {
    const o = adding.trim().replace(/\/+$/, '').toLowerCase();
    if (!o) return;
    if (!ORIGIN.test(o)) {
      setAddError('An origin is scheme://host[:port], such as https://www.example.com: no path.');
      return;
    }
    setAddError(null);
    if (!origins.includes(o)) setOrigins([...origins, o]);
    setAdding('');
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const updated = await saveSettings.mutateAsync({
        enabled,
        greeting: greeting.trim(),
        require_email: requireEmail,
        allowed_origins: origins,
      });
      setOrigins(updated.allowed_origins);
      setSaved('Saved. Widgets pick the change up when a page opens them next.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const originsError = fieldError(error, 'allowed_origins');
  return (
    <form onSubmit={save} aria-label="Widget settings" className="channel-box">
      <h2>Settings</h2>
      <CheckboxField
        label="Widget on"
        checked={enabled}
        onChange={(e) => setEnabled(e.target.checked)}
        hint="Off, the widget shows nothing on any website (its routes answer “not found”)."
      />
      <div className="field">
        <label htmlFor={greetingId}>Greeting</label>
        <textarea
          id={greetingId}
          rows={2}
          maxLength={500}
          value={greeting}
          onChange={(e) => setGreeting(e.target.value)}
          aria-describedby={`${greetingId}-hint`}
        />
        <p id={`${greetingId}-hint`} className="hint">
          The first thing visitors read when they open the chat.
        </p>
        {fieldError(error, 'greeting') && <p className="field-error">{fieldError(error, 'greeting')}</p>}
      </div>
      <CheckboxField
        label="Ask for the visitor's email before the first message"
        checked={requireEmail}
        onChange={(e) => setRequireEmail(e.target.checked)}
        hint="So that you can answer by email when they have left."
      />
      <fieldset className="origins">
        <legend>Websites allowed to use the widget</legend>
        <p className="hint">
          {origins.length === 0
            ? 'None listed: every website may embed the widget with your key.'
            : 'Only these websites may use the widget; any other gets nothing.'}
        </p>
        {origins.length > 0 && (
          <ul className="origin-list">
            {origins.map((o) => (
              <li key={o}>
                <code>{o}</code>
                <button
                  type="button"
                  className="button small"
                  onClick={() => setOrigins(origins.filter((x) => x !== o))}
                >
                  Remove<span className="visually-hidden"> {o}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
        <div className="origin-add">
          <TextField
            label="Add a website"
            value={adding}
            placeholder="https://www.example.com"
            onChange={(e) => setAdding(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                add();
              }
            }}
            error={addError ?? undefined}
            hint="Its origin: scheme, host and port, no path. Saved with the rest."
          />
          <button type="button" className="button" onClick={add} disabled={!adding.trim()}>
            Add
          </button>
        </div>
        {originsError && <p className="field-error">{originsError}</p>}
      </fieldset>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Save'}
      </button>
      {!originsError && <ErrorNote error={error} what="Could not save the widget's settings" />}
      <p className="sent" role="status">
        {saved}
      </p>
    </form>
  );
}

const NODE_EXAMPLE = `import { createHmac } from 'node:crypto';

const WIDGET_SECRET = process.env.WIDGET_SECRET;
export const userHash = (userId) =>
  createHmac('sha256', WIDGET_SECRET).update(String(userId)).digest('hex');

// In your page, for the signed-in user:
// HelpdeskWidget.identify({ user_id: user.id, user_hash: userHash(user.id), email: user.email, name: user.name })`;

const PYTHON_EXAMPLE = `import hashlib
import hmac
import os

WIDGET_SECRET = os.environ["WIDGET_SECRET"].encode()

def user_hash(user_id: str) -> str:
    return hmac.new(WIDGET_SECRET, str(user_id).encode(), hashlib.sha256).hexdigest()`;

function IdentitySecret() {
  const [secret, setSecret] = useState<string | null>(null);
  const rotate = useRotateWidgetSecret();
  return (
    <section className="channel-box" aria-labelledby="widget-identity-title">
      <h2 id="widget-identity-title">Verified identities</h2>
      <p>
        When people are signed in on your website, tell the widget who they are: their id on your site and its
        signature, the hex HMAC-SHA256 of the id with the widget secret, computed on your server. The same person is
        then the same contact on every device, and nobody can claim to be someone else.
      </p>
      <p className="hint">
        The secret is shown once, when it is made. Making a new one replaces the old at once: identities signed with the
        old one are refused until your server uses the new one. Keep it on your server, never in a page.
      </p>
      {secret ? (
        <div className="secret">
          <TextField label="Widget secret (shown once)" value={secret} readOnly onFocus={(e) => e.target.select()} />
          <CopyButton text={secret} label="Copy the secret" />
        </div>
      ) : null}
      <ConfirmButton
        className="button"
        title="Make a new widget secret?"
        description="The current secret stops working at once: visitors identified with it are refused until your server signs with the new one."
        confirm="Make a new secret"
        onConfirm={async () => {
          const r = await rotate.mutateAsync();
          setSecret(r.widget_secret);
        }}
      >
        {secret ? 'Make another secret' : 'Make a new secret'}
      </ConfirmButton>
      <h3>On your server: Node.js</h3>
      <pre className="code-block">
        <code>{NODE_EXAMPLE}</code>
      </pre>
      <h3>Python</h3>
      <pre className="code-block">
        <code>{PYTHON_EXAMPLE}</code>
      </pre>
    </section>
  );
}
