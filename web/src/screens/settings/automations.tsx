// Automations (GET/POST /v1/automations, GET/PATCH/DELETE /v1/automations/{id}): the list in run
// order (enabled switch, move up/down, delete), and the builder at /settings/automations/new and
// /settings/automations/<id>: a trigger, conditions that must all hold (field, operator, value as
// each field takes them), actions applied in order (each with its parameters). The API's 422
// names the entry it refuses (body.conditions.2.value): the message is shown on that entry.
import './integrations.css';
import * as Switch from '@radix-ui/react-switch';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { ApiError, api, ok, type Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { useIsAdmin } from '../../lib/role';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';

type Automation = Schemas['Automation'];
type Condition = Automation['conditions'][number];
type Action = Automation['actions'][number];
type Trigger = Automation['trigger'];
type CustomField = Schemas['CustomField'];

const TRIGGERS: Array<[Trigger, string]> = [
  ['ticket_created', 'A ticket is created'],
  ['customer_replied', 'The customer replies'],
  ['agent_replied', 'An agent replies'],
  ['ticket_updated', 'A ticket is updated'],
];
const triggerText = (t: string) => TRIGGERS.find(([v]) => v === t)?.[1] ?? t;

const ENUMS: Record<string, Array<[string, string]>> = {
  channel: [
    ['email', 'Email'],
    ['chat', 'Chat'],
    ['api', 'API'],
    ['portal', 'Portal'],
  ],
  priority: [
    ['low', 'Low'],
    ['normal', 'Normal'],
    ['high', 'High'],
    ['urgent', 'Urgent'],
  ],
  severity: [
    ['sev1', 'Sev 1'],
    ['sev2', 'Sev 2'],
    ['sev3', 'Sev 3'],
    ['sev4', 'Sev 4'],
    ['none', 'None'],
  ],
  status: [
    ['open', 'Open'],
    ['pending', 'Pending'],
    ['on_hold', 'On hold'],
    ['solved', 'Solved'],
    ['closed', 'Closed'],
  ],
  sentiment: [
    ['positive', 'Positive'],
    ['neutral', 'Neutral'],
    ['negative', 'Negative'],
    ['frustrated', 'Frustrated'],
    ['none', 'Not known'],
  ],
};

const BASE_FIELDS: Array<[string, string]> = [
  ['subject', 'Subject'],
  ['body', 'Message text'],
  ['from_email', 'Sender’s email'],
  ['channel', 'Channel'],
  ['mailbox_id', 'Mailbox'],
  ['priority', 'Priority'],
  ['severity', 'Severity'],
  ['status', 'Status'],
  ['tag', 'Labels'],
  ['sentiment', 'Sentiment'],
  ['ai_decide', 'AI decides (a yes/no question)'],
];

const OP_TEXT: Record<string, string> = {
  contains: 'contains',
  not_contains: 'does not contain',
  equals: 'is',
  not_equals: 'is not',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  any: 'is any of',
  all: 'has all of',
  none: 'is none of',
  set: 'is set',
  not_set: 'is empty',
};

/** The custom field operators per type (equals / not_equals stand for eq / ne). */
const FIELD_OPS: Record<string, string[]> = {
  text: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  long_text: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  url: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  email: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  date: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  checkbox: ['equals', 'not_equals', 'set', 'not_set'],
  select: ['any', 'equals', 'not_equals', 'none', 'set', 'not_set'],
  user: ['any', 'equals', 'not_equals', 'none', 'set', 'not_set'],
  multi_select: ['any', 'all', 'none', 'equals', 'not_equals', 'set', 'not_set'],
};

const ACTIONS: Array<[string, string]> = [
  ['add_tag', 'Add a label'],
  ['remove_tag', 'Remove a label'],
  ['set_status', 'Set the status'],
  ['set_priority', 'Set the priority'],
  ['set_severity', 'Set the severity'],
  ['assign_user', 'Assign to a person'],
  ['assign_team', 'Assign to a team'],
  ['send_reply', 'Send a reply to the customer'],
  ['add_note', 'Add an internal note'],
  ['set_field', 'Set a custom field'],
  ['mark_spam', 'Mark as spam'],
  ['ai_triage', 'Triage with AI'],
];

// ---------------------------------------------------------------------------------------------
// The data the builder offers as choices.

function useChoices(enabled: boolean) {
  const ws = useWorkspace();
  const opts = { enabled, staleTime: 60_000 };
  const fields = useQuery({
    queryKey: ['custom-fields', ws],
    queryFn: () => ok(api.GET('/v1/custom-fields', {})),
    ...opts,
  });
  const tags = useQuery({ queryKey: ['tags', ws], queryFn: () => ok(api.GET('/v1/tags', {})), ...opts });
  const members = useQuery({
    queryKey: ['members', ws],
    queryFn: () => ok(api.GET('/v1/members', { params: { query: { limit: 100 } } })),
    ...opts,
  });
  const teams = useQuery({
    queryKey: ['teams', ws],
    queryFn: () => ok(api.GET('/v1/teams', { params: { query: { limit: 100 } } })),
    ...opts,
  });
  const mailboxes = useQuery({
    queryKey: ['mailboxes', ws],
    queryFn: () => ok(api.GET('/v1/mailboxes', { params: { query: { limit: 100 } } })),
    ...opts,
  });
  const live = (fields.data?.data ?? []).filter((f) => !f.archived);
  return {
    ticketFields: live.filter((f) => f.entity === 'ticket'),
    contactFields: live.filter((f) => f.entity === 'contact'),
    tags: (tags.data?.data ?? []).filter((t) => !t.archived && t.applies_to.includes('tickets')),
    members: members.data?.data ?? [],
    teams: teams.data?.data ?? [],
    mailboxes: mailboxes.data?.data ?? [],
  };
}
type Choices = ReturnType<typeof useChoices>;

function customOf(field: string, c: Choices): CustomField | undefined {
  if (field.startsWith('contact.field.')) return c.contactFields.find((f) => f.key === field.slice(14));
  if (field.startsWith('field.')) return c.ticketFields.find((f) => f.key === field.slice(6));
  return undefined;
}

function opsOf(field: string, c: Choices): string[] {
  if (field === 'subject' || field === 'body' || field === 'from_email')
    return ['contains', 'not_contains', 'equals', 'not_equals'];
  if (field === 'tag') return ['contains', 'not_contains', 'equals', 'not_equals'];
  if (field === 'ai_decide') return ['gt', 'lt'];
  const custom = customOf(field, c);
  if (custom) return FIELD_OPS[custom.type] ?? ['equals', 'not_equals'];
  return ['equals', 'not_equals'];
}

// ---------------------------------------------------------------------------------------------

export default function Automations({ path }: SectionProps) {
  const [id] = path;
  if (id) return <AutomationEditor key={id} id={id === 'new' ? null : id} />;
  return <AutomationList />;
}

function AutomationList() {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: ['automations', ws],
    queryFn: () => ok(api.GET('/v1/automations', { params: { query: { limit: 100 } } })),
    enabled: admin,
  });
  const [error, setError] = useState<unknown>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['automations', ws] });
  const patch = async (id: string, body: { enabled?: boolean; position?: number }) => {
    setError(null);
    try {
      await ok(api.PATCH('/v1/automations/{id}', { params: { path: { id } }, body }));
    } catch (err) {
      setError(err);
    }
  };
  const rows = list.data?.data ?? [];
  const move = async (i: number, by: -1 | 1) => {
    const a = rows[i];
    const b = rows[i + by];
    if (!a || !b) return;
    // Swap their places; equal positions (run by id) are told apart first.
    const pa = a.position === b.position ? b.position + (by === 1 ? 1 : -1) : b.position;
    await patch(a.id, { position: Math.max(0, pa) });
    await patch(b.id, { position: a.position });
    await refresh();
  };
  return (
    <div className="integrations">
      <PageTitle
        actions={
          admin ? (
            <Link to="/settings/$" params={{ _splat: 'automations/new' }} className="button primary-link">
              New automation
            </Link>
          ) : undefined
        }
      >
        Automations
      </PageTitle>
      <p className="hint">
        When something happens to a ticket and every condition holds, the actions run, in order. Automations run from
        top to bottom.
      </p>
      {!admin ? (
        <ReadOnlyNote what="see and change automations" />
      ) : list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load the automations" />
      ) : rows.length === 0 ? (
        <p className="empty">No automations yet. Make one with “New automation”.</p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <caption className="visually-hidden">Automations in the order they run</caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Name</th>
                <th scope="col">When</th>
                <th scope="col">Runs</th>
                <th scope="col">Enabled</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a, i) => (
                <tr key={a.id}>
                  <td className="nowrap">
                    {i + 1}
                    <button
                      type="button"
                      className="icon-button small"
                      disabled={i === 0}
                      onClick={() => void move(i, -1)}
                      aria-label={`Move ${a.name} up`}
                    >
                      ↑
                    </button>
                    <button
                      type="button"
                      className="icon-button small"
                      disabled={i === rows.length - 1}
                      onClick={() => void move(i, 1)}
                      aria-label={`Move ${a.name} down`}
                    >
                      ↓
                    </button>
                  </td>
                  <td>
                    <Link to="/settings/$" params={{ _splat: `automations/${a.id}` }}>
                      {a.name}
                    </Link>
                  </td>
                  <td>{triggerText(a.trigger)}</td>
                  <td>{a.run_count}</td>
                  <td>
                    <Switch.Root
                      className="switch"
                      checked={a.enabled}
                      aria-label={`${a.name} enabled`}
                      onCheckedChange={async (enabled) => {
                        await patch(a.id, { enabled });
                        await refresh();
                      }}
                    >
                      <Switch.Thumb className="switch-thumb" />
                    </Switch.Root>
                  </td>
                  <td>
                    <ConfirmButton
                      title={`Delete the automation “${a.name}”?`}
                      description="It stops acting on tickets at once. What it already did stays."
                      confirm="Delete"
                      onConfirm={async () => {
                        await ok(api.DELETE('/v1/automations/{id}', { params: { path: { id: a.id } } }));
                        await refresh();
                      }}
                    >
                      Delete<span className="visually-hidden"> {a.name}</span>
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={error} what="Could not change the automation" />
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// The builder.

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

function AutomationEditor({ id }: { id: string | null }) {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const existing = useQuery({
    queryKey: ['automation', ws, id],
    queryFn: () => ok(api.GET('/v1/automations/{id}', { params: { path: { id: id! } } })),
    enabled: admin && id !== null,
  });
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
  const queryClient = useQueryClient();
  const choices = useChoices(true);
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
      if (id) await ok(api.PATCH('/v1/automations/{id}', { params: { path: { id } }, body }));
      else await ok(api.POST('/v1/automations', { body }));
      await queryClient.invalidateQueries({ queryKey: ['automations', ws] });
      await queryClient.invalidateQueries({ queryKey: ['automation', ws, id] });
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

/** An error about a whole list (body.conditions) rather than one entry. */
function FieldNote({ error, name }: { error: unknown; name: string }) {
  const m = fieldError(error, name);
  return m ? <p className="field-error">{m}</p> : null;
}

function ConditionRow({
  n,
  c,
  choices,
  error,
  at,
  onChange,
  onRemove,
}: {
  n: number;
  c: Condition;
  choices: Choices;
  error: unknown;
  at: string;
  onChange(c: Condition): void;
  onRemove(): void;
}) {
  const fieldOptions: Array<[string, string]> = [
    ...BASE_FIELDS,
    ...choices.ticketFields.map((f): [string, string] => [`field.${f.key}`, `Ticket field: ${f.name}`]),
    ...choices.contactFields.map((f): [string, string] => [`contact.field.${f.key}`, `Contact field: ${f.name}`]),
  ];
  if (!fieldOptions.some(([v]) => v === c.field)) fieldOptions.push([c.field, c.field]);
  const ops = opsOf(c.field, choices);
  const opOptions = (ops.includes(c.op) ? ops : [c.op, ...ops]).map((o): [string, string] => [
    o,
    c.field === 'ai_decide'
      ? o === 'gt'
        ? 'yes with a probability above'
        : 'yes with a probability below'
      : (OP_TEXT[o] ?? o),
  ]);
  const changeField = (field: string) => {
    const nextOps = opsOf(field, choices);
    const value = field === 'ai_decide' ? 0.7 : ENUMS[field] ? ENUMS[field]![0]![0] : '';
    onChange({ field, op: nextOps[0]!, value, ...(field === 'ai_decide' ? { question: '' } : {}) });
  };
  return (
    <li className="builder-row">
      <span className="row-number" aria-hidden="true">
        {n}
      </span>
      <SelectField
        label={`Condition ${n}: field`}
        value={c.field}
        onChange={(e) => changeField(e.target.value)}
        options={fieldOptions}
        error={fieldError(error, `${at}.field`)}
      />
      <SelectField
        label={`Condition ${n}: operator`}
        value={c.op}
        onChange={(e) =>
          onChange({ ...c, op: e.target.value, ...(/^(not_)?set$/.test(e.target.value) ? { value: undefined } : {}) })
        }
        options={opOptions}
        error={fieldError(error, `${at}.op`)}
      />
      <ConditionValue n={n} c={c} choices={choices} error={fieldError(error, `${at}.value`)} onChange={onChange} />
      {c.field === 'ai_decide' && (
        <TextField
          label={`Condition ${n}: question`}
          value={c.question ?? ''}
          onChange={(e) => onChange({ ...c, question: e.target.value })}
          hint="A yes/no question about the ticket, 3 to 300 characters."
          error={fieldError(error, `${at}.question`)}
        />
      )}
      <button type="button" className="button remove" onClick={onRemove}>
        Remove<span className="visually-hidden"> condition {n}</span>
      </button>
      <FieldNote error={error} name={at} />
    </li>
  );
}

function ConditionValue({
  n,
  c,
  choices,
  error,
  onChange,
}: {
  n: number;
  c: Condition;
  choices: Choices;
  error: string | undefined;
  onChange(c: Condition): void;
}) {
  const label = `Condition ${n}: value`;
  const text = Array.isArray(c.value) ? c.value.join(', ') : c.value === undefined ? '' : String(c.value);
  if (c.op === 'set' || c.op === 'not_set') return null;
  if (ENUMS[c.field]) {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={ENUMS[c.field]!}
        error={error}
      />
    );
  }
  if (c.field === 'mailbox_id') {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={[['', 'Choose a mailbox'], ...choices.mailboxes.map((m): [string, string] => [m.id, m.name])]}
        error={error}
      />
    );
  }
  if (c.field === 'ai_decide') {
    return (
      <TextField
        label={`${label} (probability)`}
        type="number"
        min={0.01}
        max={0.99}
        step={0.01}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value === '' ? '' : Number(e.target.value) })}
        error={error}
      />
    );
  }
  if (c.field === 'tag') {
    return (
      <TextField
        label={label}
        value={text}
        list="automation-labels"
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        hint={c.op.includes('contains') ? 'A label name, or several separated by commas.' : 'A label name.'}
        error={error}
      />
    );
  }
  const custom = customOf(c.field, choices);
  if (custom && (custom.type === 'select' || custom.type === 'multi_select')) {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={[['', 'Choose an option'], ...custom.options.map((o): [string, string] => [o.id, o.label])]}
        error={error}
      />
    );
  }
  if (custom?.type === 'checkbox') {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value === 'true' })}
        options={[
          ['true', 'Checked'],
          ['false', 'Not checked'],
        ]}
        error={error}
      />
    );
  }
  if (custom?.type === 'user') {
    return (
      <SelectField
        label={label}
        value={text}
        onChange={(e) => onChange({ ...c, value: e.target.value })}
        options={[['', 'Choose a person'], ...choices.members.map((m): [string, string] => [m.user.id, m.user.name])]}
        error={error}
      />
    );
  }
  return (
    <TextField
      label={label}
      type={custom?.type === 'date' ? 'date' : custom?.type === 'number' ? 'number' : 'text'}
      value={text}
      onChange={(e) => onChange({ ...c, value: e.target.value })}
      error={error}
    />
  );
}

function ActionRow({
  n,
  a,
  choices,
  error,
  at,
  onChange,
  onRemove,
}: {
  n: number;
  a: Action;
  choices: Choices;
  error: unknown;
  at: string;
  onChange(a: Action): void;
  onRemove?: () => void;
}) {
  const textId = useId();
  const label = `Action ${n}: value`;
  const value = a.value ?? '';
  const valueError = fieldError(error, `${at}.value`);
  const types = ACTIONS.some(([t]) => t === a.type) ? ACTIONS : [...ACTIONS, [a.type, a.type] as [string, string]];
  const changeType = (type: string) => {
    const first: Record<string, string> = {
      set_status: 'solved',
      set_priority: 'high',
      set_severity: 'sev3',
      assign_user: choices.members[0]?.user.id ?? '',
      assign_team: choices.teams[0]?.id ?? '',
      add_tag: choices.tags[0]?.name ?? '',
      remove_tag: choices.tags[0]?.name ?? '',
    };
    onChange({
      type,
      ...(type === 'mark_spam' || type === 'ai_triage' ? {} : { value: first[type] ?? '' }),
      ...(type === 'set_field' ? { field: choices.ticketFields[0]?.key ?? '' } : {}),
    });
  };
  let input: ReactNode = null;
  const select = (options: Array<[string, string]>, lbl = label) => (
    <SelectField
      label={lbl}
      value={value}
      onChange={(e) => onChange({ ...a, value: e.target.value })}
      options={options}
      error={valueError}
    />
  );
  switch (a.type) {
    case 'set_status':
      input = select(ENUMS.status!, `Action ${n}: status`);
      break;
    case 'set_priority':
      input = select(ENUMS.priority!, `Action ${n}: priority`);
      break;
    case 'set_severity':
      input = select([...ENUMS.severity!.slice(0, 4), ['', 'None (clear it)']], `Action ${n}: severity`);
      break;
    case 'assign_user':
      input = select(
        [['', 'Choose a person'], ...choices.members.map((m): [string, string] => [m.user.id, m.user.name])],
        `Action ${n}: person`,
      );
      break;
    case 'assign_team':
      input = select(
        [['', 'Choose a team'], ...choices.teams.map((t): [string, string] => [t.id, t.name])],
        `Action ${n}: team`,
      );
      break;
    case 'add_tag':
    case 'remove_tag':
      input = (
        <TextField
          label={`Action ${n}: label`}
          value={value}
          list="automation-labels"
          onChange={(e) => onChange({ ...a, value: e.target.value })}
          hint={choices.tags.length === 0 ? 'Make labels in Settings → Labels first.' : 'The label’s name.'}
          error={valueError}
        />
      );
      break;
    case 'send_reply':
    case 'add_note':
      input = (
        <div className="field wide">
          <label htmlFor={textId}>{a.type === 'send_reply' ? `Action ${n}: reply` : `Action ${n}: note`}</label>
          <textarea
            id={textId}
            rows={3}
            value={value}
            onChange={(e) => onChange({ ...a, value: e.target.value })}
            aria-invalid={valueError ? true : undefined}
            aria-describedby={valueError ? `${textId}-error` : undefined}
          />
          {valueError && (
            <p id={`${textId}-error`} className="field-error">
              {valueError}
            </p>
          )}
        </div>
      );
      break;
    case 'set_field':
      input = (
        <>
          <SelectField
            label={`Action ${n}: field`}
            value={a.field ?? ''}
            onChange={(e) => onChange({ ...a, field: e.target.value })}
            options={[['', 'Choose a field'], ...choices.ticketFields.map((f): [string, string] => [f.key, f.name])]}
            error={fieldError(error, `${at}.field`)}
          />
          <TextField
            label={`Action ${n}: field value`}
            value={value}
            onChange={(e) => onChange({ ...a, value: e.target.value })}
            hint="A number, true or false, a date (YYYY-MM-DD), option ids separated by commas, or empty to clear."
            error={valueError}
          />
        </>
      );
      break;
    default:
      input = null;
  }
  return (
    <li className="builder-row">
      <span className="row-number" aria-hidden="true">
        {n}
      </span>
      <SelectField
        label={`Action ${n}`}
        value={a.type}
        onChange={(e) => changeType(e.target.value)}
        options={types}
        error={fieldError(error, `${at}.type`)}
      />
      {input}
      {onRemove && (
        <button type="button" className="button remove" onClick={onRemove}>
          Remove<span className="visually-hidden"> action {n}</span>
        </button>
      )}
      <FieldNote error={error} name={at} />
      {n === 1 && (
        <datalist id="automation-labels">
          {choices.tags.map((t) => (
            <option key={t.id} value={t.name} />
          ))}
        </datalist>
      )}
    </li>
  );
}
