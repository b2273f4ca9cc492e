// The agent web app (docs/app.md): React, TanStack Router and Query, the typed API client.
import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { queryClient } from './lib/queries';
import { getSession, restore, subscribeSession } from './lib/session';
import { router } from './router';
// The app's look, by area, in this order (later files build on the earlier ones' tokens and rules).
import './styles/base.css';
import './styles/auth.css';
import './styles/frame.css';
import './styles/tickets.css';
import './styles/shared.css';

// The per-response nonce the service put in index.html: libraries that add <style> elements use
// it, so the CSP needs no 'unsafe-inline'.
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce;
if (nonce) setNonce(nonce);

// Nothing cached for one account is shown to another (switching accounts, adding one, signing out).
let account: string | null = null;
subscribeSession(() => {
  const s = getSession();
  const id = s.status === 'signed_in' ? s.user.id : null;
  if (id !== account) queryClient.clear();
  account = id;
});

void restore();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
