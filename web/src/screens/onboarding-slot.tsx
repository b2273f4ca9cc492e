// Where the shell shows the onboarding checklist: only its data is fetched here (GET
// /v1/onboarding); the checklist itself (onboarding.tsx) is a chunk of its own, loaded only while
// the checklist is neither dismissed nor complete, so the inbox's first load stays small.
import { Suspense } from 'react';
import { useOnboarding } from '../data/onboarding';
import { useWorkspace } from '../lib/context';
import { lazyScreen } from '../lib/lazy';
import { Quiet } from '../ui/quiet';

const Checklist = lazyScreen(() => import('./onboarding'), 'default');

export function OnboardingSlot() {
  const ws = useWorkspace();
  const q = useOnboarding(ws);
  if (!q.data || q.data.dismissed || q.data.done_count >= q.data.total) return null;
  return (
    // In the sidebar: a chunk that cannot be fetched (the server away) leaves it out, not the shell.
    <Quiet>
      <Suspense fallback={null}>
        <Checklist data={q.data} />
      </Suspense>
    </Quiet>
  );
}
