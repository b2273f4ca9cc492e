// Settings: not in this slice of the app (docs/app.md says what remains). The route exists so that
// the links the service sends people to (/settings/mailboxes after a mailbox's OAuth connect,
// /settings/billing) open the app, and says where each setting is managed meanwhile.
import { Link, useParams } from '@tanstack/react-router';
import { useEffect } from 'react';

export function Settings() {
  const params = useParams({ strict: false }) as { _splat?: string };
  const page = params._splat ?? '';
  useEffect(() => {
    document.title = 'Settings · Help desk';
  }, []);
  return (
    <section className="settings" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings{page ? `: ${page.replaceAll('/', ' / ')}` : ''}</h1>
      <p>
        The settings screens are not part of the app yet. Everything they will show is available through the API
        meanwhile: see the <a href="/docs">API reference</a>.
      </p>
      <p>
        <Link to="/inbox" search={{}}>
          Back to the inbox
        </Link>
      </p>
    </section>
  );
}
