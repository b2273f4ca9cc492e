// Assignment: who gets new tickets (GET/PATCH /v1/assignment: the mode, per-mailbox and per-team
// rules, auto-away) and who is available (PATCH /v1/members/{user_id}/availability: your own for
// everyone; others' and the cap of open tickets for admins).
import { useId, useState } from 'react';
import { useAssignment, useSaveAssignment } from '../../data/assignment';
import { useMailboxesPage } from '../../data/mailboxes';
import { useMembers, useSetAvailability } from '../../data/members';
import { useTeamsPage } from '../../data/teams';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { isAdmin, ROLE_LABEL, type Role, useRole } from '../../lib/role';
import { useSession } from '../../lib/session';
import { Avatar } from '../../ui/avatar';
import { SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { Done, useAction } from '../../ui/people';
import type { SectionProps } from './section';
import './people.css';

type MemberRow = Schemas['Member'];

type Mode = 'none' | 'round_robin' | 'load_balanced';
type Rule = { target_type: 'mailbox' | 'team'; target_id: string; mode: Mode };
/** A rule on screen, with a key of its own (rules have no id). */
type KeyedRule = Rule & { key: number };
let nextKey = 0;
const keyed = (r: Rule): KeyedRule => ({ ...r, key: ++nextKey });
type Availability = MemberRow['availability'];

const MODES: Array<[Mode, string]> = [
  ['none', 'Nobody: tickets wait unassigned'],
  ['round_robin', 'Round robin: available agents in turn'],
  ['load_balanced', 'Load balanced: the agent with the fewest open tickets'],
];
const AVAILABILITY: Array<[Availability, string]> = [
  ['online', 'Online'],
  ['away', 'Away'],
  ['offline', 'Offline'],
];

export default function Assignment(_: SectionProps) {
  const role = useRole();
  const admin = isAdmin(role);
  return (
    <div className="people">
      <PageTitle>Assignment</PageTitle>
      <MyAvailability />
      {!admin && role && <ReadOnlyNote what="change how tickets are assigned, or others' availability" />}
      <Settings admin={admin} />
      <Agents admin={admin} />
    </div>
  );
}

function MyAvailability() {
  const ws = useWorkspace();
  const members = useMembers(ws);
  const setAvailability = useSetAvailability(ws);
  const s = useSession();
  const me = members.data?.find((m) => s.status === 'signed_in' && m.user.id === s.user.id);
  const action = useAction();
  const id = useId();
  if (!me) return null;
  const online = me.availability === 'online';
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>Your availability</h2>
      <p>
        You are <strong>{AVAILABILITY.find(([a]) => a === me.presence)?.[1].toLowerCase()}</strong>
        {me.presence !== me.availability ? ' (away after a while without activity)' : ''}.{' '}
        {online ? 'New tickets can be assigned to you.' : 'New tickets are not assigned to you.'}
      </p>
      <div className="row">
        <button
          type="button"
          className={online ? '' : 'primary'}
          aria-pressed={online}
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              await setAvailability.mutateAsync({
                userId: 'me',
                body: { availability: online ? 'away' : 'online' },
              });
            })
          }
        >
          Available for new tickets
        </button>
        <ErrorNote error={action.error} what="Could not change your availability" />
      </div>
    </section>
  );
}

function Settings({ admin }: { admin: boolean }) {
  const ws = useWorkspace();
  const q = useAssignment(ws);
  if (q.isPending) return <Loading />;
  if (q.error) return <ErrorNote error={q.error} what="Could not load the assignment settings" />;
  return <SettingsForm initial={q.data as { mode: Mode; rules: Rule[]; auto_away_minutes: number }} admin={admin} />;
}

function SettingsForm({
  initial,
  admin,
}: {
  initial: { mode: Mode; rules: Rule[]; auto_away_minutes: number };
  admin: boolean;
}) {
  const ws = useWorkspace();
  const save = useSaveAssignment(ws);
  const [mode, setMode] = useState<Mode>(initial.mode);
  const [away, setAway] = useState(String(initial.auto_away_minutes));
  const [rules, setRules] = useState<KeyedRule[]>(() => initial.rules.map(keyed));
  const teams = useTeamsPage(ws);
  const mailboxes = useMailboxesPage(ws, admin);
  const targets: Array<[string, string]> = [
    ...(mailboxes.data?.data ?? []).map((m): [string, string] => [`mailbox:${m.id}`, `Mailbox: ${m.name}`]),
    ...(teams.data?.data ?? []).map((t): [string, string] => [`team:${t.id}`, `Team: ${t.name}`]),
  ];
  const action = useAction();
  return (
    <section className="card" aria-labelledby="assign-settings">
      <h2 id="assign-settings">Who gets new tickets</h2>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await save.mutateAsync({
              mode,
              auto_away_minutes: Number(away),
              rules: rules.map(({ key: _, ...r }) => r),
            });
            return 'Saved.';
          }, e)
        }
      >
        <fieldset disabled={!admin}>
          <SelectField
            label="Automatic assignment"
            hint="Only agents who are available (online) get tickets."
            value={mode}
            onChange={(e) => setMode(e.target.value as Mode)}
            options={MODES}
          />
          <TextField
            label="Auto-away after (minutes)"
            type="number"
            min={0}
            max={1440}
            hint="An agent with the app closed this long shows as away and gets no tickets. 0 turns it off; otherwise 10 to 1440."
            value={away}
            onChange={(e) => setAway(e.target.value)}
          />
          <fieldset>
            <legend>Rules for mailboxes and teams</legend>
            <p className="hint">
              The first rule matching a new ticket's mailbox or team decides, instead of the above.
            </p>
            {rules.length === 0 && <p className="hint">No rules.</p>}
            {rules.map((r, i) => (
              <div className="row" key={r.key}>
                <SelectField
                  label={`Rule ${i + 1}: for`}
                  value={`${r.target_type}:${r.target_id}`}
                  onChange={(e) => {
                    const [type, id] = e.target.value.split(':') as ['mailbox' | 'team', string];
                    setRules((all) => all.map((x, j) => (j === i ? { ...x, target_type: type, target_id: id } : x)));
                  }}
                  options={
                    targets.some(([v]) => v === `${r.target_type}:${r.target_id}`)
                      ? targets
                      : [[`${r.target_type}:${r.target_id}`, `${r.target_type} ${r.target_id.slice(0, 8)}`], ...targets]
                  }
                />
                <SelectField
                  label={`Rule ${i + 1}: assign by`}
                  value={r.mode}
                  onChange={(e) =>
                    setRules((all) => all.map((x, j) => (j === i ? { ...x, mode: e.target.value as Mode } : x)))
                  }
                  options={MODES}
                />
                {admin && (
                  <button type="button" onClick={() => setRules((all) => all.filter((_, j) => j !== i))}>
                    Remove rule {i + 1}
                  </button>
                )}
              </div>
            ))}
            {admin && targets.length > 0 && (
              <button
                type="button"
                onClick={() => {
                  const [type, id] = targets[0]![0].split(':') as ['mailbox' | 'team', string];
                  setRules((all) => [...all, keyed({ target_type: type, target_id: id, mode: 'round_robin' })]);
                }}
              >
                Add a rule
              </button>
            )}
            {admin && targets.length === 0 && (
              <p className="hint">Rules need a mailbox or a team: add one in their settings first.</p>
            )}
          </fieldset>
        </fieldset>
        <ErrorNote error={action.error} what="Could not save the assignment settings" />
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

function Agents({ admin }: { admin: boolean }) {
  const members = useMembers(useWorkspace());
  return (
    <section className="card" aria-labelledby="assign-agents">
      <h2 id="assign-agents">Agents</h2>
      {members.isPending ? (
        <Loading />
      ) : members.error ? (
        <ErrorNote error={members.error} what="Could not load the members" />
      ) : (
        <div>
          <table className="table stack-table">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Availability</th>
                <th scope="col">Open tickets</th>
                <th scope="col">Most open tickets</th>
              </tr>
            </thead>
            <tbody>
              {members.data
                .filter((m) => m.role !== 'viewer')
                .map((m) => (
                  <AgentRow key={m.user.id} m={m} admin={admin} />
                ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function AgentRow({ m, admin }: { m: MemberRow; admin: boolean }) {
  const setAvailability = useSetAvailability(useWorkspace());
  const [cap, setCap] = useState(m.max_open_tickets === null ? '' : String(m.max_open_tickets));
  const action = useAction();
  const save = (body: { availability?: Availability; max_open_tickets?: number | null }) =>
    action.run(async () => {
      await setAvailability.mutateAsync({ userId: m.user.id, body });
      return 'Saved.';
    });
  return (
    <tr>
      <td>
        <span className="person">
          <Avatar url={m.user.avatar_url} name={m.user.name} />
          <span>
            {m.user.name}
            <span className="hint">{ROLE_LABEL[m.role as Role]}</span>
          </span>
        </span>
      </td>
      <td data-label="Availability">
        {admin ? (
          <select
            aria-label={`Availability of ${m.user.name}`}
            value={m.availability}
            disabled={action.busy}
            onChange={(e) => void save({ availability: e.target.value as Availability })}
          >
            {AVAILABILITY.map(([v, t]) => (
              <option key={v} value={v}>
                {t}
              </option>
            ))}
          </select>
        ) : (
          AVAILABILITY.find(([a]) => a === m.presence)?.[1]
        )}
        {m.presence !== m.availability && <span className="hint">Away (inactive)</span>}
      </td>
      <td data-label="Open tickets">{m.open_tickets}</td>
      <td data-label="Most open tickets">
        {admin ? (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              void save({ max_open_tickets: cap.trim() ? Number(cap) : null });
            }}
          >
            <input
              type="number"
              min={1}
              max={1000}
              aria-label={`Most open tickets for ${m.user.name} (empty: no limit)`}
              placeholder="No limit"
              value={cap}
              onChange={(e) => setCap(e.target.value)}
              style={{ width: '6.5rem' }}
            />
            <button type="submit" disabled={action.busy}>
              Set<span className="visually-hidden"> the limit for {m.user.name}</span>
            </button>
          </form>
        ) : m.max_open_tickets === null ? (
          'No limit'
        ) : (
          m.max_open_tickets
        )}
        <ErrorNote error={action.error} />
        {action.done && (
          <span className="visually-hidden" role="status">
            {action.done}
          </span>
        )}
      </td>
    </tr>
  );
}
