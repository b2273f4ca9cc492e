// Authenticate (onRequest: credential → context, never throws) and authorize
// (preValidation: the route's declared access against that context).
import { AsyncResource } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUuid } from '../crypto/random.js';
import { runInScope, type Scope } from '../db/scope.js';
import { type Access, type RequestContext, roleAtLeast, type UserContext, type VisitorContext } from './context.js';
import { ApiError, forbidden, notFound, unauthorized } from './errors.js';

/** Implemented by the identity modules; platform code only sees this interface. */
export interface CredentialResolver {
  /** An API key secret (`svc_live_…`) → its context, or null when unknown, revoked or expired. */
  apiKey(secret: string, ip: string): Promise<RequestContext | null>;
  /**
   * An access token → the user, and their membership in `workspaceId` when given.
   * null when the token is invalid or its session was revoked.
   */
  accessToken(
    token: string,
    workspaceId: string | null,
    ip: string,
  ): Promise<{ user: UserContext; member: RequestContext | null } | null>;
  /** A chat widget's visitor token (`svc_vis_…`) → the visitor, or null when unknown or revoked. */
  visitorToken(token: string, ip: string): Promise<VisitorContext | null>;
}

export type AuthState =
  | { kind: 'none' }
  | { kind: 'invalid' }
  | { kind: 'key'; ctx: RequestContext }
  | { kind: 'user'; user: UserContext; ctx: RequestContext | null; workspace: 'absent' | 'unknown' | 'ok' }
  | { kind: 'visitor'; visitor: VisitorContext };

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthState;
    /** Set by authorize() for workspace routes. */
    ctx: RequestContext;
    /** Set by authorize() for user routes. */
    user: UserContext;
    /** Set by authorize() for visitor routes (the chat widget). */
    visitor: VisitorContext;
  }
  interface FastifyContextConfig {
    access?: Access;
  }
}

const NONE: AuthState = { kind: 'none' };

/** Each request's scope and the async resource that re-enters it (see registerAuth). */
const scopeOf = new WeakMap<FastifyRequest, { scope: Scope; resource: AsyncResource }>();

export function registerAuth(app: FastifyInstance, resolver: CredentialResolver): void {
  app.decorateRequest('auth', null as never);
  app.decorateRequest('ctx', null as never);
  app.decorateRequest('user', null as never);
  app.decorateRequest('visitor', null as never);

  // The request's workspace scope (platform/db/scope.ts): opened here, its workspace set once
  // authorization knows it; entered again after the body was read (the body's stream events run
  // outside it), as @fastify/request-context does.
  app.addHook('onRequest', (req, _reply, done) => {
    const scope: Scope = { workspaceId: null };
    runInScope(scope, () => {
      const resource = new AsyncResource('svc-request-scope');
      scopeOf.set(req, { scope, resource });
      done();
    });
  });

  app.addHook('onRequest', async (req) => {
    req.auth = await authenticate(req, resolver);
  });

  app.addHook('preValidation', (req, _reply, done) => {
    const held = scopeOf.get(req);
    if (!held) return done();
    held.resource.runInAsyncScope(done, req.raw);
  });

  app.addHook('preValidation', async (req) => {
    const access = req.routeOptions.config.access;
    if (!access) return; // 404 handler and framework routes
    authorize(req, access);
    const held = scopeOf.get(req);
    const workspaceId = req.ctx?.workspaceId ?? req.visitor?.workspaceId ?? null;
    if (held && workspaceId) held.scope.workspaceId = workspaceId;
  });
}

async function authenticate(req: FastifyRequest, resolver: CredentialResolver): Promise<AuthState> {
  const header = req.headers.authorization;
  if (header === undefined) return NONE;
  const v = /^Visitor (svc_vis_[A-Za-z0-9_-]{1,200})$/.exec(header);
  if (v) {
    const visitor = await resolver.visitorToken(v[1]!, req.ip);
    return visitor ? { kind: 'visitor', visitor } : { kind: 'invalid' };
  }
  const m = /^Bearer ([\x21-\x7e]{1,4096})$/.exec(header);
  if (!m) return { kind: 'invalid' };
  const token = m[1]!;
  if (token.startsWith('svc_live_')) {
    const ctx = await resolver.apiKey(token, req.ip);
    return ctx ? { kind: 'key', ctx } : { kind: 'invalid' };
  }
  const wsHeader = req.headers['svc-workspace'];
  const wanted = typeof wsHeader === 'string' && wsHeader !== '' ? wsHeader : null;
  const r = await resolver.accessToken(token, wanted !== null && isUuid(wanted) ? wanted.toLowerCase() : null, req.ip);
  if (!r) return { kind: 'invalid' };
  return {
    kind: 'user',
    user: r.user,
    ctx: r.member,
    workspace: wanted === null ? 'absent' : r.member ? 'ok' : 'unknown',
  };
}

function authorize(req: FastifyRequest, access: Access): void {
  const auth = req.auth;
  if (access.kind === 'public') return;
  if (auth.kind === 'none' || auth.kind === 'invalid') throw unauthorized();
  // A visitor token opens the widget's visitor routes and nothing else; they take nothing else.
  if (access.kind === 'visitor') {
    if (auth.kind !== 'visitor')
      throw unauthorized('This route takes a visitor token: Authorization: Visitor svc_vis_….');
    req.visitor = auth.visitor;
    return;
  }
  if (auth.kind === 'visitor') throw unauthorized('A visitor token opens the chat widget routes only.');

  if (access.kind === 'user') {
    if (auth.kind !== 'user') throw forbidden('This route is for signed-in people, not API keys.');
    req.user = auth.user;
    return;
  }
  if (access.kind === 'identity') {
    if (auth.kind === 'user') req.user = auth.user;
    else req.ctx = auth.ctx;
    return;
  }

  if (auth.kind === 'key') {
    if (access.scopes === null) throw forbidden('This route is for signed-in people, not API keys.');
    const scopes = auth.ctx.scopes ?? [];
    if (!access.scopes.some((s) => scopes.includes(s))) {
      throw forbidden(`This API key needs the scope ${access.scopes.join(' or ')}.`);
    }
    req.ctx = auth.ctx;
    return;
  }

  // A signed-in user on a workspace route: the workspace must be named and the user a member.
  if (auth.workspace === 'absent') {
    throw new ApiError('not_found', 'No workspace selected: send the SVC-Workspace header.');
  }
  if (auth.workspace === 'unknown' || !auth.ctx) throw notFound('Workspace not found.');
  if (!roleAtLeast(auth.ctx.role!, access.role)) {
    throw forbidden(`This needs the ${access.role} role or higher.`);
  }
  req.user = auth.user;
  req.ctx = auth.ctx;
}
