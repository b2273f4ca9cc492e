// Custom fields (/v1/custom-fields): one tab per kind of record (tickets, contacts, companies),
// the fields in their order; create any of the API's types (choices with colours for dropdowns,
// required on solve for tickets), rename, describe, edit choices, reorder, archive, delete.
import * as Tabs from '@radix-ui/react-tabs';
import { useState } from 'react';
import {
  useConfigFields,
  useCreateField,
  useDeleteField,
  useReorderFields,
  useUpdateField,
} from '../../data/custom-fields';
import { keys } from '../../data/keys';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { useIsAdmin } from '../../lib/role';
import { CheckboxField, DeleteButton, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { Chip, check, FormDialog, LABEL_COLORS, type LabelColor, problem, useLiveRefresh } from './config-kit';
import type { SectionProps } from './section';

type Field = Schemas['CustomField'];
type Entity = Field['entity'];
type FieldType = Field['type'];

const ENTITIES: Array<[Entity, string]> = [
  ['ticket', 'Tickets'],
  ['contact', 'Contacts'],
  ['company', 'Companies'],
];

const TYPE_LABEL: Record<FieldType, string> = {
  text: 'Text (one line)',
  long_text: 'Long text',
  number: 'Number',
  select: 'Dropdown (one choice)',
  multi_select: 'Multiple choice',
  date: 'Date',
  checkbox: 'Checkbox',
  url: 'Link (URL)',
  email: 'Email address',
  user: 'Team member',
};
const TYPES = Object.keys(TYPE_LABEL) as FieldType[];
const hasOptions = (t: FieldType) => t === 'select' || t === 'multi_select';
const KEY_RULE = /^[a-z][a-z0-9_]{0,39}$/;

export default function Fields({ path }: SectionProps) {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const fields = useConfigFields(ws);
  useLiveRefresh(['custom_field.'], keys.configFields(ws));
  const reorder = useReorderFields(ws);
  const remove = useDeleteField(ws);
  const first = ENTITIES.find(([e]) => e === path[0])?.[0] ?? 'ticket';
  const [entity, setEntity] = useState<Entity>(first);
  const [editing, setEditing] = useState<Field | 'new' | null>(null);
  const [moveError, setMoveError] = useState<unknown>(null);
  const all = fields.data?.data ?? [];

  const move = async (list: Field[], f: Field, by: -1 | 1) => {
    const ids = list.map((x) => x.id);
    const a = ids.indexOf(f.id);
    const b = a + by;
    if (b < 0 || b >= ids.length) return;
    [ids[a], ids[b]] = [ids[b]!, ids[a]!];
    setMoveError(null);
    try {
      await reorder.mutateAsync({ entity: f.entity, ids });
    } catch (e) {
      setMoveError(e);
    }
  };

  return (
    <div className="config">
      <PageTitle
        actions={
          admin ? (
            <button type="button" className="primary" onClick={() => setEditing('new')}>
              New field
            </button>
          ) : undefined
        }
      >
        Custom fields
      </PageTitle>
      {!admin && <ReadOnlyNote>Only admins can change custom fields.</ReadOnlyNote>}
      <ErrorNote error={fields.error} what="Could not load the custom fields" />
      <ErrorNote error={moveError} what="Could not change the order" />
      <Tabs.Root value={entity} onValueChange={(v) => setEntity(v as Entity)}>
        <Tabs.List className="tabs" aria-label="Fields of">
          {ENTITIES.map(([e, text]) => (
            <Tabs.Trigger key={e} value={e} className="tab">
              {text}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {ENTITIES.map(([e, text]) => {
          const list = all.filter((f) => f.entity === e);
          return (
            <Tabs.Content key={e} value={e} className="config-section">
              {fields.isPending ? (
                <Loading />
              ) : list.length === 0 ? (
                <p className="empty">No custom fields on {text.toLowerCase()} yet.</p>
              ) : (
                <ul className="config-list" aria-label={`Fields of ${text.toLowerCase()}`}>
                  {list.map((f, i) => (
                    <li key={f.id} className="config-row">
                      <div className="grow">
                        <strong>{f.name}</strong> <span className="badge">{TYPE_LABEL[f.type]}</span>{' '}
                        {f.required_on_solve && <span className="badge">Required to solve</span>}{' '}
                        {f.archived && <span className="badge">Archived</span>}
                        <p className="hint">
                          Key <code>{f.key}</code>
                          {f.description ? ` · ${f.description}` : ''}
                        </p>
                        {hasOptions(f.type) && f.options.length > 0 && (
                          <ul className="labels" aria-label={`Choices of ${f.name}`}>
                            {f.options.map((o) => (
                              <li key={o.id}>
                                <Chip color={o.color}>{o.label}</Chip>
                              </li>
                            ))}
                          </ul>
                        )}
                      </div>
                      {admin && (
                        <div className="actions">
                          <button
                            type="button"
                            className="button"
                            aria-label={`Move ${f.name} up`}
                            disabled={i === 0}
                            onClick={() => void move(list, f, -1)}
                          >
                            ↑
                          </button>
                          <button
                            type="button"
                            className="button"
                            aria-label={`Move ${f.name} down`}
                            disabled={i === list.length - 1}
                            onClick={() => void move(list, f, 1)}
                          >
                            ↓
                          </button>
                          <button
                            type="button"
                            className="button"
                            aria-label={`Edit ${f.name}`}
                            onClick={() => setEditing(f)}
                          >
                            Edit
                          </button>
                          <DeleteButton
                            name={f.name}
                            title={`Delete the field “${f.name}”?`}
                            description={`Its values are removed from every ${f.entity} that has one. This cannot be undone; to keep the values but stop changes, archive the field instead (Edit).`}
                            confirm="Delete field"
                            onConfirm={() => remove.mutateAsync(f.id)}
                          />
                        </div>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </Tabs.Content>
          );
        })}
      </Tabs.Root>
      {editing !== null && (
        <FieldDialog field={editing === 'new' ? null : editing} entity={entity} onClose={() => setEditing(null)} />
      )}
    </div>
  );
}

interface OptionDraft {
  id?: string;
  label: string;
  color: LabelColor;
  /** A stable key for React while the id is not known yet. */
  row: number;
}
let rows = 0;

function FieldDialog({ field, entity, onClose }: { field: Field | null; entity: Entity; onClose(): void }) {
  const ws = useWorkspace();
  const create = useCreateField(ws);
  const update = useUpdateField(ws);
  const [forEntity, setForEntity] = useState<Entity>(field?.entity ?? entity);
  const [type, setType] = useState<FieldType>(field?.type ?? 'text');
  const [name, setName] = useState(field?.name ?? '');
  const [key, setKey] = useState('');
  const [description, setDescription] = useState(field?.description ?? '');
  const [required, setRequired] = useState(field?.required_on_solve ?? false);
  const [archived, setArchived] = useState(field?.archived ?? false);
  const [options, setOptions] = useState<OptionDraft[]>(() =>
    field ? field.options.map((o) => ({ ...o, row: rows++ })) : [],
  );
  const error = useState<unknown>(null);
  const err = error[0];
  const removed = field ? field.options.filter((o) => !options.some((d) => d.id === o.id)) : [];

  const save = async () => {
    const n = name.trim();
    check({
      name: !n
        ? 'Give the field a name.'
        : n.length > 60
          ? 'At most 60 characters.'
          : /[<>]/.test(n)
            ? 'No < or > in the name.'
            : undefined,
      key:
        key && !KEY_RULE.test(key) ? 'Lower-case letters, digits and _, starting with a letter (up to 40).' : undefined,
      options:
        hasOptions(type) && options.length === 0
          ? 'Add at least one choice.'
          : options.some((o) => !o.label.trim())
            ? 'Every choice needs a label.'
            : undefined,
    });
    const opts = hasOptions(type)
      ? options.map((o) => ({ ...(o.id ? { id: o.id } : {}), label: o.label.trim(), color: o.color }))
      : undefined;
    if (field) {
      await update.mutateAsync({
        id: field.id,
        body: {
          name: n,
          description,
          archived,
          ...(opts ? { options: opts } : {}),
          ...(field.entity === 'ticket' ? { required_on_solve: required } : {}),
        },
      });
    } else {
      await create.mutateAsync({
        entity: forEntity,
        type,
        name: n,
        ...(key ? { key } : {}),
        description,
        ...(opts ? { options: opts } : {}),
        ...(forEntity === 'ticket' ? { required_on_solve: required } : {}),
      });
    }
  };
  const optionsProblem = problem(err, 'options');

  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={field ? `Edit the field “${field.name}”` : 'New custom field'}
      submit={field ? 'Save field' : 'Create field'}
      onSubmit={save}
      fields={['name', 'key', 'options', 'description', 'type', 'entity']}
      error={error}
      conflict={!field}
      wide
    >
      {field ? (
        <p className="hint">
          {TYPE_LABEL[field.type]} on {field.entity === 'company' ? 'companies' : `${field.entity}s`}, key{' '}
          <code>{field.key}</code> (the kind, type and key cannot change).
        </p>
      ) : (
        <div className="inline-fields">
          <SelectField
            label="On"
            value={forEntity}
            onChange={(e) => setForEntity(e.target.value as Entity)}
            options={ENTITIES}
            error={problem(err, 'entity')}
          />
          <SelectField
            label="Type"
            value={type}
            onChange={(e) => setType(e.target.value as FieldType)}
            options={TYPES.map((t): [string, string] => [t, TYPE_LABEL[t]])}
            error={problem(err, 'type')}
          />
        </div>
      )}
      <TextField
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={problem(err, 'name')}
        autoComplete="off"
      />
      {!field && (
        <TextField
          label="Key"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder={slug(name)}
          hint="How the API and filters name it (field.<key>). Empty: made from the name. It cannot change later."
          error={problem(err, 'key', true)}
          autoComplete="off"
        />
      )}
      <TextField
        label="Description"
        value={description}
        maxLength={300}
        onChange={(e) => setDescription(e.target.value)}
        error={problem(err, 'description')}
      />
      {hasOptions(type) && (
        <fieldset aria-describedby={optionsProblem ? 'options-error' : undefined}>
          <legend>Choices</legend>
          {options.map((o, i) => (
            <div key={o.row} className="inline-fields">
              <TextField
                label={`Choice ${i + 1}`}
                value={o.label}
                maxLength={100}
                aria-invalid={optionsProblem && !o.label.trim() ? true : undefined}
                onChange={(e) =>
                  setOptions((l) => l.map((x) => (x.row === o.row ? { ...x, label: e.target.value } : x)))
                }
              />
              <SelectField
                label={`Colour of choice ${i + 1}`}
                value={o.color}
                onChange={(e) =>
                  setOptions((l) => l.map((x) => (x.row === o.row ? { ...x, color: e.target.value as LabelColor } : x)))
                }
                options={LABEL_COLORS.map((c): [string, string] => [c, c.charAt(0).toUpperCase() + c.slice(1)])}
              />
              <button
                type="button"
                className="button"
                aria-label={`Remove choice ${i + 1}${o.label ? ` (${o.label})` : ''}`}
                onClick={() => setOptions((l) => l.filter((x) => x.row !== o.row))}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            className="button"
            onClick={() => setOptions((l) => [...l, { label: '', color: 'gray', row: rows++ }])}
          >
            Add a choice
          </button>
          {removed.length > 0 && (
            <p className="hint">
              Saving clears {removed.map((o) => `“${o.label}”`).join(', ')} from every record that has it.
            </p>
          )}
          {optionsProblem && (
            <p id="options-error" className="field-error">
              {optionsProblem}
            </p>
          )}
        </fieldset>
      )}
      {(field?.entity ?? forEntity) === 'ticket' && (
        <CheckboxField
          label="Required to solve"
          hint="A ticket cannot be solved until this field has a value."
          checked={required}
          onChange={(e) => setRequired(e.target.checked)}
        />
      )}
      {field && (
        <CheckboxField
          label="Archived"
          hint="Archived fields keep their values but refuse changes, and are hidden from forms."
          checked={archived}
          onChange={(e) => setArchived(e.target.checked)}
        />
      )}
    </FormDialog>
  );
}

/** What the API makes the key from a name (shown as the key field's placeholder). */
function slug(name: string): string {
  const s = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(s) ? s.slice(0, 40) : '';
}
