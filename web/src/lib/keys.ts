// Single-key shortcuts (j, k, e, r, n, /, ?): ignored while typing in a field (Escape excepted)
// and when a modifier is held, so they never take a key from the browser or a text box.
import { useEffect, useRef } from 'react';

export type KeyMap = Record<string, (e: KeyboardEvent) => void>;

const typing = (t: EventTarget | null): boolean => {
  const el = t as HTMLElement | null;
  if (!el?.tagName) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
};

export function useShortcuts(map: KeyMap, enabled = true): void {
  const ref = useRef(map);
  ref.current = map;
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      if (typing(e.target) && e.key !== 'Escape') return;
      // A dialog that is open keeps its keys.
      if (document.querySelector('[role="dialog"][data-state="open"]') && e.key !== '?') return;
      const f = ref.current[e.key];
      if (!f) return;
      e.preventDefault();
      f(e);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled]);
}
