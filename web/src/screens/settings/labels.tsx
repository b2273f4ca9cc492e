// Labels and label groups (/v1/tags, /v1/tag-groups): the labels listed under their groups, in
// the API's order (group position, then position); create, rename, recolour, describe, move into
// a group, limit to kinds of records, archive, merge, reorder and delete. Groups: name, colour,
// exclusive (one label of the group per record). Everyone reads; admins change.
import { useState } from 'react';
import { keys } from '../../data/keys';
import {
  useConfigTagGroups,
  useConfigTags,
  useDeleteTag,
  useDeleteTagGroup,
  useMergeTag,
  useReorderTagGroups,
  useReorderTags,
  useSaveTag,
  useSaveTagGroup,
} from '../../data/tags';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { useIsAdmin } from '../../lib/role';
import { CheckboxField, ConfirmButton, DeleteButton, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { count } from '../../ui/words';
import { Chip, ColorField, check, FormDialog, type LabelColor, problem, Swatch, useLiveRefresh } from './config-kit';
import type { SectionProps } from './section';

type Tag = Schemas['Tag'];
type Group = Schemas['TagGroup'];
type Kind = Tag['applies_to'][number];
const KINDS: Array<[Kind, string]> = [
  ['tickets', 'Tickets'],
  ['contacts', 'Contacts'],
  ['companies', 'Companies'],
];
const NAME_RULE = /^[\p{L}\p{M}\p{N} \-_./:&+#]+$/u;

const plural = count;

export default function Labels(_: SectionProps) {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const tags = useConfigTags(ws);
  const groups = useConfigTagGroups(ws);
  useLiveRefresh(['tag.', 'tag_group.'], keys.config(ws));
  const reorderTags = useReorderTags(ws);
  const reorderGroups = useReorderTagGroups(ws);
  const deleteTag = useDeleteTag(ws);
  const deleteGroup = useDeleteTagGroup(ws);

  const [editTag, setEditTag] = useState<Tag | 'new' | null>(null);
  const [editGroup, setEditGroup] = useState<Group | 'new' | null>(null);
  const [merging, setMerging] = useState<Tag | null>(null);
  const [q, setQ] = useState('');
  const [moveError, setMoveError] = useState<unknown>(null);

  const allTags = tags.data?.data ?? [];
  const allGroups = groups.data?.data ?? [];
  const shown = q.trim() ? allTags.filter((t) => t.name.toLowerCase().includes(q.trim().toLowerCase())) : allTags;
  const sections: Array<{ group: Group | null; tags: Tag[] }> = [
    ...allGroups.map((g) => ({ group: g, tags: shown.filter((t) => t.group_id === g.id) })),
    { group: null, tags: shown.filter((t) => !t.group_id || !allGroups.some((g) => g.id === t.group_id)) },
  ];

  /** Moves a label one place up or down inside its group (the API takes every label's id in order). */
  const moveTag = async (tag: Tag, by: -1 | 1) => {
    const siblings = allTags.filter((t) => t.group_id === tag.group_id);
    const i = siblings.findIndex((t) => t.id === tag.id);
    const other = siblings[i + by];
    if (!other) return;
    const ids = allTags.map((t) => t.id);
    const a = ids.indexOf(tag.id);
    const b = ids.indexOf(other.id);
    [ids[a], ids[b]] = [ids[b]!, ids[a]!];
    setMoveError(null);
    try {
      await reorderTags.mutateAsync(ids);
    } catch (e) {
      setMoveError(e);
    }
  };
  const moveGroup = async (group: Group, by: -1 | 1) => {
    const ids = allGroups.map((g) => g.id);
    const a = ids.indexOf(group.id);
    const b = a + by;
    if (b < 0 || b >= ids.length) return;
    [ids[a], ids[b]] = [ids[b]!, ids[a]!];
    setMoveError(null);
    try {
      await reorderGroups.mutateAsync(ids);
    } catch (e) {
      setMoveError(e);
    }
  };

  return (
    <div className="config">
      <PageTitle
        actions={
          admin ? (
            <>
              <button type="button" className="button" onClick={() => setEditGroup('new')}>
                New label group
              </button>
              <button type="button" className="primary" onClick={() => setEditTag('new')}>
                New label
              </button>
            </>
          ) : undefined
        }
      >
        Labels
      </PageTitle>
      {!admin && <ReadOnlyNote>Only admins can change labels and label groups.</ReadOnlyNote>}
      <ErrorNote error={tags.error} what="Could not load the labels" />
      <ErrorNote error={groups.error} what="Could not load the label groups" />
      <ErrorNote error={moveError} what="Could not change the order" />
      {tags.isPending || groups.isPending ? (
        <Loading />
      ) : (
        <>
          <section className="config-section" aria-labelledby="label-groups">
            <h2 id="label-groups">Label groups</h2>
            <p className="hint">
              A group gathers related labels. In an exclusive group a ticket, contact or company carries at most one of
              them: adding one removes the others.
            </p>
            {allGroups.length === 0 ? (
              <p className="empty">No label groups yet.</p>
            ) : (
              <ul className="config-list">
                {allGroups.map((g, i) => (
                  <li key={g.id} className="config-row">
                    <Swatch color={g.color} />
                    <div className="grow">
                      <strong>{g.name}</strong>{' '}
                      {g.exclusive && <span className="badge">Exclusive: one per record</span>}
                      <p className="hint">{plural(g.tag_count, 'label')}</p>
                    </div>
                    {admin && (
                      <div className="actions">
                        <button
                          type="button"
                          className="button"
                          aria-label={`Move group ${g.name} up`}
                          disabled={i === 0}
                          onClick={() => void moveGroup(g, -1)}
                        >
                          ↑
                        </button>
                        <button
                          type="button"
                          className="button"
                          aria-label={`Move group ${g.name} down`}
                          disabled={i === allGroups.length - 1}
                          onClick={() => void moveGroup(g, 1)}
                        >
                          ↓
                        </button>
                        <button
                          type="button"
                          className="button"
                          aria-label={`Edit group ${g.name}`}
                          onClick={() => setEditGroup(g)}
                        >
                          Edit
                        </button>
                        <ConfirmButton
                          title={`Delete the group “${g.name}”?`}
                          description={`Its ${plural(g.tag_count, 'label')} stay, without a group; no record loses a label.`}
                          confirm="Delete group"
                          onConfirm={() => deleteGroup.mutateAsync(g.id)}
                        >
                          <span aria-hidden="true">Delete</span>
                          <span className="visually-hidden">Delete group {g.name}</span>
                        </ConfirmButton>
                      </div>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section className="config-section" aria-labelledby="labels-heading">
            <h2 id="labels-heading">Labels</h2>
            <div className="config-toolbar">
              <TextField label="Find a label" type="search" value={q} onChange={(e) => setQ(e.target.value)} />
            </div>
            {allTags.length === 0 && <p className="empty">No labels yet.</p>}
            {allTags.length > 0 && shown.length === 0 && <p className="empty">No label matches “{q.trim()}”.</p>}
            {sections.map(({ group, tags: list }) =>
              list.length === 0 ? null : (
                <div key={group?.id ?? 'none'}>
                  <h3>
                    {group ? (
                      <>
                        <Swatch color={group.color} />
                        {group.name}
                        {group.exclusive && <span className="badge">Exclusive</span>}
                      </>
                    ) : (
                      'Not in a group'
                    )}
                  </h3>
                  <ul className="config-list" aria-label={group ? `Labels in ${group.name}` : 'Labels not in a group'}>
                    {list.map((t, i) => (
                      <li key={t.id} className="config-row">
                        <div className="grow">
                          <Chip color={t.color}>{t.name}</Chip> {t.archived && <span className="badge">Archived</span>}
                          <p className="hint">
                            {t.description ? `${t.description} · ` : ''}
                            {usage(t)}
                            {t.applies_to.length < 3 ? ` · only on ${t.applies_to.join(' and ')}` : ''}
                          </p>
                        </div>
                        {admin && (
                          <div className="actions">
                            {!q && (
                              <>
                                <button
                                  type="button"
                                  className="button"
                                  aria-label={`Move ${t.name} up`}
                                  disabled={i === 0}
                                  onClick={() => void moveTag(t, -1)}
                                >
                                  ↑
                                </button>
                                <button
                                  type="button"
                                  className="button"
                                  aria-label={`Move ${t.name} down`}
                                  disabled={i === list.length - 1}
                                  onClick={() => void moveTag(t, 1)}
                                >
                                  ↓
                                </button>
                              </>
                            )}
                            <button
                              type="button"
                              className="button"
                              aria-label={`Edit ${t.name}`}
                              onClick={() => setEditTag(t)}
                            >
                              Edit
                            </button>
                            <button
                              type="button"
                              className="button"
                              aria-label={`Merge ${t.name} into another label`}
                              onClick={() => setMerging(t)}
                            >
                              Merge…
                            </button>
                            <DeleteButton
                              name={t.name}
                              title={`Delete the label “${t.name}”?`}
                              description={`It is removed from every record that carries it (${usage(t)}). Views filtering by it no longer match anything. This cannot be undone; to keep it on records but out of pickers, archive it instead.`}
                              confirm="Delete label"
                              onConfirm={() => deleteTag.mutateAsync(t.id)}
                            />
                          </div>
                        )}
                      </li>
                    ))}
                  </ul>
                </div>
              ),
            )}
          </section>
        </>
      )}
      {editTag !== null && (
        <TagDialog tag={editTag === 'new' ? null : editTag} groups={allGroups} onClose={() => setEditTag(null)} />
      )}
      {editGroup !== null && (
        <GroupDialog group={editGroup === 'new' ? null : editGroup} onClose={() => setEditGroup(null)} />
      )}
      {merging && <MergeDialog tag={merging} tags={allTags} onClose={() => setMerging(null)} />}
    </div>
  );
}

function usage(t: Tag): string {
  const u = t.usage;
  const parts = [
    plural(u.tickets, 'ticket'),
    u.contacts ? plural(u.contacts, 'contact') : '',
    u.companies ? plural(u.companies, 'company', 'companies') : '',
  ].filter(Boolean);
  return `on ${parts.join(', ')}`;
}

function nameProblem(name: string, what: string): string | undefined {
  const n = name.trim();
  if (!n) return `Give the ${what} a name.`;
  if (n.length > 50) return 'At most 50 characters.';
  return undefined;
}

function TagDialog({ tag, groups, onClose }: { tag: Tag | null; groups: Group[]; onClose(): void }) {
  const saveTag = useSaveTag(useWorkspace());
  const [name, setName] = useState(tag?.name ?? '');
  const [color, setColor] = useState<LabelColor | ''>(tag?.color ?? '');
  const [description, setDescription] = useState(tag?.description ?? '');
  const [groupId, setGroupId] = useState(tag?.group_id ?? '');
  const [appliesTo, setAppliesTo] = useState<Kind[]>(tag?.applies_to ?? ['tickets', 'contacts', 'companies']);
  const [archived, setArchived] = useState(tag?.archived ?? false);
  const error = useState<unknown>(null);
  const err = error[0];
  const save = async () => {
    check({
      name:
        nameProblem(name, 'label') ??
        (NAME_RULE.test(name.trim()) ? undefined : 'Use letters, digits, spaces and - _ . / : & + # only.'),
      applies_to: appliesTo.length ? undefined : 'Choose at least one kind of record.',
    });
    const body = {
      name: name.trim(),
      ...(color ? { color } : {}),
      description,
      group_id: groupId || null,
      applies_to: appliesTo,
    };
    await saveTag.mutateAsync(tag ? { id: tag.id, body: { ...body, archived } } : { id: null, body });
  };
  const appliesProblem = problem(err, 'applies_to');
  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={tag ? `Edit the label “${tag.name}”` : 'New label'}
      submit={tag ? 'Save label' : 'Create label'}
      onSubmit={save}
      fields={['name', 'color', 'description', 'group_id', 'applies_to']}
      error={error}
      conflict
    >
      <TextField
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={problem(err, 'name', true)}
        hint={tag ? 'Renaming also renames it in the automations and views that use it.' : undefined}
        autoComplete="off"
      />
      <ColorField label="Colour" value={color} onChange={setColor} none={tag ? undefined : 'Pick one from the name'} />
      <TextField
        label="Description"
        value={description}
        maxLength={300}
        onChange={(e) => setDescription(e.target.value)}
        error={problem(err, 'description')}
      />
      <SelectField
        label="Group"
        value={groupId}
        onChange={(e) => setGroupId(e.target.value)}
        options={[
          ['', 'No group'],
          ...groups.map((g): [string, string] => [g.id, g.exclusive ? `${g.name} (exclusive)` : g.name]),
        ]}
        error={problem(err, 'group_id')}
      />
      <fieldset aria-describedby={appliesProblem ? 'applies-error' : undefined}>
        <legend>Can be put on</legend>
        <div className="checks">
          {KINDS.map(([k, text]) => (
            <label key={k}>
              <input
                type="checkbox"
                checked={appliesTo.includes(k)}
                aria-invalid={appliesProblem ? true : undefined}
                onChange={(e) => setAppliesTo((a) => (e.target.checked ? [...a, k] : a.filter((x) => x !== k)))}
              />
              {text}
            </label>
          ))}
        </div>
        {appliesProblem && (
          <p id="applies-error" className="field-error">
            {appliesProblem}
          </p>
        )}
      </fieldset>
      {tag && (
        <CheckboxField
          label="Archived"
          hint="Archived labels stay on the records that carry them but are hidden from pickers."
          checked={archived}
          onChange={(e) => setArchived(e.target.checked)}
        />
      )}
    </FormDialog>
  );
}

function GroupDialog({ group, onClose }: { group: Group | null; onClose(): void }) {
  const saveGroup = useSaveTagGroup(useWorkspace());
  const [name, setName] = useState(group?.name ?? '');
  const [color, setColor] = useState<LabelColor | ''>(group?.color ?? '');
  const [exclusive, setExclusive] = useState(group?.exclusive ?? false);
  const error = useState<unknown>(null);
  const err = error[0];
  const save = async () => {
    check({ name: nameProblem(name, 'group') });
    const body = { name: name.trim(), color: color || null, exclusive };
    await saveGroup.mutateAsync({ id: group?.id ?? null, body });
  };
  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={group ? `Edit the group “${group.name}”` : 'New label group'}
      description="Move labels into the group from each label's Edit."
      submit={group ? 'Save group' : 'Create group'}
      onSubmit={save}
      fields={['name', 'color', 'exclusive']}
      error={error}
      conflict
    >
      <TextField
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={problem(err, 'name', true)}
        autoComplete="off"
      />
      <ColorField label="Colour" value={color} onChange={setColor} none="No colour" />
      <CheckboxField
        label="Exclusive"
        hint={
          group && !group.exclusive
            ? 'At most one label of the group per ticket, contact or company. Records that carry several now keep them until their labels change.'
            : 'At most one label of the group per ticket, contact or company: adding one removes the other.'
        }
        checked={exclusive}
        onChange={(e) => setExclusive(e.target.checked)}
      />
    </FormDialog>
  );
}

function MergeDialog({ tag, tags, onClose }: { tag: Tag; tags: Tag[]; onClose(): void }) {
  const merge = useMergeTag(useWorkspace());
  const others = tags.filter((t) => t.id !== tag.id);
  const [into, setInto] = useState('');
  const error = useState<unknown>(null);
  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={`Merge “${tag.name}” into another label`}
      description={`Every record carrying “${tag.name}” (${usage(tag)}) gets the label you choose instead, automations and views are rewritten, and “${tag.name}” is deleted. This cannot be undone.`}
      submit="Merge"
      onSubmit={async () => {
        check({ into: into ? undefined : 'Choose the label that remains.' });
        await merge.mutateAsync({ id: tag.id, into });
      }}
      fields={['into']}
      error={error}
    >
      <SelectField
        label="Merge into"
        value={into}
        onChange={(e) => setInto(e.target.value)}
        options={[['', 'Choose a label…'], ...others.map((t): [string, string] => [t.id, t.name])]}
        error={problem(error[0], 'into')}
      />
    </FormDialog>
  );
}
