// The inbox's filters and sort: native selects (labelled, keyboard-friendly), each change applied
// at once to the address (replace: the back button leaves the inbox rather than undoing a filter).
// Custom fields filter with the list's `field.<key>` (equality; text fields with contains).
import { useNavigate } from '@tanstack/react-router';
import { type ReactNode, useEffect, useId, useState } from 'react';
import { useCustomFields } from '../../data/custom-fields';
import { useMembers } from '../../data/members';
import { useTags } from '../../data/tags';
import { useTeams } from '../../data/teams';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { STATUS_LABEL } from '../../lib/format';
import type { InboxSearch } from '../../lib/views';

type Field = Schemas['CustomField'];

export const PRIORITY_LABEL = { urgent: 'Urgent', high: 'High', normal: 'Normal', low: 'Low' } as const;
export const SEVERITY_LABEL = { sev1: 'Sev 1', sev2: 'Sev 2', sev3: 'Sev 3', sev4: 'Sev 4' } as const;

const SORTABLE: Field['type'][] = ['text', 'number', 'date', 'checkbox', 'select'];

function Select({
  label,
  value,
  onChange,
  children,
}: {
  label: string;
  value: string;
  onChange(v: string): void;
  children: ReactNode;
}) {
  const id = useId();
  return (
    <div className="filter">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {children}
      </select>
    </div>
  );
}

/** A text filter: applied on Enter or when the box is left. */
function TextFilter({ label, value, onChange }: { label: string; value: string; onChange(v: string): void }) {
  const id = useId();
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <div className="filter">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={text}
        maxLength={200}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => text !== value && onChange(text.trim())}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            onChange(text.trim());
          }
        }}
      />
    </div>
  );
}

export function Filters({ id, search }: { id: string; search: InboxSearch }) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const members = useMembers(ws).data ?? [];
  const teams = useTeams(ws).data ?? [];
  const tags = useTags(ws).data ?? [];
  const fields = (useCustomFields(ws).data ?? []).filter((f) => f.entity === 'ticket');

  const set = (patch: Partial<InboxSearch>) => {
    const next: InboxSearch = { ...search, ...patch };
    for (const k of Object.keys(next) as (keyof InboxSearch)[]) {
      const v = next[k];
      if (v === '' || v === undefined || (typeof v === 'object' && Object.keys(v).length === 0)) delete next[k];
    }
    void navigate({ to: '/inbox', search: next, replace: true });
  };
  const setField = (param: string, value: string) => {
    const fields = { ...(search.fields ?? {}) };
    if (value) fields[param] = value;
    else delete fields[param];
    set({ fields });
  };
  const clear = () => {
    const { view, q, sort, order } = search;
    void navigate({
      to: '/inbox',
      search: {
        ...(view ? { view } : {}),
        ...(q ? { q } : {}),
        ...(sort ? { sort } : {}),
        ...(order ? { order } : {}),
      },
      replace: true,
    });
  };

  return (
    <fieldset id={id} className="filters">
      <legend className="visually-hidden">Filters and sort</legend>
      <Select label="Status" value={search.status ?? ''} onChange={(v) => set({ status: v })}>
        <option value="">The view’s</option>
        {Object.entries(STATUS_LABEL).map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </Select>
      <Select label="Priority" value={search.priority ?? ''} onChange={(v) => set({ priority: v })}>
        <option value="">Any</option>
        {Object.entries(PRIORITY_LABEL).map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
        <option value="urgent,high">Urgent or high</option>
      </Select>
      <Select label="Severity" value={search.severity ?? ''} onChange={(v) => set({ severity: v })}>
        <option value="">Any</option>
        {Object.entries(SEVERITY_LABEL).map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
        <option value="none">None</option>
      </Select>
      <Select label="Assignee" value={search.assignee ?? ''} onChange={(v) => set({ assignee: v })}>
        <option value="">Anyone</option>
        <option value="me">Me</option>
        <option value="none">Unassigned</option>
        {members.map((m) => (
          <option key={m.user.id} value={m.user.id}>
            {m.user.name}
          </option>
        ))}
      </Select>
      <Select label="Team" value={search.team ?? ''} onChange={(v) => set({ team: v })}>
        <option value="">Any</option>
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </Select>
      <Select label="Label" value={search.label ?? ''} onChange={(v) => set({ label: v })}>
        <option value="">Any</option>
        {tags
          .filter((t) => t.applies_to.includes('tickets'))
          .map((t) => (
            <option key={t.id} value={t.name}>
              {t.name}
            </option>
          ))}
      </Select>
      {fields.map((f) => (
        <FieldFilter key={f.id} field={f} fields={search.fields ?? {}} members={members} onChange={setField} />
      ))}
      <Select label="Sort by" value={search.sort ?? ''} onChange={(v) => set({ sort: v })}>
        <option value="">Last message</option>
        <option value="created_at">Created</option>
        <option value="priority">Priority</option>
        <option value="severity">Severity</option>
        <option value="due">SLA due</option>
        {fields
          .filter((f) => SORTABLE.includes(f.type))
          .map((f) => (
            <option key={f.id} value={`field.${f.key}`}>
              {f.name}
            </option>
          ))}
      </Select>
      <Select label="Order" value={search.order ?? ''} onChange={(v) => set({ order: v as InboxSearch['order'] })}>
        <option value="">Default</option>
        <option value="desc">Descending</option>
        <option value="asc">Ascending</option>
      </Select>
      <button type="button" className="button clear-filters" onClick={clear} disabled={!hasFilters(search)}>
        Clear filters
      </button>
    </fieldset>
  );
}

const hasFilters = (s: InboxSearch) =>
  Boolean(s.status || s.priority || s.severity || s.assignee || s.team || s.label || s.fields);

function FieldFilter({
  field: f,
  fields,
  members,
  onChange,
}: {
  field: Field;
  fields: Record<string, string>;
  members: Schemas['Member'][];
  onChange(param: string, value: string): void;
}) {
  switch (f.type) {
    case 'select':
    case 'multi_select':
      return (
        <Select label={f.name} value={fields[`${f.key}[any]`] ?? ''} onChange={(v) => onChange(`${f.key}[any]`, v)}>
          <option value="">Any</option>
          {f.options.map((o) => (
            <option key={o.id} value={o.id}>
              {o.label}
            </option>
          ))}
        </Select>
      );
    case 'checkbox':
      return (
        <Select label={f.name} value={fields[f.key] ?? ''} onChange={(v) => onChange(f.key, v)}>
          <option value="">Any</option>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </Select>
      );
    case 'user':
      return (
        <Select label={f.name} value={fields[`${f.key}[any]`] ?? ''} onChange={(v) => onChange(`${f.key}[any]`, v)}>
          <option value="">Anyone</option>
          <option value="me">Me</option>
          {members.map((m) => (
            <option key={m.user.id} value={m.user.id}>
              {m.user.name}
            </option>
          ))}
        </Select>
      );
    case 'number':
    case 'date':
      return <TextFilter label={`${f.name} is`} value={fields[f.key] ?? ''} onChange={(v) => onChange(f.key, v)} />;
    default:
      return (
        <TextFilter
          label={`${f.name} contains`}
          value={fields[`${f.key}[contains]`] ?? ''}
          onChange={(v) => onChange(`${f.key}[contains]`, v)}
        />
      );
  }
}
