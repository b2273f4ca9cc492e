// Who is calling: the credential turned into one context that every route and query uses.
// Handlers never read the workspace from anything else.

export const ROLES = ['viewer', 'agent', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const SCOPES = [
  'tickets:read',
  'tickets:write',
  'contacts:read',
  'contacts:write',
  'kb:read',
  'kb:write',
  'settings:read',
  'settings:write',
  'realtime',
] as const;
export type Scope = (typeof SCOPES)[number];

export const roleAtLeast = (role: Role, min: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(min);

export type Actor =
  | { type: 'user'; userId: string; sessionId: string }
  | { type: 'api_key'; apiKeyId: string; createdBy: string | null };

/** A credential resolved against a workspace. */
export interface RequestContext {
  workspaceId: string;
  actor: Actor;
  /** The member's role, for users; null for API keys. */
  role: Role | null;
  /** The key's scopes, for API keys; null for users. */
  scopes: Scope[] | null;
  /** Private teams the caller belongs to (users); admins and owners see every team. */
  teams: string[];
  ip: string;
}

/** A signed-in user, before any workspace is chosen. */
export interface UserContext {
  userId: string;
  sessionId: string;
  ip: string;
}

/**
 * What a route needs, declared next to its schemas:
 * - public: no credential.
 * - user: a signed-in user; no workspace involved (SVC-Workspace ignored).
 * - identity: a signed-in user or any API key (who am I).
 * - workspace: a member with at least `role`, or an API key holding any of `scopes`
 *   (`scopes: null` means API keys may not use the route at all).
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'user' }
  | { kind: 'identity' }
  | { kind: 'workspace'; role: Role; scopes: Scope[] | null };

export const access = {
  public: (): Access => ({ kind: 'public' }),
  user: (): Access => ({ kind: 'user' }),
  identity: (): Access => ({ kind: 'identity' }),
  member: (role: Role, ...scopes: Scope[]): Access => ({ kind: 'workspace', role, scopes }),
  usersOnly: (role: Role): Access => ({ kind: 'workspace', role, scopes: null }),
};

/** Stable identity of the caller for idempotency and rate limits. */
export function callerKey(ctx: RequestContext): string {
  return ctx.actor.type === 'api_key' ? `k:${ctx.actor.apiKeyId}` : `u:${ctx.actor.userId}:${ctx.workspaceId}`;
}
