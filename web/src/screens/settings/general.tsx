// Workspace (general): name and settings (PATCH /v1/workspace), the pictures (the logo and the
// brand image slots, PUT/DELETE /v1/workspace/images/{slot}), ownership transfer (POST
// /v1/workspace/transfer) and deleting the workspace (DELETE /v1/workspace, typing its name).
// Admins change it; others see it read-only. Help center and widget settings have their own sections.
import { useNavigate } from '@tanstack/react-router';
import { useId, useMemo, useState } from 'react';
import { useMembers } from '../../data/members';
import {
  useDeleteWorkspace,
  useLiveWorkspaceRecord,
  useRemoveWorkspaceImage,
  useTransferWorkspace,
  useUpdateWorkspace,
  useUploadWorkspaceImage,
  useWorkspaceRecord,
} from '../../data/workspace';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { isAdmin, useRole } from '../../lib/role';
import { reloadMe, useSession } from '../../lib/session';
import { CheckboxField, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { Done, pictureErrorText, useAction } from '../../ui/people';
import type { SectionProps } from './section';
import './people.css';

type Workspace = Schemas['Workspace'];
type Slot = 'logo' | 'help_center_logo' | 'help_center_favicon' | 'widget_avatar' | 'widget_launcher';

export default function General(_: SectionProps) {
  const ws = useWorkspace();
  const q = useWorkspaceRecord(ws);
  useLiveWorkspaceRecord(ws);
  const role = useRole();
  const admin = isAdmin(role);
  return (
    <div className="people">
      <PageTitle>Workspace</PageTitle>
      {!admin && role && <ReadOnlyNote what="change the workspace's settings" />}
      {q.isPending ? (
        <Loading />
      ) : q.error ? (
        <ErrorNote error={q.error} what="Could not load the workspace" />
      ) : (
        <>
          <SettingsForm key={q.data.id} w={q.data} admin={admin} />
          <Pictures w={q.data} admin={admin} />
          {role === 'owner' && <Transfer />}
          {role === 'owner' && <DeleteWorkspace w={q.data} />}
        </>
      )}
    </div>
  );
}

function timeZones(): string[] {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
}

function SettingsForm({ w, admin }: { w: Workspace; admin: boolean }) {
  const update = useUpdateWorkspace(useWorkspace());
  const [name, setName] = useState(w.name);
  const [settings, setSettings] = useState(w.settings);
  const zones = useMemo(() => {
    const all = timeZones();
    return all.includes(settings.timezone) ? all : [settings.timezone, ...all];
  }, [settings.timezone]);
  const action = useAction();
  const set = <K extends keyof Workspace['settings']>(k: K, v: Workspace['settings'][K]) =>
    setSettings((s) => ({ ...s, [k]: v }));
  return (
    <section className="card" aria-labelledby="ws-general">
      <h2 id="ws-general">General</h2>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            const next = await update.mutateAsync({
              name: name.trim(),
              settings: {
                timezone: settings.timezone,
                brand_color: settings.brand_color,
                csat_enabled: settings.csat_enabled,
                auto_close_days: settings.auto_close_days,
                label_creation: settings.label_creation,
                gravatar: settings.gravatar,
                domain_logos: settings.domain_logos,
              },
            });
            if (next.name !== w.name) await reloadMe();
            return 'Saved.';
          }, e)
        }
      >
        <fieldset disabled={!admin}>
          <TextField
            label="Workspace name"
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={fieldError(action.error, 'name')}
          />
          <SelectField
            label="Time zone"
            hint="Business hours and the days of reports follow it."
            value={settings.timezone}
            onChange={(e) => set('timezone', e.target.value)}
            options={zones.map((z) => [z, z.replaceAll('_', ' ')])}
            error={fieldError(action.error, 'timezone')}
          />
          <TextField
            label="Brand colour"
            type="color"
            hint="Used by the help center and the chat widget."
            value={settings.brand_color}
            onChange={(e) => set('brand_color', e.target.value)}
            error={fieldError(action.error, 'brand_color')}
          />
          <TextField
            label="Close solved tickets after (days)"
            type="number"
            min={0}
            max={365}
            hint="Solved tickets without customer activity close after this many days; 0 never closes them."
            value={String(settings.auto_close_days)}
            onChange={(e) => set('auto_close_days', Number(e.target.value))}
            error={fieldError(action.error, 'auto_close_days')}
          />
          <SelectField
            label="Who can create labels"
            value={settings.label_creation}
            onChange={(e) => set('label_creation', e.target.value as 'all' | 'admins')}
            options={[
              ['all', 'Every member'],
              ['admins', 'Owners and admins only'],
            ]}
          />
          <CheckboxField
            label="Ask customers to rate solved tickets (CSAT)"
            checked={settings.csat_enabled}
            onChange={(e) => set('csat_enabled', e.target.checked)}
          />
          <CheckboxField
            label="Use Gravatar pictures for contacts"
            hint="Looks up a contact's picture by their email address at gravatar.com."
            checked={settings.gravatar}
            onChange={(e) => set('gravatar', e.target.checked)}
          />
          <CheckboxField
            label="Use website logos for companies"
            hint="Fetches a company's logo from its domain."
            checked={settings.domain_logos}
            onChange={(e) => set('domain_logos', e.target.checked)}
          />
        </fieldset>
        <ErrorNote error={action.error} what="Could not save the workspace" />
        {admin && (
          <div className="row">
            <button type="submit" className="primary" disabled={action.busy}>
              Save
            </button>
            <Done text={action.done} />
          </div>
        )}
      </form>
    </section>
  );
}

const SLOTS: Array<[Slot, string, string]> = [
  ['logo', 'Workspace logo', 'Shown in the app and on messages.'],
  ['help_center_logo', 'Help center logo', 'At the top of the public help center.'],
  ['help_center_favicon', 'Help center icon', 'The browser tab icon of the help center.'],
  ['widget_avatar', 'Chat widget picture', 'Beside the widget’s greeting.'],
  ['widget_launcher', 'Chat widget button icon', 'On the round button that opens the chat.'],
];

function Pictures({ w, admin }: { w: Workspace; admin: boolean }) {
  return (
    <section className="card" aria-labelledby="ws-pictures">
      <h2 id="ws-pictures">Pictures</h2>
      <p className="hint">PNG, JPEG, GIF or WebP, up to 5 MB each.</p>
      <div className="slots">
        {SLOTS.map(([slot, label, hint]) => (
          <SlotEditor
            key={slot}
            slot={slot}
            label={label}
            hint={hint}
            url={slot === 'logo' ? w.avatar_url : w.images[slot]}
            admin={admin}
          />
        ))}
      </div>
    </section>
  );
}

function SlotEditor({
  slot,
  label,
  hint,
  url,
  admin,
}: {
  slot: Slot;
  label: string;
  hint: string;
  url: string | null;
  admin: boolean;
}) {
  const ws = useWorkspace();
  const upload = useUploadWorkspaceImage(ws);
  const remove = useRemoveWorkspaceImage(ws);
  const id = useId();
  const action = useAction();
  return (
    <div className="slot">
      <p className="field-label" id={`${id}-name`}>
        {label}
      </p>
      {url ? <img src={url} alt={`The ${label.toLowerCase()}`} /> : <p className="hint">None yet.</p>}
      {admin && (
        <>
          <label htmlFor={id} className="visually-hidden">
            Upload the {label.toLowerCase()}
          </label>
          <input
            id={id}
            type="file"
            accept="image/png,image/jpeg,image/gif,image/webp"
            aria-describedby={`${id}-hint`}
            disabled={action.busy}
            onChange={(e) => {
              const f = e.target.files?.[0];
              const input = e.target;
              if (f)
                void action
                  .run(async () => {
                    await upload.mutateAsync({ slot, file: f });
                    return 'Saved.';
                  })
                  .then(() => {
                    input.value = '';
                  });
            }}
          />
          {url && (
            <button
              type="button"
              disabled={action.busy}
              onClick={() =>
                void action.run(async () => {
                  await remove.mutateAsync(slot);
                  return 'Removed.';
                })
              }
            >
              Remove<span className="visually-hidden"> the {label.toLowerCase()}</span>
            </button>
          )}
        </>
      )}
      <p id={`${id}-hint`} className="hint">
        {hint}
      </p>
      {action.error ? (
        <p className="error" role="alert">
          {pictureErrorText(action.error)}
        </p>
      ) : null}
      <Done text={action.done} />
    </div>
  );
}

function Transfer() {
  const s = useSession();
  const members = useMembers(useWorkspace());
  const me = s.status === 'signed_in' ? s.user.id : '';
  const others = (members.data ?? []).filter((m) => m.user.id !== me && m.role !== 'viewer');
  const [to, setTo] = useState('');
  const [code, setCode] = useState('');
  const action = useAction();
  const transfer = useTransferWorkspace();
  const mfa = s.status === 'signed_in' && s.user.mfa_enabled;
  return (
    <section className="card" aria-labelledby="ws-transfer">
      <h2 id="ws-transfer">Transfer ownership</h2>
      <p className="hint">
        The new owner gets every right over the workspace, including deleting it; you become an admin. It needs your
        two-factor code{mfa ? '' : ': turn two-factor sign-in on in your profile first'}.
      </p>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await transfer.mutateAsync({ user_id: to, code: code.trim() });
            setCode('');
            await reloadMe();
            return 'Ownership transferred.';
          }, e)
        }
      >
        <fieldset disabled={!mfa}>
          <SelectField
            label="New owner"
            required
            value={to}
            onChange={(e) => setTo(e.target.value)}
            options={[['', 'Choose a member…'], ...others.map((m): [string, string] => [m.user.id, m.user.name])]}
          />
          <TextField
            label="Your two-factor code"
            autoComplete="one-time-code"
            required
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        </fieldset>
        <ErrorNote error={action.error} what="Could not transfer ownership" />
        <div className="row">
          <button type="submit" className="button danger" disabled={!mfa || !to || action.busy}>
            Transfer ownership
          </button>
          <Done text={action.done} />
        </div>
      </form>
    </section>
  );
}

function DeleteWorkspace({ w }: { w: Workspace }) {
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const action = useAction();
  const remove = useDeleteWorkspace();
  const s = useSession();
  const mfa = s.status === 'signed_in' && s.user.mfa_enabled;
  return (
    <section className="card danger-zone" aria-labelledby="ws-delete">
      <h2 id="ws-delete">Delete the workspace</h2>
      <p>
        This removes <strong>{w.name}</strong> and everything in it: tickets, contacts, articles, settings, the audit
        log. It cannot be undone.
      </p>
      <p className="hint">
        It needs two-factor sign-in on{mfa ? '' : ' (turn it on in your profile first)'} and a sign-in within the last
        10 minutes (sign out and in again if it was longer ago).
      </p>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await remove.mutateAsync(typed);
            await reloadMe();
            await navigate({ to: '/inbox', search: {} });
          }, e)
        }
      >
        <TextField
          label={`Type the workspace's name (${w.name}) to confirm`}
          autoComplete="off"
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
        />
        <ErrorNote error={action.error} what="Could not delete the workspace" />
        <button type="submit" className="button danger" disabled={typed !== w.name || action.busy}>
          Delete this workspace forever
        </button>
      </form>
    </section>
  );
}
