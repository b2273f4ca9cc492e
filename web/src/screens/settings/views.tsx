// Saved views (/v1/views): the caller's personal views and the workspace's shared ones, with
// their ticket counts; a filter builder for everything a view's filters hold (status, priority,
// assignee, team, mailbox, label, channel, text, custom field conditions). Anyone manages their
// personal views; shared ones need an admin. The sidebar shares this list's cache, so a view
// made here is there at once.
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useConfigFields } from '../../data/custom-fields';
import { keys } from '../../data/keys';
import { useConfigMailboxes } from '../../data/mailboxes';
import { useConfigMembers } from '../../data/members';
import { useConfigTags } from '../../data/tags';
import { useConfigTeams } from '../../data/teams';
import { useTicketCounts } from '../../data/tickets';
import { useDeleteView, useSaveView, useViews } from '../../data/views';
import type { View } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { STATUS_LABEL } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { CheckboxField, DeleteButton, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { count } from '../../ui/words';
import { check, FormDialog, problem, useLiveRefresh } from './config-kit';
import type { SectionProps } from './section';
import { FieldConditions, type FieldFilter, fieldsSummary } from './views-filters';

type Filters = View['filters'];
type Status = NonNullable<Filters['status']>[number];
type Priority = NonNullable<Filters['priority']>[number];
type Channel = NonNullable<Filters['channel']>;

const STATUSES = Object.keys(STATUS_LABEL) as Status[];
const PRIORITIES: Array<[Priority, string]> = [
  ['low', 'Low'],
  ['normal', 'Normal'],
  ['high', 'High'],
  ['urgent', 'Urgent'],
];
const CHANNELS: Array<[Channel, string]> = [
  ['email', 'Email'],
  ['chat', 'Chat'],
  ['api', 'API'],
  ['portal', 'Help center form'],
];

/** The lists a filter picks from: members, teams, mailboxes (admins only), labels, ticket fields. */
export function usePickLists(admin: boolean) {
  const ws = useWorkspace();
  const members = useConfigMembers(ws);
  const teams = useConfigTeams(ws);
  const mailboxes = useConfigMailboxes(ws, admin);
  const tags = useConfigTags(ws);
  const fields = useConfigFields(ws);
  return {
    members: members.data?.data ?? [],
    teams: teams.data?.data ?? [],
    mailboxes: mailboxes.data?.data ?? [],
    tags: tags.data?.data ?? [],
    fields: (fields.data?.data ?? []).filter((f) => f.entity === 'ticket'),
  };
}
type PickLists = ReturnType<typeof usePickLists>;

export default function Views(_: SectionProps) {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const views = useViews(ws);
  const counts = useTicketCounts(ws);
  const remove = useDeleteView(ws);
  const lists = usePickLists(admin);
  useLiveRefresh(['tag.', 'custom_field.'], keys.config(ws));
  const [editing, setEditing] = useState<View | 'new' | null>(null);
  const all = views.data?.data ?? [];
  const mine = all.filter((v) => !v.shared);
  const shared = all.filter((v) => v.shared);

  const list = (items: View[], label: string, empty: string) =>
    items.length === 0 ? (
      <p className="empty">{empty}</p>
    ) : (
      <ul className="config-list" aria-label={label}>
        {items.map((v) => {
          const mayChange = !v.shared || admin;
          const n = counts.data?.views[v.id];
          return (
            <li key={v.id} className="config-row">
              <div className="grow">
                <Link to="/inbox" search={{ view: `view:${v.id}` }}>
                  <strong>{v.name}</strong>
                </Link>{' '}
                {n !== undefined && <span className="badge">{count(n, 'ticket')}</span>}
                <p className="hint">{summary(v.filters, lists)}</p>
              </div>
              {mayChange && (
                <div className="actions">
                  <button type="button" className="button" aria-label={`Edit ${v.name}`} onClick={() => setEditing(v)}>
                    Edit
                  </button>
                  <DeleteButton
                    name={v.name}
                    title={`Delete the view “${v.name}”?`}
                    description={
                      v.shared
                        ? 'It disappears from everyone’s sidebar. The tickets stay as they are.'
                        : 'It disappears from your sidebar. The tickets stay as they are.'
                    }
                    confirm="Delete view"
                    onConfirm={() => remove.mutateAsync(v.id)}
                  />
                </div>
              )}
            </li>
          );
        })}
      </ul>
    );

  return (
    <div className="config">
      <PageTitle
        actions={
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            New view
          </button>
        }
      >
        Views
      </PageTitle>
      <p className="hint">
        A view is a saved ticket list in the sidebar. Your personal views are yours alone;
        {admin
          ? ' shared views are in everyone’s sidebar.'
          : ' shared views are in everyone’s sidebar, and only admins change them.'}
      </p>
      <ErrorNote error={views.error} what="Could not load the views" />
      {views.isPending ? (
        <Loading />
      ) : (
        <>
          <section className="config-section" aria-labelledby="views-mine">
            <h2 id="views-mine">Your personal views</h2>
            {list(mine, 'Your personal views', 'No personal views yet.')}
          </section>
          <section className="config-section" aria-labelledby="views-shared">
            <h2 id="views-shared">Shared views</h2>
            {list(shared, 'Shared views', 'No shared views yet.')}
          </section>
        </>
      )}
      {editing !== null && (
        <ViewDialog
          view={editing === 'new' ? null : editing}
          admin={admin}
          lists={lists}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}

/** The filters in a line: "Open, Pending · High · assigned to me · label Billing". */
function summary(f: Filters, lists: PickLists): string {
  const parts: string[] = [];
  if (f.status) parts.push(f.status.map((s) => STATUS_LABEL[s]).join(', '));
  if (f.priority) parts.push(`priority ${f.priority.join(', ')}`);
  if (f.assignee === 'me') parts.push('assigned to whoever looks');
  else if (f.assignee === 'none') parts.push('unassigned');
  else if (f.assignee)
    parts.push(`assigned to ${lists.members.find((m) => m.user.id === f.assignee)?.user.name ?? 'a member'}`);
  if (f.team_id) parts.push(`team ${lists.teams.find((t) => t.id === f.team_id)?.name ?? '(a team)'}`);
  if (f.mailbox_id) parts.push(`mailbox ${lists.mailboxes.find((m) => m.id === f.mailbox_id)?.name ?? '(a mailbox)'}`);
  if (f.tag) parts.push(`label ${f.tag}`);
  if (f.channel) parts.push(`channel ${f.channel}`);
  if (f.q) parts.push(`containing “${f.q}”`);
  if (f.fields?.length) parts.push(fieldsSummary(f.fields, lists.fields));
  return parts.join(' · ') || 'Every ticket';
}

function ViewDialog({
  view,
  admin,
  lists,
  onClose,
}: {
  view: View | null;
  admin: boolean;
  lists: PickLists;
  onClose(): void;
}) {
  const saveView = useSaveView(useWorkspace());
  const f0 = view?.filters ?? {};
  const [name, setName] = useState(view?.name ?? '');
  const [shared, setShared] = useState(view?.shared ?? false);
  const [status, setStatus] = useState<Status[]>(f0.status ?? []);
  const [priority, setPriority] = useState<Priority[]>(f0.priority ?? []);
  const [assignee, setAssignee] = useState(f0.assignee ?? '');
  const [team, setTeam] = useState(f0.team_id ?? '');
  const [mailbox, setMailbox] = useState(f0.mailbox_id ?? '');
  const [tag, setTag] = useState(f0.tag ?? '');
  const [channel, setChannel] = useState<Channel | ''>(f0.channel ?? '');
  const [q, setQ] = useState(f0.q ?? '');
  const [conditions, setConditions] = useState<FieldFilter[]>(f0.fields ?? []);
  const error = useState<unknown>(null);
  const err = error[0];

  const save = async () => {
    const n = name.trim();
    check({
      name: !n ? 'Give the view a name.' : n.length > 100 ? 'At most 100 characters.' : undefined,
      fields: conditions.some((c) => !c.key)
        ? 'Choose a field for every condition, or remove it.'
        : conditions.some(
              (c) =>
                c.op !== 'set' &&
                c.op !== 'not_set' &&
                (c.value === undefined || c.value === '' || (Array.isArray(c.value) && c.value.length === 0)),
            )
          ? 'Give every condition a value (or choose “has a value” / “is empty”).'
          : undefined,
    });
    const filters: Filters = {
      ...(status.length ? { status } : {}),
      ...(priority.length ? { priority } : {}),
      ...(assignee ? { assignee } : {}),
      ...(team ? { team_id: team } : {}),
      ...(mailbox ? { mailbox_id: mailbox } : {}),
      ...(tag ? { tag } : {}),
      ...(channel ? { channel } : {}),
      ...(q.trim() ? { q: q.trim() } : {}),
      ...(conditions.length ? { fields: conditions } : {}),
    };
    const body = { name: n, shared, filters };
    await saveView.mutateAsync({ id: view?.id ?? null, body });
  };

  const toggle = <T,>(list: T[], v: T, on: boolean) => (on ? [...list, v] : list.filter((x) => x !== v));
  const activeTags = lists.tags.filter((t) => !t.archived || t.name === tag);
  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={view ? `Edit the view “${view.name}”` : 'New view'}
      description="Tickets that match every filter you set are in the view; a filter left empty matches all."
      submit={view ? 'Save view' : 'Create view'}
      onSubmit={save}
      fields={[
        'name',
        'shared',
        'status',
        'priority',
        'assignee',
        'team_id',
        'mailbox_id',
        'tag',
        'channel',
        'q',
        'fields',
      ]}
      error={error}
      wide
    >
      <TextField
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={problem(err, 'name')}
        autoComplete="off"
      />
      {admin ? (
        <CheckboxField
          label="Shared with everyone"
          hint="Shared views are in every member’s sidebar; otherwise only in yours."
          checked={shared}
          onChange={(e) => setShared(e.target.checked)}
        />
      ) : (
        <p className="hint">
          {view?.shared ? 'A shared view.' : 'A personal view: only you see it. Only admins make shared views.'}
        </p>
      )}
      <fieldset>
        <legend>Status</legend>
        <div className="checks">
          {STATUSES.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                checked={status.includes(s)}
                onChange={(e) => setStatus((l) => toggle(l, s, e.target.checked))}
              />
              {STATUS_LABEL[s]}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>Priority</legend>
        <div className="checks">
          {PRIORITIES.map(([p, text]) => (
            <label key={p}>
              <input
                type="checkbox"
                checked={priority.includes(p)}
                onChange={(e) => setPriority((l) => toggle(l, p, e.target.checked))}
              />
              {text}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="inline-fields">
        <SelectField
          label="Assignee"
          value={assignee}
          onChange={(e) => setAssignee(e.target.value)}
          options={[
            ['', 'Anyone or no one'],
            ['me', 'Whoever looks at the view'],
            ['none', 'Unassigned'],
            ...lists.members.map((m): [string, string] => [m.user.id, m.user.name]),
          ]}
          error={problem(err, 'assignee')}
        />
        <SelectField
          label="Team"
          value={team}
          onChange={(e) => setTeam(e.target.value)}
          options={[['', 'Any team'], ...lists.teams.map((t): [string, string] => [t.id, t.name])]}
          error={problem(err, 'team_id')}
        />
      </div>
      <div className="inline-fields">
        <SelectField
          label="Label"
          value={tag}
          onChange={(e) => setTag(e.target.value)}
          options={[
            ['', 'Any labels'],
            ...activeTags.map((t): [string, string] => [t.name, t.name]),
            ...(tag && !activeTags.some((t) => t.name === tag) ? [[tag, tag] as [string, string]] : []),
          ]}
          error={problem(err, 'tag')}
        />
        <SelectField
          label="Channel"
          value={channel}
          onChange={(e) => setChannel(e.target.value as Channel | '')}
          options={[['', 'Any channel'], ...CHANNELS]}
          error={problem(err, 'channel')}
        />
      </div>
      <div className="inline-fields">
        {admin || mailbox ? (
          <SelectField
            label="Mailbox"
            value={mailbox}
            onChange={(e) => setMailbox(e.target.value)}
            disabled={!admin}
            hint={admin ? undefined : 'Only admins see the list of mailboxes.'}
            options={[
              ['', 'Any mailbox'],
              ...lists.mailboxes.map((m): [string, string] => [m.id, `${m.name} (${m.email})`]),
              ...(mailbox && !lists.mailboxes.some((m) => m.id === mailbox)
                ? [[mailbox, 'A mailbox'] as [string, string]]
                : []),
            ]}
            error={problem(err, 'mailbox_id')}
          />
        ) : null}
        <TextField
          label="Containing the text"
          type="search"
          value={q}
          maxLength={200}
          onChange={(e) => setQ(e.target.value)}
          error={problem(err, 'q')}
        />
      </div>
      <FieldConditions
        value={conditions}
        onChange={setConditions}
        fields={lists.fields}
        members={lists.members.map((m) => ({ id: m.user.id, name: m.user.name }))}
        error={problem(err, 'fields')}
      />
    </FormDialog>
  );
}
