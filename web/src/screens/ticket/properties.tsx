// A ticket's properties, each changed with PATCH /v1/tickets/{id} at once: assignee and team,
// priority, severity, labels (picked from a searchable list grouped as in settings; in an
// exclusive group the API keeps one, so picking another replaces it), custom fields (an editor per
// type; text saved when the field is left). Also the SLA clocks, the CSAT rating, the ticket this
// one follows up, and merging it into another.
import * as Dialog from '@radix-ui/react-dialog';
import * as Popover from '@radix-ui/react-popover';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { type ReactNode, useEffect, useId, useState } from 'react';
import type { paths } from '../../api.gen';
import { useCustomFields } from '../../data/custom-fields';
import { keys } from '../../data/keys';
import { useMembers } from '../../data/members';
import { useTagGroups, useTags } from '../../data/tags';
import { useTeams } from '../../data/teams';
import { api, errorText, ok, type Schemas, type Ticket } from '../../lib/api';
import { fieldError } from '../../ui/form';
import { ratingText } from '../../ui/words';

type Patch = NonNullable<paths['/v1/tickets/{id}']['patch']['requestBody']>['content']['application/json'];
type Field = Schemas['CustomField'];

const PRIORITIES = [
  ['low', 'Low'],
  ['normal', 'Normal'],
  ['high', 'High'],
  ['urgent', 'Urgent'],
] as const;
const SEVERITIES = [
  ['sev1', 'Sev 1 (most severe)'],
  ['sev2', 'Sev 2'],
  ['sev3', 'Sev 3'],
  ['sev4', 'Sev 4'],
] as const;

/** PATCH the ticket; the answer replaces the cached ticket. Errors are kept for the field named. */
function useTicketPatch(ws: string, t: Ticket) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<{ what: string; err: unknown } | null>(null);
  const patch = async (what: string, body: Patch): Promise<boolean> => {
    setError(null);
    try {
      const updated = await ok(api.PATCH('/v1/tickets/{id}', { params: { path: { id: t.id } }, body }));
      queryClient.setQueryData(keys.ticket(ws, updated.number), updated);
      void queryClient.invalidateQueries({ queryKey: keys.counts(ws) });
      return true;
    } catch (err) {
      setError({ what, err });
      return false;
    }
  };
  return { patch, error };
}

function Row({ label, htmlFor, children }: { label: string; htmlFor?: string; children: ReactNode }) {
  return (
    <div className="prop">
      {htmlFor ? <label htmlFor={htmlFor}>{label}</label> : <span className="prop-label">{label}</span>}
      <div className="prop-value">{children}</div>
    </div>
  );
}

export function Properties({ ws, ticket: t, readOnly }: { ws: string; ticket: Ticket; readOnly: boolean }) {
  const { patch, error } = useTicketPatch(ws, t);
  const members = useMembers(ws).data ?? [];
  const teams = useTeams(ws).data ?? [];
  const fields = (useCustomFields(ws).data ?? []).filter((f) => f.entity === 'ticket');
  const id = useId();
  return (
    <section className="side-section props" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Details</h2>
      {readOnly && <p className="hint">Only agents and admins can change a ticket.</p>}
      <Row label="Assignee" htmlFor={`${id}-assignee`}>
        <select
          id={`${id}-assignee`}
          value={t.assignee?.id ?? ''}
          disabled={readOnly}
          onChange={(e) => void patch('assignee', { assignee_id: e.target.value || null })}
        >
          <option value="">Unassigned</option>
          {t.assignee && !members.some((m) => m.user.id === t.assignee?.id) && (
            <option value={t.assignee.id}>{t.assignee.name}</option>
          )}
          {members
            .filter((m) => m.role !== 'viewer')
            .map((m) => (
              <option key={m.user.id} value={m.user.id}>
                {m.user.name}
              </option>
            ))}
        </select>
      </Row>
      <Row label="Team" htmlFor={`${id}-team`}>
        <select
          id={`${id}-team`}
          value={t.team_id ?? ''}
          disabled={readOnly}
          onChange={(e) => void patch('team', { team_id: e.target.value || null })}
        >
          <option value="">No team</option>
          {teams.map((team) => (
            <option key={team.id} value={team.id}>
              {team.name}
            </option>
          ))}
        </select>
      </Row>
      <Row label="Priority" htmlFor={`${id}-priority`}>
        <select
          id={`${id}-priority`}
          value={t.priority}
          disabled={readOnly}
          onChange={(e) => void patch('priority', { priority: e.target.value as Ticket['priority'] })}
        >
          {PRIORITIES.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
      </Row>
      <Row label="Severity" htmlFor={`${id}-severity`}>
        <select
          id={`${id}-severity`}
          value={t.severity ?? ''}
          disabled={readOnly}
          onChange={(e) => void patch('severity', { severity: (e.target.value || null) as Ticket['severity'] })}
        >
          <option value="">None</option>
          {SEVERITIES.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
      </Row>
      {error && ['assignee', 'team', 'priority', 'severity'].includes(error.what) && (
        <p className="error" role="alert">
          Could not change the {error.what}: {errorText(error.err)}
        </p>
      )}
      <Labels
        ws={ws}
        ticket={t}
        readOnly={readOnly}
        patch={patch}
        error={error?.what === 'labels' ? error.err : null}
      />
      {fields.length > 0 && (
        <div className="custom-fields">
          {fields.map((f) => (
            <FieldEditor
              key={f.id}
              field={f}
              value={(t.fields as Record<string, unknown>)[f.key]}
              members={members}
              readOnly={readOnly || f.archived}
              error={error?.what === `field:${f.key}` ? error.err : null}
              onSave={(v) => patch(`field:${f.key}`, { fields: { [f.key]: v } as Patch['fields'] })}
            />
          ))}
        </div>
      )}
      <SlaClocks t={t} />
      {t.csat && (
        <p className="csat">
          Customer rating: <strong>{ratingText(t.csat.score)}</strong>
          {t.csat.comment ? `: “${t.csat.comment}”` : ''}
        </p>
      )}
      <FollowUp ws={ws} t={t} />
      {!readOnly && <MergeButton ws={ws} ticket={t} />}
    </section>
  );
}

function Labels({
  ws,
  ticket: t,
  readOnly,
  patch,
  error,
}: {
  ws: string;
  ticket: Ticket;
  readOnly: boolean;
  patch(what: string, body: Patch): Promise<boolean>;
  error: unknown;
}) {
  const tags = (useTags(ws).data ?? []).filter((x) => x.applies_to.includes('tickets') && !x.archived);
  const groups = useTagGroups(ws).data ?? [];
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState('');
  const searchId = useId();
  const has = new Set(t.tags.map((x) => x.id));
  const matching = tags.filter((x) => !has.has(x.id) && x.name.toLowerCase().includes(q.trim().toLowerCase()));
  const grouped: { key: string; name: string; exclusive: boolean; tags: typeof tags }[] = [
    ...groups.map((g) => ({
      key: g.id,
      name: g.name,
      exclusive: g.exclusive,
      tags: matching.filter((x) => x.group_id === g.id),
    })),
    { key: 'none', name: 'Other labels', exclusive: false, tags: matching.filter((x) => !x.group_id) },
  ].filter((g) => g.tags.length > 0);
  const exact = tags.some((x) => x.name.toLowerCase() === q.trim().toLowerCase());
  const add = async (name: string) => {
    setOpen(false);
    setQ('');
    await patch('labels', { add_tags: [name] });
  };
  return (
    <div className="prop prop-labels">
      <span className="prop-label" id={`${searchId}-l`}>
        Labels
      </span>
      <div className="prop-value">
        <div className="labels editable-labels">
          {t.tags.map((tag) => (
            <span key={tag.id} className={`label label-${tag.color}`}>
              {tag.name}
              {!readOnly && (
                <button
                  type="button"
                  className="label-remove"
                  aria-label={`Remove label ${tag.name}`}
                  onClick={() => void patch('labels', { remove_tags: [tag.name] })}
                >
                  ×
                </button>
              )}
            </span>
          ))}
          {t.tags.length === 0 && <span className="hint">None</span>}
        </div>
        {!readOnly && (
          <Popover.Root open={open} onOpenChange={setOpen}>
            <Popover.Trigger className="button add-label">Add label</Popover.Trigger>
            <Popover.Portal>
              <Popover.Content className="menu label-picker" align="start" sideOffset={4}>
                <label htmlFor={searchId} className="menu-label">
                  Find a label
                </label>
                <input
                  id={searchId}
                  type="search"
                  value={q}
                  maxLength={50}
                  onChange={(e) => setQ(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' && q.trim()) {
                      e.preventDefault();
                      const first = matching[0];
                      void add(exact || !first ? q.trim() : first.name);
                    }
                  }}
                />
                {grouped.map((g) => (
                  <fieldset key={g.key} className="label-group">
                    <legend className="menu-label">
                      {g.name}
                      {g.exclusive ? ' (one of)' : ''}
                    </legend>
                    {g.tags.map((x) => (
                      <button key={x.id} type="button" className="menu-item" onClick={() => void add(x.name)}>
                        <span className={`label label-${x.color}`}>{x.name}</span>
                        {g.exclusive && t.tags.some((o) => o.group_id === g.key) ? (
                          <span className="hint"> replaces {t.tags.find((o) => o.group_id === g.key)?.name}</span>
                        ) : null}
                      </button>
                    ))}
                  </fieldset>
                ))}
                {q.trim() && !exact && (
                  <button type="button" className="menu-item" onClick={() => void add(q.trim())}>
                    Create “{q.trim()}”
                  </button>
                )}
              </Popover.Content>
            </Popover.Portal>
          </Popover.Root>
        )}
        {error ? (
          <p className="error" role="alert">
            Could not change the labels: {errorText(error)}
          </p>
        ) : null}
      </div>
    </div>
  );
}

function FieldEditor({
  field: f,
  value,
  members,
  readOnly,
  error,
  onSave,
}: {
  field: Field;
  value: unknown;
  members: Schemas['Member'][];
  readOnly: boolean;
  error: unknown;
  onSave(v: unknown): Promise<boolean>;
}) {
  const id = useId();
  const [draft, setDraft] = useState(value === undefined || value === null ? '' : String(value));
  useEffect(() => setDraft(value === undefined || value === null ? '' : String(value)), [value]);
  const message = error ? (fieldError(error, f.key) ?? errorText(error)) : null;
  const described = message ? `${id}-err` : f.description ? `${id}-hint` : undefined;
  const saveText = () => {
    const v = draft.trim();
    if (v === (value === undefined || value === null ? '' : String(value))) return;
    void onSave(v === '' ? null : f.type === 'number' ? Number(v) : v);
  };
  const common = { id, disabled: readOnly, 'aria-describedby': described, 'aria-invalid': message ? true : undefined };
  let control: ReactNode;
  switch (f.type) {
    case 'checkbox':
      control = (
        <input {...common} type="checkbox" checked={value === true} onChange={(e) => void onSave(e.target.checked)} />
      );
      break;
    case 'select':
      control = (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => void onSave(e.target.value || null)}
        >
          <option value="">—</option>
          {f.options.map((o) => (
            <option key={o.id} value={o.id}>
              {o.label}
            </option>
          ))}
        </select>
      );
      break;
    case 'user':
      control = (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => void onSave(e.target.value || null)}
        >
          <option value="">—</option>
          {members.map((m) => (
            <option key={m.user.id} value={m.user.id}>
              {m.user.name}
            </option>
          ))}
        </select>
      );
      break;
    case 'multi_select': {
      const chosen = Array.isArray(value) ? (value as string[]) : [];
      control = (
        <fieldset className="multi" aria-describedby={described} disabled={readOnly}>
          <legend className="visually-hidden">{f.name}</legend>
          {f.options.map((o) => (
            <label key={o.id}>
              <input
                type="checkbox"
                checked={chosen.includes(o.id)}
                onChange={(e) => void onSave(e.target.checked ? [...chosen, o.id] : chosen.filter((x) => x !== o.id))}
              />
              {o.label}
            </label>
          ))}
        </fieldset>
      );
      break;
    }
    case 'date':
      control = <input {...common} type="date" value={draft} onChange={(e) => void onSave(e.target.value || null)} />;
      break;
    case 'long_text':
      control = (
        <textarea {...common} rows={3} value={draft} onChange={(e) => setDraft(e.target.value)} onBlur={saveText} />
      );
      break;
    default:
      control = (
        <input
          {...common}
          type={f.type === 'number' ? 'number' : f.type === 'url' ? 'url' : f.type === 'email' ? 'email' : 'text'}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={saveText}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              saveText();
            }
          }}
        />
      );
  }
  return (
    <div className={`prop prop-field prop-${f.type}`}>
      {f.type === 'multi_select' ? <span className="prop-label">{f.name}</span> : <label htmlFor={id}>{f.name}</label>}
      <div className="prop-value">
        {control}
        {f.description && !message && (
          <p id={`${id}-hint`} className="hint">
            {f.description}
          </p>
        )}
        {message && (
          <p id={`${id}-err`} className="field-error" role="alert">
            {message}
          </p>
        )}
      </div>
    </div>
  );
}

/** Time left (or overdue) in words, to the minute. */
function span(ms: number): string {
  const m = Math.round(Math.abs(ms) / 60_000);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const i = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(i);
  }, [everyMs]);
  return now;
}

/**
 * One clock: time left, overdue, or met. A clock not running (no due date) shows nothing, or
 * `idle` as a done state when given.
 */
function Clock({
  label,
  due,
  doneAt,
  now,
  idle,
}: {
  label: string;
  due: string | null;
  doneAt: string | null;
  now: number;
  idle?: string;
}) {
  if (!due) {
    if (!idle) return null;
    return (
      <li className="sla-clock sla-met">
        <span>{label}</span>
        <span className="sla-idle">{idle}</span>
      </li>
    );
  }
  const dueMs = new Date(due).getTime();
  let text: string;
  let state: 'ok' | 'soon' | 'late' | 'met';
  if (doneAt) {
    const late = new Date(doneAt).getTime() > dueMs;
    text = late ? 'Met late' : 'Met';
    state = late ? 'late' : 'met';
  } else if (now > dueMs) {
    text = `Overdue by ${span(now - dueMs)}`;
    state = 'late';
  } else {
    text = `${span(dueMs - now)} left`;
    state = dueMs - now < 60 * 60_000 ? 'soon' : 'ok';
  }
  return (
    <li className={`sla-clock sla-${state}`}>
      <span>{label}</span>
      <time dateTime={due} title={new Date(due).toLocaleString()}>
        {text}
      </time>
    </li>
  );
}

function SlaClocks({ t }: { t: Ticket }) {
  const now = useNow(30_000);
  if (!t.sla) return null;
  const done = t.status === 'solved' || t.status === 'closed';
  const solved = done ? (t.solved_at ?? t.updated_at) : null;
  const { first_response_due_at, next_response_due_at, resolution_due_at } = t.sla;
  return (
    <div className="sla">
      <h3>SLA {t.sla.breached && <span className="sla-breached">Breached</span>}</h3>
      {!first_response_due_at && !next_response_due_at && !resolution_due_at ? (
        <p className="hint">No targets on this ticket.</p>
      ) : (
        <ul className="sla-clocks">
          <Clock label="First response" due={first_response_due_at} doneAt={t.first_responded_at} now={now} />
          {/* Runs while a customer's message after the first reply waits for an agent's reply. */}
          <Clock
            label="Next response"
            due={next_response_due_at}
            doneAt={null}
            now={now}
            idle={t.first_responded_at && !done ? 'No reply due' : undefined}
          />
          <Clock label="Resolution" due={resolution_due_at} doneAt={solved} now={now} />
        </ul>
      )}
    </div>
  );
}

/**
 * The follow-up links both ways: the ticket this one follows (custom.follow_up_of) and, for a
 * closed ticket, the ones its customer's later messages opened (GET /v1/tickets?follow_up_of=).
 */
function FollowUp({ ws, t }: { ws: string; t: Ticket }) {
  const of = (t.custom as { follow_up_of?: { id?: string; number?: number } } | null)?.follow_up_of;
  const later = useQuery({
    queryKey: ['followUps', ws, t.id],
    queryFn: async () =>
      (await ok(api.GET('/v1/tickets', { params: { query: { follow_up_of: t.id, limit: 20, sort: 'created_at' } } })))
        .data,
    enabled: t.status === 'closed',
  });
  const follows = later.data ?? [];
  if (!of?.number && follows.length === 0) return null;
  return (
    <>
      {of?.number ? (
        <p className="follow-up">
          Follow-up of{' '}
          <Link to="/tickets/$number" params={{ number: String(of.number) }}>
            #{of.number}
          </Link>
        </p>
      ) : null}
      {follows.length > 0 && (
        <p className="follow-up">
          Followed up in{' '}
          {follows.map((x, i) => (
            <span key={x.id}>
              {i > 0 && ', '}
              <Link to="/tickets/$number" params={{ number: String(x.number) }}>
                #{x.number}
              </Link>
            </span>
          ))}
        </p>
      )}
    </>
  );
}

/** Merge this ticket into another, found by number or subject; confirmed in the dialog. */
function MergeButton({ ws, ticket: t }: { ws: string; ticket: Ticket }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState('');
  const [debounced, setDebounced] = useState('');
  const [target, setTarget] = useState<Ticket | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const searchId = useId();
  useEffect(() => {
    const x = setTimeout(() => setDebounced(q.trim().replace(/^#/, '')), 250);
    return () => clearTimeout(x);
  }, [q]);
  const found = useQuery({
    queryKey: ['merge-search', ws, debounced],
    queryFn: async () =>
      (await ok(api.GET('/v1/tickets', { params: { query: { q: debounced, limit: 8 } } }))).data.filter(
        (x) => x.id !== t.id,
      ),
    enabled: open && debounced.length > 0,
  });
  const merge = async () => {
    if (!target) return;
    setBusy(true);
    setError(null);
    try {
      await ok(api.POST('/v1/tickets/{id}/merge', { params: { path: { id: t.id } }, body: { into_id: target.id } }));
      void queryClient.invalidateQueries({ queryKey: keys.ticket(ws, t.number) });
      void queryClient.invalidateQueries({ queryKey: keys.tickets(ws) });
      void queryClient.invalidateQueries({ queryKey: keys.counts(ws) });
      setOpen(false);
      void navigate({ to: '/tickets/$number', params: { number: String(target.number) } });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        setTarget(null);
        setError(null);
        setQ('');
      }}
    >
      <Dialog.Trigger className="button merge-trigger">Merge into another ticket…</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog merge-dialog">
          <Dialog.Title>Merge #{t.number} into another ticket</Dialog.Title>
          <Dialog.Description className="hint">
            Its messages move to the ticket you choose and #{t.number} is closed. This cannot be undone.
          </Dialog.Description>
          <div className="field">
            <label htmlFor={searchId}>Ticket number or subject</label>
            <input id={searchId} type="search" value={q} maxLength={200} onChange={(e) => setQ(e.target.value)} />
          </div>
          {found.error ? (
            <p className="error" role="alert">
              Could not search: {errorText(found.error)}
            </p>
          ) : found.data && found.data.length === 0 ? (
            <p className="hint">No other ticket matches.</p>
          ) : (
            found.data && (
              <fieldset className="merge-results">
                <legend className="visually-hidden">Tickets found</legend>
                {found.data.map((x) => (
                  <label key={x.id}>
                    <input type="radio" name="merge-into" checked={target?.id === x.id} onChange={() => setTarget(x)} />
                    #{x.number} {x.subject}
                  </label>
                ))}
              </fieldset>
            )
          )}
          {error ? (
            <p className="error" role="alert">
              Could not merge: {errorText(error)}
            </p>
          ) : null}
          <div className="dialog-actions">
            <Dialog.Close className="button">Cancel</Dialog.Close>
            <button type="button" className="button danger" disabled={!target || busy} onClick={() => void merge()}>
              {target ? `Merge #${t.number} into #${target.number}` : 'Merge'}
            </button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
