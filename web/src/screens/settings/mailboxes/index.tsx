// Mailboxes (/v1/mailboxes): the list with each one's state and adding one (list.tsx, add.tsx);
// a mailbox's settings at /settings/mailboxes/<id> (page.tsx). Admins only.
import '../integrations.css';
import { useIsAdmin } from '../../../lib/role';
import { PageTitle, ReadOnlyNote } from '../../../ui/page';
import type { SectionProps } from '../section';
import { MailboxList } from './list';
import { MailboxPage } from './page';

export default function Mailboxes({ path }: SectionProps) {
  const [id] = path;
  const admin = useIsAdmin();
  if (!admin) {
    return (
      <div className="integrations">
        <PageTitle>Mailboxes</PageTitle>
        <ReadOnlyNote what="see and change mailboxes" />
      </div>
    );
  }
  return id ? <MailboxPage key={id} id={id} /> : <MailboxList />;
}
