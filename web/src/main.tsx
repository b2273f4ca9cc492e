// The agent web app (docs/app.md): React, TanStack Router and Query, the typed API client.
import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { queryClient } from './lib/queries';
import { restore } from './lib/session';
import { router } from './router';
import './styles.css';

// The per-response nonce the service put in index.html: libraries that add <style> elements use
// it, so the CSP needs no 'unsafe-inline'.
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce;
if (nonce) setNonce(nonce);

void restore();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
