// The pieces of a run as the panel shows them: a record it names (tickets linked to their page,
// articles to the editor, views to the inbox, automations to their builder), a step with its label
// and status, and an approval's card with its preview and Approve / Deny.
import { Link } from '@tanstack/react-router';
import type { Approval, Change, Ref, Step, StepStatus } from '../../data/assistant';
import { useMembers } from '../../data/members';
import { useWorkspace } from '../../lib/context';
import { STATUS_LABEL } from '../../lib/format';
import { Markdown } from './markdown';

export function RefLink({ r }: { r: Ref }) {
  switch (r.kind) {
    case 'ticket':
      return r.number === undefined ? (
        <span>{r.label}</span>
      ) : (
        <Link to="/tickets/$number" params={{ number: String(r.number) }}>
          #{r.number} {r.label}
        </Link>
      );
    case 'article':
      return (
        <Link to="/knowledge-base/$" params={{ _splat: `articles/${r.id}` }}>
          Article: {r.label}
        </Link>
      );
    case 'view':
      return (
        <Link to="/inbox" search={{ view: `view:${r.id}` }}>
          View: {r.label}
        </Link>
      );
    case 'automation':
      return (
        <Link to="/settings/$" params={{ _splat: `automations/${r.id}` }}>
          Automation: {r.label}
        </Link>
      );
    default:
      return <span>Contact: {r.label}</span>;
  }
}

const STATUS: Record<StepStatus, string> = {
  running: 'Working…',
  done: 'Done',
  error: 'Failed',
  awaiting_approval: 'Waiting for your approval',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired',
};

export function StepItem({ step }: { step: Step }) {
  return (
    <li className={`assistant-step step-${step.status}`}>
      <span className="step-label">{step.label}</span>{' '}
      <span className="step-status">{STATUS[step.status] ?? step.status}</span>
      {step.summary && <span className="step-summary"> — {step.summary}</span>}
      {step.refs.length > 0 && (
        <ul className="step-refs" aria-label={`Found by “${step.label}”`}>
          {step.refs.map((r) => (
            <li key={`${r.kind}:${r.id}`}>
              <RefLink r={r} />
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

export function Steps({ steps }: { steps: Step[] }) {
  if (steps.length === 0) return null;
  return (
    <ul className="assistant-steps" aria-label="Steps">
      {steps.map((s) => (
        <StepItem key={s.id} step={s} />
      ))}
    </ul>
  );
}

const FIELD_NAMES: Record<string, string> = {
  status: 'Status',
  priority: 'Priority',
  severity: 'Severity',
  assignee_id: 'Assignee',
  team_id: 'Team',
  add_labels: 'Labels added',
  remove_labels: 'Labels removed',
  add_tags: 'Labels added',
  remove_tags: 'Labels removed',
  tags: 'Labels',
};

const WORDS: Record<string, string> = { on_hold: 'on hold' };

/** A change's value in words: none, a member's name for a user id, lists joined. */
function useValueText(): (field: string, v: unknown) => string {
  const ws = useWorkspace();
  const members = useMembers(ws);
  return (field, v) => {
    if (v === null || v === undefined || v === '') return 'none';
    if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map((x) => String(x)).join(', ');
    if (typeof v === 'string') {
      if (field === 'assignee_id') {
        const m = (members.data ?? []).find((x) => x.user.id === v);
        if (m) return m.user.name;
      }
      if (field === 'status' && v in STATUS_LABEL) return STATUS_LABEL[v as keyof typeof STATUS_LABEL];
      return WORDS[v] ?? v;
    }
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  };
}

function Changes({ changes }: { changes: Change[] }) {
  const text = useValueText();
  if (changes.length === 0) return null;
  return (
    <table className="approval-changes">
      <caption className="visually-hidden">Changes</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">From</th>
          <th scope="col">To</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a preview's changes are fixed; a field may repeat
          <tr key={`${c.field}-${i}`}>
            <th scope="row">{FIELD_NAMES[c.field] ?? c.field}</th>
            <td>{text(c.field, c.from)}</td>
            <td>{text(c.field, c.to)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });

/**
 * A write the assistant asks to make, as the person must see it before saying yes: what, to which
 * records (linked), each field from → to, the reply's text, whether it reaches the customer, how
 * many records a bulk change touches.
 */
export function ApprovalCard({
  approval,
  busy,
  disabled = false,
  onDecide,
}: {
  approval: Approval;
  busy: 'approve' | 'deny' | null;
  /** Shown while its run is still ending: decided once it has. */
  disabled?: boolean;
  onDecide(decision: 'approve' | 'deny'): void;
}) {
  const p = approval.preview;
  const titleId = `approval-${approval.action_id}`;
  const ticketsOnly = p.targets.every((t) => t.kind === 'ticket');
  return (
    <section className={`approval${p.external ? ' approval-external' : ''}`} aria-labelledby={titleId}>
      <h4 id={titleId}>{p.title}</h4>
      <p>{p.summary}</p>
      {p.external && (
        <p className="approval-warning">
          <strong>This reaches the customer.</strong>
        </p>
      )}
      {p.total !== undefined && (
        <p>
          {p.total} {ticketsOnly ? (p.total === 1 ? 'ticket' : 'tickets') : 'records'} in all
          {p.total > p.targets.length ? ` (the first ${p.targets.length} listed)` : ''}.
        </p>
      )}
      {p.targets.length > 0 && (
        <ul className="approval-targets" aria-label="What it changes">
          {p.targets.map((t) => (
            <li key={`${t.kind}:${t.id}`}>
              <RefLink r={t} />
            </li>
          ))}
        </ul>
      )}
      <Changes changes={p.changes} />
      {p.body !== undefined && (
        <figure className="approval-body">
          <figcaption>{p.external ? 'The reply' : 'The note'}</figcaption>
          <blockquote>
            <Markdown text={p.body} />
          </blockquote>
        </figure>
      )}
      <p className="hint">
        Nothing happens until you approve. Approve by {time.format(new Date(approval.expires_at))}.
      </p>
      <div className="approval-actions">
        <button
          type="button"
          className="primary"
          disabled={disabled || busy !== null}
          onClick={() => onDecide('approve')}
        >
          {busy === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        <button type="button" disabled={disabled || busy !== null} onClick={() => onDecide('deny')}>
          {busy === 'deny' ? 'Denying…' : 'Deny'}
        </button>
      </div>
    </section>
  );
}
