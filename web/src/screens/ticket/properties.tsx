// A ticket's properties, each changed with PATCH /v1/tickets/{id} at once and shown at once
// (data/tickets.ts useUpdateTicket): assignee and team, priority and severity (here), labels
// (labels.tsx), custom fields (field-editor.tsx). Also the SLA clocks (sla-clocks.tsx), the CSAT
// rating, the ticket this one follows up, and merging it into another (merge.tsx).
import { Link } from '@tanstack/react-router';
import { type ReactNode, useId, useState } from 'react';
import { useCustomFields } from '../../data/custom-fields';
import { useMembers } from '../../data/members';
import { useTeams } from '../../data/teams';
import { type TicketPatch, useFollowUps, useUpdateTicket } from '../../data/tickets';
import { errorText, type Schemas, type Ticket } from '../../lib/api';
import { ratingText } from '../../ui/words';
import { FieldEditor } from './field-editor';
import { Labels } from './labels';
import { MergeButton } from './merge';
import { SlaClocks } from './sla-clocks';

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

/**
 * PATCH the ticket (data/tickets.ts: shown at once, taken back if refused). The error is kept for
 * the property named, shown beside it.
 */
function useTicketPatch(ws: string, t: Ticket) {
  const update = useUpdateTicket(ws);
  const [error, setError] = useState<{ what: string; err: unknown } | null>(null);
  const patch = async (what: string, body: TicketPatch, shown?: Partial<Ticket>): Promise<boolean> => {
    setError(null);
    try {
      await update.mutateAsync({ ticket: t, body, shown });
      return true;
    } catch (err) {
      setError({ what, err });
      return false;
    }
  };
  return { patch, error };
}

type PatchFn = ReturnType<typeof useTicketPatch>['patch'];

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
  const fields = (useCustomFields(ws).data ?? []).filter((f) => f.entity === 'ticket');
  const id = useId();
  return (
    <section className="side-section props" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Details</h2>
      {readOnly && <p className="hint">Only agents and admins can change a ticket.</p>}
      <Assignment ws={ws} t={t} members={members} readOnly={readOnly} patch={patch} />
      <Urgency t={t} readOnly={readOnly} patch={patch} />
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
              onSave={(v) => patch(`field:${f.key}`, { fields: { [f.key]: v } as TicketPatch['fields'] })}
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

/** Who has the ticket: its assignee (agents and admins) and its team. */
function Assignment({
  ws,
  t,
  members,
  readOnly,
  patch,
}: {
  ws: string;
  t: Ticket;
  members: Schemas['Member'][];
  readOnly: boolean;
  patch: PatchFn;
}) {
  const teams = useTeams(ws).data ?? [];
  const id = useId();
  const assign = (userId: string) => {
    const m = members.find((x) => x.user.id === userId)?.user;
    const shown = m ? { id: m.id, name: m.name, email: m.email, avatar_url: m.avatar_url } : null;
    void patch('assignee', { assignee_id: userId || null }, { assignee: userId ? (shown ?? t.assignee) : null });
  };
  return (
    <>
      <Row label="Assignee" htmlFor={`${id}-assignee`}>
        <select
          id={`${id}-assignee`}
          value={t.assignee?.id ?? ''}
          disabled={readOnly}
          onChange={(e) => assign(e.target.value)}
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
          onChange={(e) => {
            const team_id = e.target.value || null;
            void patch('team', { team_id }, { team_id });
          }}
        >
          <option value="">No team</option>
          {teams.map((team) => (
            <option key={team.id} value={team.id}>
              {team.name}
            </option>
          ))}
        </select>
      </Row>
    </>
  );
}

/** How urgent and how severe. */
function Urgency({ t, readOnly, patch }: { t: Ticket; readOnly: boolean; patch: PatchFn }) {
  const id = useId();
  return (
    <>
      <Row label="Priority" htmlFor={`${id}-priority`}>
        <select
          id={`${id}-priority`}
          value={t.priority}
          disabled={readOnly}
          onChange={(e) => {
            const priority = e.target.value as Ticket['priority'];
            void patch('priority', { priority }, { priority });
          }}
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
          onChange={(e) => {
            const severity = (e.target.value || null) as Ticket['severity'];
            void patch('severity', { severity }, { severity });
          }}
        >
          <option value="">None</option>
          {SEVERITIES.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
      </Row>
    </>
  );
}

/**
 * The follow-up links both ways: the ticket this one follows (custom.follow_up_of) and, for a
 * closed ticket, the ones its customer's later messages opened (GET /v1/tickets?follow_up_of=).
 */
function FollowUp({ ws, t }: { ws: string; t: Ticket }) {
  const of = (t.custom as { follow_up_of?: { id?: string; number?: number } } | null)?.follow_up_of;
  const later = useFollowUps(ws, t);
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
