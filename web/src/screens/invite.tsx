// Not built yet: accepting an invitation (/invite/<token>).
import { NotYet, PageTitle } from '../ui/page';

export function AcceptInvitation() {
  return (
    <main className="auth">
      <PageTitle>Invitation</PageTitle>
      <NotYet />
    </main>
  );
}
