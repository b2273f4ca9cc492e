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

/**
 * Who acts: the one name for it, recorded on every write (activities, audit entries, messages'
 * authors) and checked where access depends on it; `kind` tells them apart.
 * - member: a person signed in to the workspace (their session; null outside one, e.g. an audit
 *   entry of a failed sign-in).
 * - api_key: an integration's key (`createdBy`: the person who made it, if still known).
 * - system: the service itself (merges, snooze wake-ups, SLA timers, auto-assignment, auto-close).
 * - automation: one of the workspace's automations.
 * The widget's visitors, the portal's customers and the AI assistant join as kinds of their own.
 */
export type Actor = MemberActor | ApiKeyActor | SystemActor | AutomationActor;
export interface MemberActor {
  kind: 'member';
  userId: string;
  sessionId: string | null;
}
export interface ApiKeyActor {
  kind: 'api_key';
  apiKeyId: string;
  createdBy: string | null;
}
export interface SystemActor {
  kind: 'system';
}
export interface AutomationActor {
  kind: 'automation';
  automationId: string;
  name: string;
}
/** The actors a credential stands for: who calls the API (a member through a session). */
export type CallerActor = (MemberActor & { sessionId: string }) | ApiKeyActor;

/** A credential resolved against a workspace. */
export interface RequestContext {
  workspaceId: string;
  actor: CallerActor;
  /** The member's role, for users; null for API keys. */
  role: Role | null;
  /** The key's scopes, for API keys; null for users. */
  scopes: Scope[] | null;
  /** Private teams the caller belongs to (users); admins and owners see every team. */
  teams: string[];
  ip: string;
}

/**
 * Who acts on a workspace's records, as the write path (tickets, messages, labels, the workflow
 * hooks) sees it: a request's context (a member or a key, with its role and scopes), or the
 * service's own acting as the system or as an automation. Told apart by `ctx.actor.kind`.
 */
export type ActingContext = RequestContext | ServiceContext;
export interface ServiceContext {
  actor: SystemActor | AutomationActor;
}

export const SYSTEM_ACTOR: SystemActor = { kind: 'system' };
export const SYSTEM: ServiceContext = { actor: SYSTEM_ACTOR };
export const asAutomation = (automation: { id: string; name: string }): ServiceContext => ({
  actor: { kind: 'automation', automationId: automation.id, name: automation.name },
});

/** A member's or a key's request (not the system, not an automation). */
export const isCaller = (ctx: ActingContext): ctx is RequestContext =>
  ctx.actor.kind === 'member' || ctx.actor.kind === 'api_key';

/** How records and the API name an actor's kind (`actor_type`: a member is a `user`). */
export const recordedActorType = (actor: Actor) => (actor.kind === 'member' ? ('user' as const) : actor.kind);

/** The person acting, if a person acts. */
export const actingUserId = (actor: Actor): string | null => (actor.kind === 'member' ? actor.userId : null);

/**
 * A chat widget's visitor (`Authorization: Visitor svc_vis_…`, src/modules/widget): one
 * workspace, one contact. Not an actor of the write path: what a visitor writes is a customer's
 * message, written as the system writes inbound mail.
 */
export interface VisitorContext {
  workspaceId: string;
  contactId: string;
  /** The visitor token's row (widget_visitors.id). */
  visitorId: string;
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
 * - visitor: a chat widget's visitor token (and nothing else).
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'user' }
  | { kind: 'identity' }
  | { kind: 'workspace'; role: Role; scopes: Scope[] | null }
  | { kind: 'visitor' };

export const access = {
  public: (): Access => ({ kind: 'public' }),
  user: (): Access => ({ kind: 'user' }),
  identity: (): Access => ({ kind: 'identity' }),
  member: (role: Role, ...scopes: Scope[]): Access => ({ kind: 'workspace', role, scopes }),
  usersOnly: (role: Role): Access => ({ kind: 'workspace', role, scopes: null }),
  visitor: (): Access => ({ kind: 'visitor' }),
};

/** Stable identity of the caller for idempotency and rate limits. */
export function callerKey(ctx: RequestContext): string {
  return ctx.actor.kind === 'api_key' ? `k:${ctx.actor.apiKeyId}` : `u:${ctx.actor.userId}:${ctx.workspaceId}`;
}
