// The signed-in person's role in the selected workspace, for screens that show read-only forms to
// those who may not change them (the API's 403 must not be the first they learn of it). The API
// stays the judge: an unknown role (still loading) counts as allowed.
import { useWorkspace } from './context';
import { useSession } from './session';

export type Role = 'owner' | 'admin' | 'agent' | 'viewer';

export const ROLE_LABEL: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Admin',
  agent: 'Agent',
  viewer: 'Viewer',
};

/** The role in the selected workspace; null while unknown. */
export function useRole(): Role | null {
  const ws = useWorkspace();
  const s = useSession();
  if (s.status !== 'signed_in' || !s.me) return null;
  return (s.me.workspaces.find((w) => w.id === ws)?.role as Role | null | undefined) ?? null;
}

/** Owners and admins change the workspace's settings. */
export const isAdmin = (r: Role | null): boolean => r === 'owner' || r === 'admin';
/** Agents and above write (tickets, articles, saved replies); viewers read. */
export const canWrite = (r: Role | null): boolean => r !== 'viewer';

export const useIsAdmin = (): boolean => isAdmin(useRole());
