// Webhooks (/v1/webhooks): the endpoints and a new one (list.tsx); an endpoint's page at
// /settings/webhooks/<id> (page.tsx) with its delivery log (deliveries.tsx). Admins only.
import '../integrations.css';
import { useIsAdmin } from '../../../lib/role';
import { PageTitle, ReadOnlyNote } from '../../../ui/page';
import type { SectionProps } from '../section';
import { WebhookList } from './list';
import { WebhookPage } from './page';

export default function Webhooks({ path }: SectionProps) {
  const [id] = path;
  const admin = useIsAdmin();
  if (!admin) {
    return (
      <div className="integrations">
        <PageTitle>Webhooks</PageTitle>
        <ReadOnlyNote what="see and change webhooks" />
      </div>
    );
  }
  return id ? <WebhookPage key={id} id={id} /> : <WebhookList />;
}
