// Teams: groups of agents (GET/POST /v1/teams, PATCH/DELETE /v1/teams/{id}): create, rename,
// private or public (a private team's tickets are seen only by its members and admins), add and
// remove members (member_ids replaces the whole list), delete. Admins change them; others read.
import { useEffect, useId, useState } from 'react';
import { useMembers } from '../../data/members';
import { useCreateTeam, useDeleteTeam, useTeams, useUpdateTeam } from '../../data/teams';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { isAdmin, useRole } from '../../lib/role';
import { Avatar } from '../../ui/avatar';
import { CheckboxField, ConfirmButton, fieldError, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { Done, useAction } from '../../ui/people';
import type { SectionProps } from './section';
import './people.css';

type MemberRow = Schemas['Member'];

type Team = Schemas['Team'];

export default function Teams(_: SectionProps) {
  const role = useRole();
  const admin = isAdmin(role);
  const teams = useTeams(useWorkspace());
  const members = useMembers(useWorkspace());
  return (
    <div className="people">
      <PageTitle>Teams</PageTitle>
      {!admin && role && <ReadOnlyNote what="change teams" />}
      {admin && <NewTeam />}
      {teams.isPending || members.isPending ? (
        <Loading />
      ) : teams.error || members.error ? (
        <ErrorNote error={teams.error ?? members.error} what="Could not load the teams" />
      ) : teams.data.length === 0 ? (
        <p className="hint">No teams yet.</p>
      ) : (
        teams.data.map((t) => <TeamCard key={t.id} team={t} members={members.data} admin={admin} />)
      )}
    </div>
  );
}

function NewTeam() {
  const create = useCreateTeam(useWorkspace());
  const [name, setName] = useState('');
  const [priv, setPriv] = useState(false);
  const action = useAction();
  return (
    <section className="card" aria-labelledby="teams-new">
      <h2 id="teams-new">New team</h2>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await create.mutateAsync({ name: name.trim(), private: priv });
            setName('');
            setPriv(false);
            return 'Team created.';
          }, e)
        }
      >
        <TextField
          label="Team name"
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fieldError(action.error, 'name')}
        />
        <CheckboxField
          label="Private"
          hint="A private team's tickets are seen only by its members, admins and owners."
          checked={priv}
          onChange={(e) => setPriv(e.target.checked)}
        />
        <ErrorNote error={fieldError(action.error, 'name') ? null : action.error} what="Could not create the team" />
        <div className="row">
          <button type="submit" className="primary" disabled={action.busy || !name.trim()}>
            Create team
          </button>
          <Done text={action.done} />
        </div>
      </form>
    </section>
  );
}

function TeamCard({ team, members, admin }: { team: Team; members: MemberRow[]; admin: boolean }) {
  const ws = useWorkspace();
  const update = useUpdateTeam(ws);
  // Private at once on screen (the answer follows); back to what the server says on failure. The
  // box keeps its own state: a list refetched meanwhile (a live event) cannot flip it back.
  const [priv, setPriv] = useState(team.private);
  useEffect(() => setPriv(team.private), [team.private]);
  const remove = useDeleteTeam(ws);
  const [name, setName] = useState(team.name);
  const [adding, setAdding] = useState('');
  const action = useAction();
  const headingId = useId();
  const addId = useId();
  const byId = new Map(members.map((m) => [m.user.id, m]));
  const inTeam = team.member_ids.map((id) => byId.get(id)).filter((m): m is MemberRow => Boolean(m));
  const outside = members.filter((m) => !team.member_ids.includes(m.user.id));
  const patch = (body: { name?: string; private?: boolean; member_ids?: string[] }, said: string) =>
    action.run(async () => {
      await update.mutateAsync({ id: team.id, body });
      return said;
    });
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {team.name}
        {team.private ? ' (private)' : ''}
      </h2>
      {admin && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void patch({ name: name.trim() }, 'Renamed.');
          }}
        >
          <TextField label="Name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit" disabled={action.busy || !name.trim() || name.trim() === team.name}>
            Rename
          </button>
        </form>
      )}
      {admin ? (
        <CheckboxField
          label="Private"
          hint="Only its members, admins and owners see its tickets."
          checked={priv}
          disabled={action.busy}
          onChange={(e) => {
            const on = e.target.checked;
            setPriv(on);
            void patch({ private: on }, on ? 'Now private.' : 'Now public.').then((saved) => {
              if (!saved) setPriv(team.private);
            });
          }}
        />
      ) : (
        <p className="hint">{team.private ? 'Private: only its members and admins see its tickets.' : 'Public.'}</p>
      )}
      <h3 className="field-label">Members ({inTeam.length})</h3>
      {inTeam.length === 0 ? (
        <p className="hint">Nobody yet.</p>
      ) : (
        <ul className="members-list" aria-label={`Members of ${team.name}`}>
          {inTeam.map((m) => (
            <li key={m.user.id}>
              <span className="person">
                <Avatar url={m.user.avatar_url} name={m.user.name} size={24} />
                <span>{m.user.name}</span>
              </span>
              {admin && (
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    void patch(
                      { member_ids: team.member_ids.filter((id) => id !== m.user.id) },
                      `${m.user.name} left the team.`,
                    )
                  }
                >
                  Remove
                  <span className="visually-hidden">
                    {' '}
                    {m.user.name} from {team.name}
                  </span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {admin && outside.length > 0 && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            const who = byId.get(adding);
            if (who)
              void patch({ member_ids: [...team.member_ids, adding] }, `${who.user.name} joined the team.`).then(() =>
                setAdding(''),
              );
          }}
        >
          <div className="field">
            <label htmlFor={addId}>Add a member</label>
            <select id={addId} value={adding} onChange={(e) => setAdding(e.target.value)}>
              <option value="">Choose a member…</option>
              {outside.map((m) => (
                <option key={m.user.id} value={m.user.id}>
                  {m.user.name}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" disabled={!adding || action.busy}>
            Add<span className="visually-hidden"> to {team.name}</span>
          </button>
        </form>
      )}
      <ErrorNote error={action.error} what="Could not change the team" />
      <Done text={action.done} />
      {admin && (
        <ConfirmButton
          title={`Delete the team ${team.name}?`}
          description="Its tickets stay, without a team. Rules and views that name it stop matching."
          confirm="Delete team"
          onConfirm={() => remove.mutateAsync(team.id)}
        >
          Delete team<span className="visually-hidden"> {team.name}</span>
        </ConfirmButton>
      )}
    </section>
  );
}
