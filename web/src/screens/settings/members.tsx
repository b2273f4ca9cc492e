// Members: who works here and their roles (GET /v1/members; PATCH and DELETE
// /v1/members/{user_id} for admins), inviting by email with a role (POST /v1/invitations: its
// answer's `url` is the accept link, shown to copy, since a mailer may not be set up), and the
// pending invitations (GET /v1/invitations, revoke with DELETE). Others see the list read-only.
import { useState } from 'react';
import { useInvitations, useInvite, useRevokeInvitation } from '../../data/invitations';
import { useChangeRole, useMembers, useRemoveMember } from '../../data/members';
import type { Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { ago, when } from '../../lib/format';
import { isAdmin, ROLE_LABEL, type Role, useRole } from '../../lib/role';
import { useSession } from '../../lib/session';
import { Avatar } from '../../ui/avatar';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { Done, useAction } from '../../ui/people';
import type { SectionProps } from './section';
import './people.css';

type MemberRow = Schemas['Member'];

type InviteRole = 'admin' | 'agent' | 'viewer';
const INVITE_ROLES: Array<[InviteRole, string]> = [
  ['agent', 'Agent: works on tickets'],
  ['admin', 'Admin: also changes settings and members'],
  ['viewer', 'Viewer: reads, changes nothing'],
];

export default function Members(_: SectionProps) {
  const role = useRole();
  const admin = isAdmin(role);
  // Accept links of the invitations made on this page (only the create answer carries them).
  const [links, setLinks] = useState<Record<string, string>>({});
  return (
    <div className="people">
      <PageTitle>Members</PageTitle>
      {!admin && role && <ReadOnlyNote what="change members and invitations" />}
      {admin && <InviteForm onLink={(id, url) => setLinks((l) => ({ ...l, [id]: url }))} />}
      <MemberList admin={admin} />
      {admin && <Invitations links={links} />}
    </div>
  );
}

function MemberList({ admin }: { admin: boolean }) {
  const members = useMembers(useWorkspace());
  const s = useSession();
  const me = s.status === 'signed_in' ? s.user.id : '';
  return (
    <section className="card" aria-labelledby="members-list">
      <h2 id="members-list">People{members.data ? ` (${members.data.length})` : ''}</h2>
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
                <th scope="col">Role</th>
                <th scope="col">Availability</th>
                {admin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {members.data.map((m) => (
                <MemberRowView key={m.user.id} m={m} admin={admin} self={m.user.id === me} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const AVAILABILITY: Record<MemberRow['presence'], string> = { online: 'Online', away: 'Away', offline: 'Offline' };

function MemberRowView({ m, admin, self }: { m: MemberRow; admin: boolean; self: boolean }) {
  const ws = useWorkspace();
  const changeRole = useChangeRole(ws);
  const remove = useRemoveMember(ws);
  const action = useAction();
  const editable = admin && !self && m.role !== 'owner';
  return (
    <tr>
      <td>
        <span className="person">
          <Avatar url={m.user.avatar_url} name={m.user.name} />
          <span>
            {m.user.name}
            {self ? ' (you)' : ''}
            <span className="hint">{m.user.email}</span>
          </span>
        </span>
      </td>
      <td data-label="Role">
        {editable ? (
          <>
            <select
              aria-label={`Role of ${m.user.name}`}
              value={m.role}
              disabled={action.busy}
              onChange={(e) =>
                void action.run(async () => {
                  const role = e.target.value as InviteRole;
                  await changeRole.mutateAsync({ userId: m.user.id, role });
                  return `${m.user.name} is now ${ROLE_LABEL[role].toLowerCase()}.`;
                })
              }
            >
              {(['admin', 'agent', 'viewer'] as const).map((r) => (
                <option key={r} value={r}>
                  {ROLE_LABEL[r]}
                </option>
              ))}
            </select>
            <Done text={action.done} />
          </>
        ) : (
          ROLE_LABEL[m.role as Role]
        )}
        <ErrorNote error={action.error} what="Could not change the role" />
      </td>
      <td data-label="Availability">
        {AVAILABILITY[m.presence]}
        {m.presence !== m.availability ? ` (set to ${AVAILABILITY[m.availability].toLowerCase()})` : ''}
        {m.last_seen_at && <span className="hint">Seen {ago(m.last_seen_at)}</span>}
      </td>
      {admin && (
        <td>
          {editable && (
            <ConfirmButton
              title={`Remove ${m.user.name}?`}
              description={`${m.user.name} loses access to this workspace and leaves its teams. The tickets they worked on stay. You can invite them again later.`}
              confirm="Remove member"
              onConfirm={() => remove.mutateAsync(m.user.id)}
            >
              Remove<span className="visually-hidden"> {m.user.name}</span>
            </ConfirmButton>
          )}
        </td>
      )}
    </tr>
  );
}

function InviteForm({ onLink }: { onLink(id: string, url: string): void }) {
  const invite = useInvite(useWorkspace());
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<InviteRole>('agent');
  const [made, setMade] = useState<{ email: string; url: string } | null>(null);
  const action = useAction();
  return (
    <section className="card" aria-labelledby="members-invite">
      <h2 id="members-invite">Invite someone</h2>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            setMade(null);
            const inv = await invite.mutateAsync({ email: email.trim(), role });
            onLink(inv.id, inv.url);
            setMade({ email: inv.email, url: inv.url });
            setEmail('');
          }, e)
        }
      >
        <TextField
          label="Email address"
          type="email"
          required
          maxLength={254}
          autoComplete="off"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fieldError(action.error, 'email')}
        />
        <SelectField
          label="Role"
          value={role}
          onChange={(e) => setRole(e.target.value as InviteRole)}
          options={INVITE_ROLES}
        />
        <ErrorNote error={fieldError(action.error, 'email') ? null : action.error} what="Could not invite" />
        <button type="submit" className="primary" disabled={action.busy}>
          Send invitation
        </button>
      </form>
      {made && (
        <div role="status" className="invite-made">
          <p>
            Invitation sent to <strong>{made.email}</strong> (when the server can send mail). You can also send them
            this link:
          </p>
          <CopyLink url={made.url} label={`Invitation link for ${made.email}`} />
        </div>
      )}
    </section>
  );
}

function CopyLink({ url, label }: { url: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="row">
      <input className="link-box" readOnly value={url} aria-label={label} onFocus={(e) => e.target.select()} />
      <button
        type="button"
        onClick={() =>
          void navigator.clipboard
            ?.writeText(url)
            .then(() => setCopied(true))
            .catch(() => setCopied(false))
        }
      >
        {copied ? 'Copied' : 'Copy link'}
      </button>
    </div>
  );
}

function Invitations({ links }: { links: Record<string, string> }) {
  const ws = useWorkspace();
  const q = useInvitations(ws);
  const invite = useInvite(ws);
  const revoke = useRevokeInvitation(ws);
  const resend = useAction();
  const [newLinks, setNewLinks] = useState<Record<string, string>>({});
  const all = { ...links, ...newLinks };
  return (
    <section className="card" aria-labelledby="members-pending">
      <h2 id="members-pending">Pending invitations</h2>
      {q.isPending ? (
        <Loading />
      ) : q.error ? (
        <ErrorNote error={q.error} what="Could not load the invitations" />
      ) : q.data.data.length === 0 ? (
        <p className="hint">None. Invitations someone accepted, or that expired, leave this list.</p>
      ) : (
        <div>
          <table className="table stack-table">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {q.data.data.map((inv) => (
                <tr key={inv.id}>
                  <td>
                    {inv.email}
                    {inv.invited_by && <span className="hint">Invited by {inv.invited_by.name}</span>}
                  </td>
                  <td data-label="Role">{ROLE_LABEL[inv.role]}</td>
                  <td data-label="Expires">
                    <time dateTime={inv.expires_at} title={when(inv.expires_at)}>
                      {ago(inv.expires_at)}
                    </time>
                  </td>
                  <td>
                    <div className="actions">
                      {all[inv.id] ? (
                        <CopyLink url={all[inv.id]!} label={`Invitation link for ${inv.email}`} />
                      ) : (
                        <button
                          type="button"
                          disabled={resend.busy}
                          title="A new link (the old one stops working), sent again by mail"
                          onClick={() =>
                            void resend.run(async () => {
                              const made = await invite.mutateAsync({ email: inv.email, role: inv.role });
                              setNewLinks((l) => ({ ...l, [made.id]: made.url }));
                            })
                          }
                        >
                          New link<span className="visually-hidden"> for {inv.email}</span>
                        </button>
                      )}
                      <ConfirmButton
                        title={`Revoke the invitation for ${inv.email}?`}
                        description="Its link stops working. You can invite them again later."
                        confirm="Revoke invitation"
                        onConfirm={() => revoke.mutateAsync(inv.id)}
                      >
                        Revoke<span className="visually-hidden"> the invitation for {inv.email}</span>
                      </ConfirmButton>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={resend.error} what="Could not make a new link" />
      {q.data?.next_cursor && <p className="hint">Showing the 100 newest invitations.</p>}
    </section>
  );
}
