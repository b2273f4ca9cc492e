// The public help center's settings (docs/help-center.md "Turn the help center on"): on or off,
// its title and brand colour (PATCH /v1/workspace settings), its logo and favicon (the workspace
// image slots, PUT/DELETE /v1/workspace/images/{slot}), and its public address. Admins change
// them; others see them read-only.
import { Link } from '@tanstack/react-router';
import { type FormEvent, useId, useState } from 'react';
import {
  useRemoveWorkspaceImage,
  useUpdateWorkspace,
  useUploadWorkspaceImage,
  useWorkspaceRecord,
  type WorkspaceRecord,
} from '../../data/workspace';
import { useWorkspace } from '../../lib/context';
import { isAdmin, useRole } from '../../lib/role';
import { CopyButton } from '../../ui/copy';
import { CheckboxField, ConfirmButton, fieldError, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import './channels.css';

export default function HelpCenterSection() {
  const ws = useWorkspace();
  const workspace = useWorkspaceRecord(ws);
  const admin = isAdmin(useRole());
  return (
    <>
      <PageTitle>Help center</PageTitle>
      {!admin && <p className="hint">Only admins can change the help center's settings: they are shown read-only.</p>}
      {workspace.error ? <ErrorNote error={workspace.error} what="Could not load the workspace" /> : null}
      {workspace.data ? <HelpCenterForm key={workspace.data.id} w={workspace.data} admin={admin} /> : <Loading />}
    </>
  );
}

function HelpCenterForm({ w, admin }: { w: WorkspaceRecord; admin: boolean }) {
  const update = useUpdateWorkspace(useWorkspace());
  const [enabled, setEnabled] = useState(w.settings.help_center_enabled);
  const [title, setTitle] = useState(w.settings.help_center_title);
  const [color, setColor] = useState(w.settings.brand_color);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const colorId = useId();
  const url = `${location.origin}/hc/${w.slug}`;

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const updated = await update.mutateAsync({
        settings: { help_center_enabled: enabled, help_center_title: title.trim(), brand_color: color },
      });
      setSaved(
        updated.settings.help_center_enabled
          ? 'Saved. The help center shows the change on its next load.'
          : 'Saved. The help center is off: its pages answer “not found”.',
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <section className="channel-box" aria-labelledby="hc-link-title">
        <h2 id="hc-link-title">Public address</h2>
        <p className="channel-link">
          <a href={url} target="_blank" rel="noopener">
            {url}
            <span className="visually-hidden"> (opens in a new tab)</span>
          </a>{' '}
          <CopyButton text={url} label="Copy the address" />
        </p>
        <p className="hint">
          {w.settings.help_center_enabled
            ? 'Link to it from your website, your emails and your replies. It shows published articles only.'
            : 'The help center is off: this address answers “not found” until you turn it on.'}{' '}
          Articles are written in the <Link to="/knowledge-base">knowledge base</Link>.
        </p>
      </section>
      <form onSubmit={save} aria-label="Help center settings">
        <fieldset disabled={!admin} className="channel-fields">
          <CheckboxField
            label="Help center on"
            checked={enabled}
            onChange={(e) => setEnabled(e.target.checked)}
            hint="Off, every page of the help center answers “not found”."
          />
          <TextField
            label="Title"
            value={title}
            maxLength={100}
            placeholder={w.name}
            onChange={(e) => setTitle(e.target.value)}
            hint="Shown in the header and the page titles. Empty: the workspace's name."
            error={fieldError(error, 'help_center_title')}
          />
          <div className="field">
            <label htmlFor={colorId}>Brand colour</label>
            <div className="color-row">
              <input
                id={colorId}
                type="color"
                value={color}
                onChange={(e) => setColor(e.target.value)}
                aria-describedby={`${colorId}-hint`}
              />
              <code>{color}</code>
            </div>
            <p id={`${colorId}-hint`} className="hint">
              The header's colour and the links'. The header's text turns white or black, whichever reads better; links
              are darkened as needed. The chat widget's launcher uses it too.
            </p>
            {fieldError(error, 'brand_color') && <p className="field-error">{fieldError(error, 'brand_color')}</p>}
          </div>
          {admin && (
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save'}
            </button>
          )}
        </fieldset>
        <ErrorNote error={error} what="Could not save the help center's settings" />
        <p className="sent" role="status">
          {saved}
        </p>
      </form>
      <section className="channel-box" aria-labelledby="hc-images-title">
        <h2 id="hc-images-title">Logo and favicon</h2>
        <ImageSlot
          w={w}
          slot="help_center_logo"
          name="Logo"
          hint="Shown in the header, the title as its text alternative. PNG, JPEG, GIF or WebP; fitted to 256 px."
          admin={admin}
        />
        <ImageSlot
          w={w}
          slot="help_center_favicon"
          name="Favicon"
          hint="The icon browsers show in the tab. A square picture works best."
          admin={admin}
        />
      </section>
    </>
  );
}

/** One of the workspace's brand images: the current one, upload a new one, remove it. */
export function ImageSlot({
  w,
  slot,
  name,
  hint,
  admin,
}: {
  w: WorkspaceRecord;
  slot: 'help_center_logo' | 'help_center_favicon' | 'widget_avatar' | 'widget_launcher';
  name: string;
  hint: string;
  admin: boolean;
}) {
  const ws = useWorkspace();
  const uploadImage = useUploadWorkspaceImage(ws);
  const removeImage = useRemoveWorkspaceImage(ws);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const id = useId();
  const current = w.images[slot];

  const upload = async (file: File) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      await uploadImage.mutateAsync({ slot, file });
      setDone(`${name} uploaded.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="image-slot">
      <div className="image-slot-preview">
        {current ? (
          <img src={current} alt={`The current ${name.toLowerCase()}`} width={64} height={64} />
        ) : (
          <span className="hint">No {name.toLowerCase()}</span>
        )}
      </div>
      <div className="image-slot-body">
        {admin ? (
          <div className="field">
            <label htmlFor={id}>
              {current ? `Replace the ${name.toLowerCase()}` : `Upload a ${name.toLowerCase()}`}
            </label>
            <input
              id={id}
              type="file"
              accept="image/png,image/jpeg,image/gif,image/webp"
              disabled={busy}
              aria-describedby={`${id}-hint`}
              onChange={(e) => {
                const file = e.target.files?.[0];
                e.target.value = '';
                if (file) void upload(file);
              }}
            />
            <p id={`${id}-hint`} className="hint">
              {hint}
            </p>
          </div>
        ) : (
          <p>
            <strong>{name}</strong>
          </p>
        )}
        {admin && current && (
          <ConfirmButton
            title={`Remove the ${name.toLowerCase()}?`}
            description="The help center goes back to showing none."
            confirm={`Remove ${name.toLowerCase()}`}
            onConfirm={() => removeImage.mutateAsync(slot)}
          >
            Remove the {name.toLowerCase()}
          </ConfirmButton>
        )}
        {busy && <Loading label="Uploading…" />}
        <ErrorNote error={error} what={`Could not upload the ${name.toLowerCase()}`} />
        <p className="sent" role="status">
          {done}
        </p>
      </div>
    </div>
  );
}
