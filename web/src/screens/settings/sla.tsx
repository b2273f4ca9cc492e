// SLA policies (/v1/sla-policies): in evaluation order (the first enabled policy whose priority
// matches a new ticket applies); each with its first response, next response (optional) and
// resolution targets, counted in calendar time or in business hours, on or off. Create, edit,
// reorder, enable or disable, delete. Only admins read and change them (the API's rule), so others are told so.
import * as Switch from '@radix-ui/react-switch';
import { Link } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { useBusinessHours } from '../../data/business-hours';
import { keys } from '../../data/keys';
import {
  useDeleteSlaPolicy,
  useEnableSlaPolicy,
  useReorderSlaPolicies,
  useSaveSlaPolicy,
  useSlaPolicies,
} from '../../data/sla';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { useIsAdmin } from '../../lib/role';
import { CheckboxField, DeleteButton, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { check, duration, FormDialog, problem, useLiveRefresh } from './config-kit';
import type { SectionProps } from './section';

type Policy = Schemas['SlaPolicy'];
type Priority = NonNullable<Policy['priority']>;
const PRIORITY: Record<Priority, string> = { low: 'Low', normal: 'Normal', high: 'High', urgent: 'Urgent' };
const MAX_MINUTES = 525_600;

export default function Sla(_: SectionProps) {
  const admin = useIsAdmin();
  if (!admin) {
    return (
      <div className="config">
        <PageTitle>SLA policies</PageTitle>
        <ReadOnlyNote>
          Only admins can see and change SLA policies. Each ticket shows its own SLA clocks and whether they were
          breached.
        </ReadOnlyNote>
      </div>
    );
  }
  return <Policies />;
}

function Policies() {
  const ws = useWorkspace();
  const policies = useSlaPolicies(ws);
  const hours = useBusinessHours(ws);
  useLiveRefresh(['sla_policy.'], keys.slaPolicies(ws));
  const reorder = useReorderSlaPolicies(ws);
  const enable = useEnableSlaPolicy(ws);
  const remove = useDeleteSlaPolicy(ws);
  const [editing, setEditing] = useState<Policy | 'new' | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const all = policies.data?.data ?? [];

  /** Moves a policy one place: every policy whose position is not its index gets it. */
  const move = async (i: number, by: -1 | 1) => {
    const order = all.slice();
    const j = i + by;
    if (j < 0 || j >= order.length) return;
    [order[i], order[j]] = [order[j]!, order[i]!];
    setRowError(null);
    try {
      await reorder.mutateAsync(order);
    } catch (e) {
      setRowError(e);
    }
  };
  const setEnabled = async (p: Policy, enabled: boolean) => {
    setRowError(null);
    try {
      await enable.mutateAsync({ id: p.id, enabled });
    } catch (e) {
      setRowError(e);
    }
  };

  const bhOn = hours.data?.enabled ?? false;
  return (
    <div className="config">
      <PageTitle
        actions={
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            New SLA policy
          </button>
        }
      >
        SLA policies
      </PageTitle>
      <p className="hint">
        A new ticket gets the first enabled policy, from the top, whose priority matches (or that applies to any
        priority). A priority change picks the policy again. Targets: the first agent reply, the next agent reply after
        each customer message (optional), and the ticket solved.
      </p>
      {hours.data && !bhOn && all.some((p) => p.business_hours) && (
        <p className="note" role="note">
          Business hours are off, so policies set to count business hours count calendar time.{' '}
          <Link to="/settings/$" params={{ _splat: 'business-hours' }}>
            Set up business hours
          </Link>
        </p>
      )}
      <ErrorNote error={policies.error} what="Could not load the SLA policies" />
      <ErrorNote error={rowError} what="Could not change the policy" />
      {policies.isPending ? (
        <Loading />
      ) : all.length === 0 ? (
        <p className="empty">No SLA policies yet: tickets have no response or resolution targets.</p>
      ) : (
        <ol className="config-list" aria-label="SLA policies, in evaluation order">
          {all.map((p, i) => (
            <li key={p.id} className="config-row">
              <div className="grow">
                <strong>{p.name}</strong>{' '}
                <span className="badge">{p.priority ? `${PRIORITY[p.priority]} priority` : 'Any priority'}</span>{' '}
                {!p.enabled && <span className="badge">Off</span>}
                <p className="hint">
                  {[
                    `First response within ${duration(p.first_response_minutes)}`,
                    p.next_response_minutes === null ? '' : `next response within ${duration(p.next_response_minutes)}`,
                    `solved within ${duration(p.resolution_minutes)}`,
                    p.business_hours ? 'business hours' : 'calendar time',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </p>
              </div>
              <div className="actions">
                <EnabledSwitch policy={p} onChange={(on) => void setEnabled(p, on)} />
                <button
                  type="button"
                  className="button"
                  aria-label={`Move ${p.name} up`}
                  disabled={i === 0}
                  onClick={() => void move(i, -1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  className="button"
                  aria-label={`Move ${p.name} down`}
                  disabled={i === all.length - 1}
                  onClick={() => void move(i, 1)}
                >
                  ↓
                </button>
                <button type="button" className="button" aria-label={`Edit ${p.name}`} onClick={() => setEditing(p)}>
                  Edit
                </button>
                <DeleteButton
                  name={p.name}
                  title={`Delete the SLA policy “${p.name}”?`}
                  description="New tickets no longer get it; tickets that already have its clocks keep their due dates."
                  confirm="Delete policy"
                  onConfirm={() => remove.mutateAsync(p.id)}
                />
              </div>
            </li>
          ))}
        </ol>
      )}
      {editing !== null && (
        <PolicyDialog
          policy={editing === 'new' ? null : editing}
          businessHoursOn={bhOn}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}

function EnabledSwitch({ policy, onChange }: { policy: Policy; onChange(on: boolean): void }) {
  const id = useId();
  return (
    <span className="switch-line">
      <Switch.Root id={id} className="switch-root" checked={policy.enabled} onCheckedChange={onChange}>
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      <label htmlFor={id}>
        On<span className="visually-hidden">: {policy.name}</span>
      </label>
    </span>
  );
}

type Unit = 'minutes' | 'hours' | 'days';
const UNIT_MINUTES: Record<Unit, number> = { minutes: 1, hours: 60, days: 1440 };
function split(minutes: number): { amount: string; unit: Unit } {
  if (minutes % 1440 === 0) return { amount: String(minutes / 1440), unit: 'days' };
  if (minutes % 60 === 0) return { amount: String(minutes / 60), unit: 'hours' };
  return { amount: String(minutes), unit: 'minutes' };
}

/** A target: an amount and its unit; problem() names it after the API's field. */
function Target({
  label,
  value,
  onChange,
  error,
  hint,
}: {
  label: string;
  value: { amount: string; unit: Unit };
  onChange(v: { amount: string; unit: Unit }): void;
  error?: string;
  hint?: string;
}) {
  return (
    <div className="inline-fields">
      <TextField
        label={label}
        type="number"
        min={1}
        inputMode="numeric"
        value={value.amount}
        onChange={(e) => onChange({ ...value, amount: e.target.value })}
        error={error}
        hint={hint}
      />
      <SelectField
        label={`${label}: unit`}
        value={value.unit}
        onChange={(e) => onChange({ ...value, unit: e.target.value as Unit })}
        options={[
          ['minutes', 'Minutes'],
          ['hours', 'Hours'],
          ['days', 'Days'],
        ]}
      />
    </div>
  );
}

const toMinutes = (v: { amount: string; unit: Unit }) => Number(v.amount) * UNIT_MINUTES[v.unit];
function targetProblem(v: { amount: string; unit: Unit }): string | undefined {
  const m = toMinutes(v);
  if (v.amount.trim() === '' || !Number.isFinite(m)) return 'Give a time.';
  if (!Number.isInteger(m) || m < 1) return 'At least one whole minute.';
  if (m > MAX_MINUTES) return 'At most 365 days.';
  return undefined;
}

/** The optional target: an empty amount is none (null). */
const optionalMinutes = (v: { amount: string; unit: Unit }) => (v.amount.trim() === '' ? null : toMinutes(v));

function PolicyDialog({
  policy,
  businessHoursOn,
  onClose,
}: {
  policy: Policy | null;
  businessHoursOn: boolean;
  onClose(): void;
}) {
  const savePolicy = useSaveSlaPolicy(useWorkspace());
  const [name, setName] = useState(policy?.name ?? '');
  const [priority, setPriority] = useState<Priority | ''>(policy?.priority ?? '');
  const [first, setFirst] = useState(
    policy ? split(policy.first_response_minutes) : { amount: '1', unit: 'hours' as Unit },
  );
  const [nextResponse, setNextResponse] = useState(
    policy?.next_response_minutes ? split(policy.next_response_minutes) : { amount: '', unit: 'hours' as Unit },
  );
  const [resolution, setResolution] = useState(
    policy ? split(policy.resolution_minutes) : { amount: '1', unit: 'days' as Unit },
  );
  const [businessHours, setBusinessHours] = useState(policy?.business_hours ?? businessHoursOn);
  const [enabled, setEnabled] = useState(policy?.enabled ?? true);
  const error = useState<unknown>(null);
  const err = error[0];
  const save = async () => {
    const n = name.trim();
    check({
      name: !n ? 'Give the policy a name.' : n.length > 100 ? 'At most 100 characters.' : undefined,
      first_response_minutes: targetProblem(first),
      next_response_minutes: nextResponse.amount.trim() === '' ? undefined : targetProblem(nextResponse),
      resolution_minutes: targetProblem(resolution),
    });
    const body = {
      name: n,
      priority: priority || null,
      first_response_minutes: toMinutes(first),
      next_response_minutes: optionalMinutes(nextResponse),
      resolution_minutes: toMinutes(resolution),
      business_hours: businessHours,
      enabled,
    };
    await savePolicy.mutateAsync({ id: policy?.id ?? null, body });
  };
  return (
    <FormDialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={policy ? `Edit the SLA policy “${policy.name}”` : 'New SLA policy'}
      description={policy ? undefined : 'It is added at the end of the list; move it up to take precedence.'}
      submit={policy ? 'Save policy' : 'Create policy'}
      onSubmit={save}
      fields={[
        'name',
        'priority',
        'first_response_minutes',
        'next_response_minutes',
        'resolution_minutes',
        'business_hours',
        'enabled',
      ]}
      error={error}
    >
      <TextField
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={problem(err, 'name')}
        autoComplete="off"
      />
      <SelectField
        label="For tickets of priority"
        value={priority}
        onChange={(e) => setPriority(e.target.value as Priority | '')}
        options={[['', 'Any priority'], ...(Object.entries(PRIORITY) as Array<[string, string]>)]}
        error={problem(err, 'priority')}
      />
      <Target
        label="First response within"
        value={first}
        onChange={setFirst}
        error={problem(err, 'first_response_minutes')}
      />
      <Target
        label="Next response within"
        value={nextResponse}
        onChange={setNextResponse}
        error={problem(err, 'next_response_minutes')}
        hint="After each customer message on an answered ticket, until the next agent reply. Leave empty for none."
      />
      <Target
        label="Solved within"
        value={resolution}
        onChange={setResolution}
        error={problem(err, 'resolution_minutes')}
      />
      <CheckboxField
        label="Count business hours only"
        hint={
          businessHoursOn
            ? 'Only the open hours of the business hours count; otherwise every minute does.'
            : 'Business hours are off: until they are set up and on, every minute counts.'
        }
        checked={businessHours}
        onChange={(e) => setBusinessHours(e.target.checked)}
      />
      <CheckboxField
        label="Enabled"
        hint="A disabled policy never applies."
        checked={enabled}
        onChange={(e) => setEnabled(e.target.checked)}
      />
    </FormDialog>
  );
}
