// A redirect made once, when the component mounts. TanStack Router's <Navigate> navigates on every
// render, and a screen that stays rendered while the navigation runs (the signed-in frame, as the
// sign-in page loads) would navigate again and again.
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';

export function Redirect({ to, search }: { to: string; search?: Record<string, string> }) {
  const navigate = useNavigate();
  const done = useRef(false);
  useEffect(() => {
    if (done.current) return;
    done.current = true;
    void navigate({ to, search: search ?? {}, replace: true } as unknown as Parameters<typeof navigate>[0]);
  });
  return null;
}
