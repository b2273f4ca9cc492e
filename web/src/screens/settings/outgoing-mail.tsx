// Outgoing mail (owners and admins): whether it is set up (GET /v1/mail/status) and how to set it
// up, and the outbox: every mail the help desk kept instead of sending while SMTP_URL is unset
// (GET /v1/mail/outbox, newest first, fetched again every few seconds while open), like the mail
// catchers developers use. /settings/outgoing-mail/<id> opens one: its headers, links (absolute
// and clickable: a portal sign-in link signs in from here), message and files.
import './integrations.css';
import { Link } from '@tanstack/react-router';
import type { paths } from '../../api.gen';
import { useKeptMail, useMailStatus, useOutbox } from '../../data/mail';
import { useTicketById } from '../../data/tickets';
import { useWorkspace } from '../../lib/context';
import { bytes, when } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';
import { Loaded, MoreButton, ScrollTable } from './shared';

type Kept = paths['/v1/mail/outbox']['get']['responses'][200]['content']['application/json']['data'][number];

const KIND: Record<Kept['kind'], string> = {
  reply: 'Reply',
  auto_reply: 'Auto-reply',
  csat_request: 'Rating request',
  portal_confirmation: 'Request received',
  portal_sign_in: 'Portal sign-in link',
  invitation: 'Invitation',
  notice: 'Notice to admins',
};

export default function OutgoingMail({ path }: SectionProps) {
  const [id] = path;
  const admin = useIsAdmin();
  if (!admin) {
    return (
      <div className="integrations">
        <PageTitle>Outgoing mail</PageTitle>
        <ReadOnlyNote what="read the outgoing mail" />
      </div>
    );
  }
  return id ? <KeptMail key={id} id={id} /> : <Outbox />;
}

function Status() {
  const ws = useWorkspace();
  const status = useMailStatus(ws);
  if (status.error) return <ErrorNote error={status.error} what="Could not tell whether mail is set up" />;
  if (!status.data) return <Loading />;
  const off = status.data.system_mailer === 'outbox';
  return (
    <section className="mail-setup" aria-labelledby="set-up">
      <p className={off ? 'state state-bad' : 'state state-ok'}>{off ? 'Not set up' : 'Set up'}</p>
      {off ? (
        <p>
          Outgoing mail is not set up on this server, so nothing the help desk mails leaves: replies, rating requests,
          portal sign-in links, invitations and notices are kept below instead of being sent (for 30 days). Open one to
          read it and use its links.
        </p>
      ) : (
        <p>
          Mail goes out through the server's mailer, from <code>{status.data.from}</code>. Mail kept while it was not
          set up stays below for 30 days; a reply kept then can be sent again from its ticket.
        </p>
      )}
      <h2 id="set-up">How to set up outgoing mail</h2>
      <ol>
        <li>
          Set <code>SMTP_URL</code> in the server's environment to your mail server or relay, for example{' '}
          <code>smtp://user:password@smtp.example.com:587?from=Support%20%3Csupport%40example.com%3E</code> (the{' '}
          <code>from</code> parameter is the sender of the help desk's own mail), and restart the service.
        </li>
        <li>
          Or give a mailbox its own SMTP server (Settings →{' '}
          <Link to="/settings/$" params={{ _splat: 'mailboxes' }}>
            Mailboxes
          </Link>
          ): its replies then leave through it, whatever <code>SMTP_URL</code> says.
        </li>
        <li>Then send kept replies again from their tickets (“Send again”).</li>
      </ol>
      <p className="hint">The operations guide (docs/operations.md, “Outgoing mail”) says what happens to each mail.</p>
    </section>
  );
}

function Outbox() {
  const ws = useWorkspace();
  // Mail is kept by jobs that have no live event: read again while the list is open.
  const list = useOutbox(ws);
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <div className="integrations outgoing-mail">
      <PageTitle>Outgoing mail</PageTitle>
      <Status />
      <h2>Kept mail</h2>
      <Loaded query={list} what="Could not load the kept mail" empty={rows.length === 0 && <>No mail kept.</>}>
        <ScrollTable caption="Kept mail, newest first">
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">To</th>
              <th scope="col">What</th>
              <th scope="col">Kept</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((m) => (
              <tr key={m.id}>
                <td className="break">
                  <Link to="/settings/$" params={{ _splat: `outgoing-mail/${m.id}` }}>
                    {m.subject || '(no subject)'}
                  </Link>
                </td>
                <td className="break">{m.to.join(', ')}</td>
                <td>{KIND[m.kind]}</td>
                <td className="nowrap">
                  <time dateTime={m.created_at}>{when(m.created_at)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </ScrollTable>
      </Loaded>
      <MoreButton list={list} saysLoading>
        Older mail
      </MoreButton>
    </div>
  );
}

function KeptMail({ id }: { id: string }) {
  const ws = useWorkspace();
  const mail = useKeptMail(ws, id);
  const m = mail.data;
  return (
    <div className="integrations outgoing-mail">
      <Link to="/settings/$" params={{ _splat: 'outgoing-mail' }}>
        ← Outgoing mail
      </Link>
      {mail.error ? (
        <>
          <PageTitle>Kept mail</PageTitle>
          <ErrorNote error={mail.error} what="Could not load this mail" />
        </>
      ) : !m ? (
        <Loading />
      ) : (
        <>
          <PageTitle>{m.subject || '(no subject)'}</PageTitle>
          <dl className="mail-headers">
            <dt>What</dt>
            <dd>{KIND[m.kind]}, not sent</dd>
            <dt>From</dt>
            <dd>{m.from}</dd>
            <dt>To</dt>
            <dd>{m.to.join(', ')}</dd>
            {m.cc.length > 0 && (
              <>
                <dt>Cc</dt>
                <dd>{m.cc.join(', ')}</dd>
              </>
            )}
            {m.bcc.length > 0 && (
              <>
                <dt>Bcc</dt>
                <dd>{m.bcc.join(', ')}</dd>
              </>
            )}
            <dt>Kept</dt>
            <dd>
              <time dateTime={m.created_at}>{when(m.created_at)}</time>
            </dd>
            {m.ticket_id && (
              <>
                <dt>Ticket</dt>
                <dd>
                  <TicketLink id={m.ticket_id} />
                </dd>
              </>
            )}
          </dl>
          <h2>Links</h2>
          {m.links.length === 0 ? (
            <p className="hint">This mail has no links.</p>
          ) : (
            <ul className="mail-links" aria-label="Links in this mail">
              {m.links.map((l) => (
                <li key={l}>
                  <a href={l} target="_blank" rel="noreferrer">
                    {l}
                  </a>
                </li>
              ))}
            </ul>
          )}
          <h2>Message</h2>
          {m.html !== null ? (
            // The service sanitizes it (the allowlist of message bodies), and the CSP allows no script.
            // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by the service (docs/api.md "Outgoing mail")
            <div className="body mail-body" dangerouslySetInnerHTML={{ __html: m.html }} />
          ) : (
            <pre className="mail-text">{m.text}</pre>
          )}
          {m.html !== null && (
            <details>
              <summary>Plain text</summary>
              <pre className="mail-text">{m.text}</pre>
            </details>
          )}
          {m.attachments.length > 0 && (
            <>
              <h2>Files</h2>
              <ul>
                {m.attachments.map((a) => (
                  <li key={a.filename}>
                    {a.filename} <span className="hint">({bytes(a.size_bytes)})</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </div>
  );
}

/** The ticket a kept mail belongs to, by its number (the page's address takes it). */
function TicketLink({ id }: { id: string }) {
  const t = useTicketById(id);
  if (!t.data) return <span>{t.error ? 'deleted or hidden' : '…'}</span>;
  return (
    <Link to="/tickets/$number" params={{ number: String(t.data.number) }}>
      #{t.data.number} {t.data.subject}
    </Link>
  );
}
