// The signed-in person's role in the selected workspace, for screens that show read-only forms to
// those who may not change them (the API's 403 must not be the first they learn of it).
import { useWorkspace } from '../lib/context';
import { useSession } from '../lib/session';

export type Role = 'owner' | 'admin' | 'agent' | 'viewer';

/** The role in the selected workspace; null while unknown. */
export function useRole(): Role | null {
  const ws = useWorkspace();
  const s = useSession();
  if (s.status !== 'signed_in' || !s.me) return null;
  return (s.me.workspaces.find((w) => w.id === ws)?.role as Role | null | undefined) ?? null;
}

export const isAdmin = (r: Role | null): boolean => r === 'owner' || r === 'admin';
/** Agents and above write (tickets, articles); viewers read. Unknown counts as allowed: the API decides. */
export const canWrite = (r: Role | null): boolean => r !== 'viewer';
