// The audit log (GET /v1/audit-logs, admins): who did what, when, to what; filtered by action,
// person or API key, kind of record and time (the filters the API takes), newest first in
// cursor pages ("Older entries").
import './integrations.css';
import { type FormEvent, useState } from 'react';
import type { paths } from '../../api.gen';
import { useApiKeys } from '../../data/api-keys';
import { type AuditQuery, useAuditLog } from '../../data/audit-log';
import { useMembers } from '../../data/members';
import { useWorkspace } from '../../lib/context';
import { when } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { SelectField, TextField } from '../../ui/form';
import { PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';
import { Loaded, MoreButton, ScrollTable } from './shared';

type Query = AuditQuery;
type Entry = paths['/v1/audit-logs']['get']['responses'][200]['content']['application/json']['data'][number];

export default function AuditLog(_: SectionProps) {
  const admin = useIsAdmin();
  return (
    <div className="integrations">
      <PageTitle>Audit log</PageTitle>
      {admin ? <Log /> : <ReadOnlyNote what="read the audit log" />}
    </div>
  );
}

/** A date input's day as the start of that day in local time, ISO. */
const dayStart = (d: string, plus = 0) => {
  const t = new Date(`${d}T00:00:00`);
  t.setDate(t.getDate() + plus);
  return t.toISOString();
};

function Log() {
  const ws = useWorkspace();
  const [form, setForm] = useState({ action: '', actor: '', entity_type: '', from: '', to: '' });
  const [filters, setFilters] = useState<Query>({});
  const members = useMembers(ws);
  const keys = useApiKeys(ws);
  const list = useAuditLog(ws, filters);
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setFilters({
      ...(form.action.trim() ? { action: form.action.trim() } : {}),
      ...(form.actor ? { actor: form.actor } : {}),
      ...(form.entity_type.trim() ? { entity_type: form.entity_type.trim() } : {}),
      ...(form.from ? { from: dayStart(form.from) } : {}),
      ...(form.to ? { to: dayStart(form.to, 1) } : {}),
    });
  };
  const on = (k: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const keyName = (id: string | null) => keys.data?.data.find((k) => k.id === id)?.name;
  const who = (e: Entry) =>
    e.actor.type === 'user'
      ? (e.actor.user?.name ?? 'A former member')
      : e.actor.type === 'api_key'
        ? `API key ${keyName(e.actor.api_key_id) ?? '(revoked)'}`
        : 'The help desk';
  const actors: Array<[string, string]> = [
    ['', 'Anyone'],
    ...(members.data ?? []).map((m): [string, string] => [m.user.id, m.user.name]),
    ...(keys.data?.data ?? []).map((k): [string, string] => [k.id, `API key ${k.name}`]),
  ];
  return (
    <>
      <form className="filters" onSubmit={apply} aria-label="Filter the audit log">
        <TextField label="Action" value={form.action} onChange={on('action')} placeholder="e.g. api_key.created" />
        <SelectField label="Who" value={form.actor} onChange={on('actor')} options={actors} />
        <TextField
          label="Record kind"
          value={form.entity_type}
          onChange={on('entity_type')}
          placeholder="e.g. webhook"
        />
        <TextField label="From" type="date" value={form.from} onChange={on('from')} />
        <TextField label="Until" type="date" value={form.to} onChange={on('to')} />
        <div className="field">
          <button type="submit" className="button">
            Filter
          </button>
        </div>
      </form>
      <Loaded
        query={list}
        what="Could not load the audit log"
        empty={rows.length === 0 && <>No entries{Object.keys(filters).length ? ' match these filters' : ' yet'}.</>}
      >
        <ScrollTable className="table audit" caption="Audit log entries, newest first">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Record</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e) => (
              <tr key={e.id}>
                <td className="nowrap">
                  <time dateTime={e.created_at}>{when(e.created_at)}</time>
                </td>
                <td>
                  {who(e)}
                  {e.ip && <p className="hint">{e.ip}</p>}
                </td>
                <td>
                  <code>{e.action}</code>
                  {Object.keys(e.data).length > 0 && (
                    <details>
                      <summary>Details</summary>
                      <pre className="payload">{JSON.stringify(e.data, null, 2)}</pre>
                    </details>
                  )}
                </td>
                <td className="break">
                  {e.entity_type}
                  {e.entity_id && <p className="hint">{e.entity_id}</p>}
                </td>
              </tr>
            ))}
          </tbody>
        </ScrollTable>
      </Loaded>
      <MoreButton list={list} saysLoading>
        Older entries
      </MoreButton>
    </>
  );
}
