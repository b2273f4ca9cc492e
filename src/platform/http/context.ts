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
 * - system: the service itself (merges, snooze wake-ups, SLA timers, auto-assignment, auto-close,
 *   mail whose sender cannot be named or trusted).
 * - automation: one of the workspace's automations.
 * - visitor: the chat widget's visitor (their token's row), with their contact once they have one.
 * - customer: a contact writing by email or through the help center's portal.
 * - ai: an AI feature acting (triage, summaries, chat answers), with its model and the person it
 *   acts for (if any). A member's change approved in the assistant stays a member's
 *   (`viaAssistant`), recorded as `ai` too.
 * On the wire a visitor and a customer are `system` with the contact's id beside it (the
 * contract's actor types; docs/decisions.md "Who a customer's message names as its actor").
 */
export type Actor = MemberActor | ApiKeyActor | SystemActor | AutomationActor | VisitorActor | CustomerActor | AiActor;
export interface MemberActor {
  kind: 'member';
  userId: string;
  sessionId: string | null;
  /**
   * Set when the member acts through the AI assistant (a change they approved): still the
   * member with their permissions and their name on what they write, recorded with actor type
   * `ai` and the member as actor.user (interface.md "Assistant"; src/modules/assistant/tools).
   */
  viaAssistant?: { model: string };
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
export interface VisitorActor {
  kind: 'visitor';
  /** The visitor token's row (widget_visitors.id). */
  visitorId: string;
  /** Their contact, once they have one (their first message or email makes it). */
  contactId: string | null;
}
export interface CustomerActor {
  kind: 'customer';
  contactId: string;
}
export interface AiActor {
  kind: 'ai';
  /** The model that acted, as its provider names it. */
  model: string;
  /** The person on whose behalf it acted (an agent asking for a draft), or null on its own. */
  onBehalfOf: string | null;
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
 * hooks) sees it: a request's context (a member or a key, with its role and scopes), or an actor
 * without one: the service as the system or an automation, a customer or a visitor whose message
 * the service writes, the AI assistant. Told apart by `ctx.actor.kind`.
 */
export type ActingContext = RequestContext | ServiceContext;
export interface ServiceContext {
  actor: SystemActor | AutomationActor | VisitorActor | CustomerActor | AiActor;
}

export const SYSTEM_ACTOR: SystemActor = { kind: 'system' };
export const SYSTEM: ServiceContext = { actor: SYSTEM_ACTOR };
export const asAutomation = (automation: { id: string; name: string }): ServiceContext => ({
  actor: { kind: 'automation', automationId: automation.id, name: automation.name },
});
/**
 * A member's request context for a change they approved in the assistant: the same member,
 * role, private teams and workspace (so every rule of the write applies as to them), recorded as
 * actor type `ai` with the member as actor.user. An API key's context is returned as it is (the
 * assistant is for signed-in people only).
 */
export const throughAssistant = (ctx: RequestContext, model: string): RequestContext =>
  ctx.actor.kind === 'member' ? { ...ctx, actor: { ...ctx.actor, viaAssistant: { model } } } : ctx;

/** A chat widget's visitor acting (their message, their handoff). */
export const asVisitor = (v: { visitorId: string; contactId: string | null }): ServiceContext => ({
  actor: { kind: 'visitor', visitorId: v.visitorId, contactId: v.contactId },
});

/** A member's or a key's request (not the system, not an automation). */
export const isCaller = (ctx: ActingContext): ctx is RequestContext =>
  ctx.actor.kind === 'member' || ctx.actor.kind === 'api_key';

/** Fails to compile when a switch on `actor.kind` misses a kind. */
export function unknownActor(actor: never): never {
  throw new Error(`unknown actor kind: ${JSON.stringify(actor)}`);
}

/**
 * How records and the API name an actor's kind (`actor_type` of activities): a member is a
 * `user` (`ai` when acting through the assistant); a visitor and a customer are `system` (the
 * contract's types), their contact recorded beside it (contactOf).
 */
export function recordedActorType(actor: Actor): 'user' | 'api_key' | 'system' | 'automation' | 'ai' {
  switch (actor.kind) {
    case 'member':
      return actor.viaAssistant ? 'ai' : 'user';
    case 'api_key':
    case 'system':
    case 'automation':
    case 'ai':
      return actor.kind;
    case 'visitor':
    case 'customer':
      return 'system';
    default:
      return unknownActor(actor);
  }
}

/** The person acting, if a person acts: a member, or the one an AI acts for. */
export function actingUserId(actor: Actor): string | null {
  switch (actor.kind) {
    case 'member':
      return actor.userId;
    case 'ai':
      return actor.onBehalfOf;
    case 'api_key':
    case 'system':
    case 'automation':
    case 'visitor':
    case 'customer':
      return null;
    default:
      return unknownActor(actor);
  }
}

/** The contact acting, if a customer acts (a visitor before their contact exists: null). */
export function actingContactId(actor: Actor): string | null {
  switch (actor.kind) {
    case 'visitor':
    case 'customer':
      return actor.contactId;
    case 'member':
    case 'api_key':
    case 'system':
    case 'automation':
    case 'ai':
      return null;
    default:
      return unknownActor(actor);
  }
}

/**
 * A chat widget's visitor (`Authorization: Visitor svc_vis_…`, src/modules/widget): one
 * workspace, one contact. What a visitor writes is a customer's message
 * (tickets/customer-message.ts), with the visitor as its actor (`asVisitor`).
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
