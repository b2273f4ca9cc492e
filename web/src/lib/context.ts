// What the signed-in frame (screens/shell.tsx) gives the screens inside it.
import { createContext, useContext } from 'react';
import type { Live } from './live';

export const WorkspaceContext = createContext<string>('');
/** The selected workspace's id. */
export const useWorkspace = () => useContext(WorkspaceContext);

export const ShortcutsContext = createContext<() => void>(() => {});
/** Opens the list of keyboard shortcuts. */
export const useShowShortcuts = () => useContext(ShortcutsContext);

export const LiveContext = createContext<Live | null>(null);
/** The selected workspace's gateway connection (null before it started). */
export const useLiveConnection = () => useContext(LiveContext);
