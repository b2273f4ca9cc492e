// What the signed-in frame (screens/shell.tsx) holds of the assistant: the sidebar's button, the
// shortcut (Shift+A, listed under `?`), the panel's place (its code, panel.tsx, is a chunk of its
// own, fetched when the panel first opens, so the inbox's first load stays small) and the
// /assistant address (onboarding's "Ask the assistant") that opens the panel over the inbox.
// The button and the shortcut are there while AI is on in the workspace; with the assistant
// itself off the panel says so and how an admin turns it on.
import { Suspense, useEffect } from 'react';
import { useAiConfig } from '../../data/ai';
import { useWorkspace } from '../../lib/context';
import { useShortcuts } from '../../lib/keys';
import { lazyScreen } from '../../lib/lazy';
import { Redirect } from '../../lib/redirect';
import { Icon } from '../../ui/icons';
import { Quiet } from '../../ui/quiet';
import { ASSISTANT_KEY, openAssistant, resetAssistant, toggleAssistant, useAssistantState } from './store';

const Panel = lazyScreen(() => import('./panel'), 'AssistantPanel');

/** The assistant's name (GET /v1/ai/config `assistant_name`) and whether AI is on. */
export function useAssistantName(): { name: string; aiOn: boolean } {
  const config = useAiConfig(useWorkspace());
  return { name: config.data?.assistant_name || 'the assistant', aiOn: config.data?.enabled === true };
}

/** The sidebar's button: "Ask Ollie". */
export function AssistantButton() {
  const { name, aiOn } = useAssistantName();
  const { open } = useAssistantState();
  if (!aiOn) return null;
  return (
    <button
      type="button"
      className="bell assistant-button"
      aria-expanded={open}
      aria-keyshortcuts="Shift+A"
      onClick={() => toggleAssistant()}
    >
      <span className="view-name">
        <Icon name="ai" />
        Ask {name}
      </span>
    </button>
  );
}

/** The panel's place beside the screen, and the shortcut. */
export function AssistantSlot() {
  const { aiOn } = useAssistantName();
  const { open, mounted } = useAssistantState();
  useShortcuts({ [ASSISTANT_KEY]: () => toggleAssistant() }, aiOn);
  useEffect(() => () => resetAssistant(), []);
  if (!mounted) return null;
  return (
    <Quiet>
      <Suspense fallback={open ? <p className="assistant-loading loading">Loading…</p> : null}>
        <Panel open={open} />
      </Suspense>
    </Quiet>
  );
}

/** /assistant: the inbox, with the panel open. */
export function AssistantRoute() {
  useEffect(() => openAssistant(), []);
  return <Redirect to="/inbox" />;
}
