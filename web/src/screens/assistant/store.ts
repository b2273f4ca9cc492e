// Whether the assistant's panel is open, for everything that opens it (the sidebar's button, the
// shortcut, the /assistant address that onboarding's "Ask the assistant" links to, the panel's own
// Close and Escape). Kept outside React so that none of them needs the panel's code, which is a
// chunk of its own (launcher.tsx). Closing gives the focus back to where it was when it opened.
import { useSyncExternalStore } from 'react';

/** The key that opens and closes the panel (Shift+A; a single key, as the app's others: not while typing). */
export const ASSISTANT_KEY = 'A';

interface State {
  open: boolean;
  /** Opened at least once since the frame started: the panel stays mounted (a run goes on). */
  mounted: boolean;
}

let state: State = { open: false, mounted: false };
let returnTo: HTMLElement | null = null;
const listeners = new Set<() => void>();
const set = (next: State) => {
  state = next;
  for (const l of listeners) l();
};

export function openAssistant(): void {
  if (state.open) return;
  const active = document.activeElement;
  returnTo = active instanceof HTMLElement && active !== document.body ? active : null;
  set({ open: true, mounted: true });
}

export function closeAssistant(): void {
  if (!state.open) return;
  set({ ...state, open: false });
  const back = returnTo?.isConnected ? returnTo : document.getElementById('main');
  returnTo = null;
  back?.focus();
}

/** The panel's way to take the focus (its message box), once it is mounted. */
let focuser: (() => void) | null = null;
export function onFocusAssistant(f: (() => void) | null): void {
  focuser = f;
}
/** Puts the focus in the open panel (after a drawer that held it closed). */
export function focusAssistant(): void {
  if (state.open) focuser?.();
}

/** Whether the panel is open now (outside React). */
export const assistantOpen = (): boolean => state.open;

export const toggleAssistant = (): void => (state.open ? closeAssistant() : openAssistant());

/** The frame is gone (another workspace or account): the next one starts closed. */
export function resetAssistant(): void {
  returnTo = null;
  set({ open: false, mounted: false });
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => {
    listeners.delete(l);
  };
};

export const useAssistantState = (): State => useSyncExternalStore(subscribe, () => state);
