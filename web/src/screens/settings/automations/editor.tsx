// The builder at /settings/automations/new and /settings/automations/<id>: a trigger, conditions
// that must all hold, actions applied in order. The API's 422 names the entry it refuses
// (body.conditions.2.value): the message is shown on that entry.
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { useAutomation, useSaveAutomation } from '../../../data/automations';
import { ApiError } from '../../../lib/api';
import { useWorkspace } from '../../../lib/context';
import { useIsAdmin } from '../../../lib/role';
import { fieldError, SelectField, TextField } from '../../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../../ui/page';
import { ActionRow } from './actions';
import { type Action, type Condition, FieldNote, TRIGGERS, type Trigger, useChoices } from './choices';
import { ConditionRow } from './conditions';

interface Draft {
  name: string;
  trigger: Trigger;
  enabled: boolean;
  conditions: Condition[];
  actions: Action[];
}

const emptyDraft: Draft = {
  name: '',
  trigger: 'ticket_created',
  enabled: true,
  conditions: [],
  actions: [{ type: 'add_tag', value: '' }],
};

/** HTML of a reply or note as the plain text the builder edits (parsed, never shown as HTML). */
function htmlToText(html: string): string {
  if (!/[<&]/.test(html)) return html;
  const doc = new DOMParser().parseFromString(html.replace(/<\/p>\s*<p>/g, '</p>\n<p>'), 'text/html');
  return doc.body.textContent ?? '';
}
const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const textToHtml = (text: string) =>
  text
    .split(/\n{1,}/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => `<p>${escapeHtml(l)}</p>`)
    .join('');

export function AutomationEditor({ id }: { id: string | null }) {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const existing = useAutomation(ws, id, admin);
  if (!admin) {
    return (
      <div className="integrations">
        <PageTitle>Automation</PageTitle>
        <ReadOnlyNote what="see and change automations" />
      </div>
    );
  }
  if (id && existing.isPending) return <Loading />;
  if (id && existing.error) return <ErrorNote error={existing.error} what="Could not load the automation" />;
  const a = existing.data;
  const draft: Draft = a
    ? {
        name: a.name,
        trigger: a.trigger,
        enabled: a.enabled,
        conditions: a.conditions,
        actions: a.actions.map((x) =>
          x.type === 'send_reply' || x.type === 'add_note' ? { ...x, value: htmlToText(x.value ?? '') } : x,
        ),
      }
    : emptyDraft;
  return <Builder id={id} initial={draft} />;
}

function Builder({ id, initial }: { id: string | null; initial: Draft }) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const saveAutomation = useSaveAutomation(ws, id);
  const choices = useChoices();
  const [d, setD] = useState<Draft>(initial);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (p: Partial<Draft>) => setD((x) => ({ ...x, ...p }));
  const setCondition = (i: number, c: Condition) =>
    setD((x) => ({ ...x, conditions: x.conditions.map((y, j) => (j === i ? c : y)) }));
  const setAction = (i: number, a: Action) =>
    setD((x) => ({ ...x, actions: x.actions.map((y, j) => (j === i ? a : y)) }));

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: d.name,
      trigger: d.trigger,
      enabled: d.enabled,
      conditions: d.conditions,
      actions: d.actions.map((a) => {
        const value = a.type === 'send_reply' || a.type === 'add_note' ? textToHtml(a.value ?? '') : a.value;
        return { type: a.type, ...(value !== undefined ? { value } : {}), ...(a.field ? { field: a.field } : {}) };
      }),
    };
    try {
      await saveAutomation.mutateAsync(body);
      await navigate({ to: '/settings/$', params: { _splat: 'automations' } });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="integrations builder" onSubmit={save} noValidate>
      <PageTitle>{id ? `Automation: ${initial.name}` : 'New automation'}</PageTitle>
      <p>
        <Link to="/settings/$" params={{ _splat: 'automations' }}>
          ← All automations
        </Link>
      </p>
      <TextField
        label="Name"
        value={d.name}
        onChange={(e) => set({ name: e.target.value })}
        error={fieldError(error, 'name')}
        required
        maxLength={200}
      />
      <fieldset className="builder-part">
        <legend>When</legend>
        <SelectField
          label="Trigger"
          value={d.trigger}
          onChange={(e) => set({ trigger: e.target.value as Trigger })}
          options={TRIGGERS}
          error={fieldError(error, 'trigger')}
        />
      </fieldset>
      <fieldset className="builder-part">
        <legend>If all of these hold</legend>
        {d.conditions.length === 0 && <p className="hint">No conditions: it acts on every such ticket.</p>}
        <ol className="builder-rows">
          {d.conditions.map((c, i) => (
            <ConditionRow
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are positions; the API names errors by index
              key={i}
              n={i + 1}
              c={c}
              choices={choices}
              error={error}
              at={`conditions.${i}`}
              onChange={(next) => setCondition(i, next)}
              onRemove={() => set({ conditions: d.conditions.filter((_, j) => j !== i) })}
            />
          ))}
        </ol>
        <button
          type="button"
          className="button"
          onClick={() => set({ conditions: [...d.conditions, { field: 'subject', op: 'contains', value: '' }] })}
        >
          Add a condition
        </button>
        <FieldNote error={error} name="conditions" />
      </fieldset>
      <fieldset className="builder-part">
        <legend>Then</legend>
        <ol className="builder-rows">
          {d.actions.map((a, i) => (
            <ActionRow
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are positions; the API names errors by index
              key={i}
              n={i + 1}
              a={a}
              choices={choices}
              error={error}
              at={`actions.${i}`}
              onChange={(next) => setAction(i, next)}
              onRemove={d.actions.length > 1 ? () => set({ actions: d.actions.filter((_, j) => j !== i) }) : undefined}
            />
          ))}
        </ol>
        <button
          type="button"
          className="button"
          onClick={() => set({ actions: [...d.actions, { type: 'add_tag', value: '' }] })}
        >
          Add an action
        </button>
        <FieldNote error={error} name="actions" />
      </fieldset>
      <div className="field field-check">
        <input
          id="automation-enabled"
          type="checkbox"
          checked={d.enabled}
          onChange={(e) => set({ enabled: e.target.checked })}
        />
        <label htmlFor="automation-enabled">Enabled</label>
      </div>
      {error instanceof ApiError &&
      error.fields.length > 0 &&
      error.fields.every((f) => f.location.startsWith('body.')) ? (
        <p className="error" role="alert">
          Could not save the automation: {error.fields.length === 1 ? 'one entry needs' : 'some entries need'} a change
          (see the message at {error.fields.length === 1 ? 'it' : 'each'}).
        </p>
      ) : (
        <ErrorNote error={error} what="Could not save the automation" />
      )}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={busy}>
          {id ? 'Save' : 'Create automation'}
        </button>
        <Link to="/settings/$" params={{ _splat: 'automations' }} className="button">
          Cancel
        </Link>
      </div>
    </form>
  );
}
