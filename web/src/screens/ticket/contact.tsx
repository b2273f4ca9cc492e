// The customer beside the ticket: the contact (picture, email, phone, labels, custom fields,
// notes), their company (picture, domain, custom fields), and their other tickets as links.
// Kept current by contact.updated and company.updated (lib/queries.ts).
import { Link } from '@tanstack/react-router';
import { useId } from 'react';
import { useCompany } from '../../data/companies';
import { useContact, useContactTickets } from '../../data/contacts';
import { useCustomFields } from '../../data/custom-fields';
import { useMembers } from '../../data/members';
import { errorText, type Schemas, type Ticket } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { STATUS_LABEL } from '../../lib/format';
import { Avatar } from '../../ui/avatar';
import { contactName } from '../../ui/words';

type Field = Schemas['CustomField'];

function showValue(f: Field, v: unknown, members: Schemas['Member'][]): string {
  if (v === undefined || v === null || v === '') return '';
  switch (f.type) {
    case 'checkbox':
      return v ? 'Yes' : 'No';
    case 'select':
      return f.options.find((o) => o.id === v)?.label ?? String(v);
    case 'multi_select':
      return (Array.isArray(v) ? v : []).map((x) => f.options.find((o) => o.id === x)?.label ?? String(x)).join(', ');
    case 'user':
      return members.find((m) => m.user.id === v)?.user.name ?? String(v);
    default:
      return String(v);
  }
}

function FieldList({ fields, values }: { fields: Field[]; values: Record<string, unknown> }) {
  const ws = useWorkspace();
  const members = useMembers(ws).data ?? [];
  const shown = fields.map((f) => [f, showValue(f, values[f.key], members)] as const).filter(([, v]) => v);
  if (shown.length === 0) return null;
  return (
    <dl className="facts">
      {shown.map(([f, v]) => (
        <div key={f.id}>
          <dt>{f.name}</dt>
          <dd>
            {f.type === 'url' ? (
              <a href={v} target="_blank" rel="noreferrer">
                {v}
              </a>
            ) : (
              v
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function ContactPanel({ ws, contactId, ticket }: { ws: string; contactId: string; ticket: Ticket }) {
  const id = useId();
  const contact = useContact(ws, contactId);
  const c = contact.data;
  const companyId = c?.company?.id ?? null;
  const company = useCompany(ws, companyId);
  const others = useContactTickets(ws, contactId, ticket.updated_at);
  const fields = useCustomFields(ws).data ?? [];
  const co = company.data;
  return (
    <section className="side-section contact-panel" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Customer</h2>
      {contact.error ? (
        <p className="error" role="alert">
          Could not load the contact: {errorText(contact.error)}
        </p>
      ) : !c ? (
        <p className="loading">Loading…</p>
      ) : (
        <>
          <div className="person">
            <Avatar url={c.avatar_url} name={c.name ?? c.email} size={64} />
            <div>
              {/* A claimed address is not a name: it shows below, marked Unverified. */}
              <p className="person-name">{contactName(c)}</p>
              {c.email ? (
                <p>
                  <a href={`mailto:${c.email}`}>{c.email}</a>
                </p>
              ) : c.unverified_email ? (
                // An address a chat visitor typed: nobody proved it is theirs (docs/widget.md).
                <p>
                  {c.unverified_email}{' '}
                  <span className="label unverified" title="Typed in the chat widget: nobody proved it is theirs">
                    Unverified
                  </span>
                </p>
              ) : null}
              {c.phone && <p>{c.phone}</p>}
              {c.blocked && <p className="error">Blocked</p>}
            </div>
          </div>
          {c.tags.length > 0 && (
            <ul className="labels" aria-label="Contact labels">
              {c.tags.map((tag) => (
                <li key={tag.id} className={`label label-${tag.color}`}>
                  {tag.name}
                </li>
              ))}
            </ul>
          )}
          <FieldList
            fields={fields.filter((f) => f.entity === 'contact')}
            values={c.fields as Record<string, unknown>}
          />
          {c.notes && <p className="notes">{c.notes}</p>}
        </>
      )}
      {companyId && (
        <div className="company">
          <h3>Company</h3>
          {company.error ? (
            <p className="error" role="alert">
              Could not load the company: {errorText(company.error)}
            </p>
          ) : !co ? (
            <p className="loading">Loading…</p>
          ) : (
            <>
              <div className="person">
                <Avatar url={co.avatar_url} name={co.name} size={32} square />
                <div>
                  <p className="person-name">{co.name}</p>
                  {co.domain && <p className="hint">{co.domain}</p>}
                </div>
              </div>
              <FieldList
                fields={fields.filter((f) => f.entity === 'company')}
                values={co.fields as Record<string, unknown>}
              />
              {co.notes && <p className="notes">{co.notes}</p>}
            </>
          )}
        </div>
      )}
      <div className="other-tickets">
        <h3>Their other tickets</h3>
        {others.error ? (
          <p className="error" role="alert">
            Could not load their tickets: {errorText(others.error)}
          </p>
        ) : !others.data ? (
          <p className="loading">Loading…</p>
        ) : others.data.filter((x) => x.id !== ticket.id).length === 0 ? (
          <p className="hint">None.</p>
        ) : (
          <ul>
            {others.data
              .filter((x) => x.id !== ticket.id)
              .map((x) => (
                <li key={x.id}>
                  <Link to="/tickets/$number" params={{ number: String(x.number) }}>
                    #{x.number} {x.subject}
                  </Link>{' '}
                  <span className={`status status-${x.status}`}>{STATUS_LABEL[x.status]}</span>
                </li>
              ))}
          </ul>
        )}
      </div>
    </section>
  );
}
