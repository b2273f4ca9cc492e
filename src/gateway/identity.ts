// Who a realtime token says the socket is: an agent (a member's session or an API key with the
// realtime scope, as a request context) or a widget visitor. Revocations are checked apart.
import type { TokenSigner } from '../platform/crypto/tokens.js';
import { type RequestContext, ROLES, type Role } from '../platform/http/context.js';
import type { Identity } from './conn.js';
import { isUuid } from './topics.js';

/** The identity a valid token of this endpoint names, or null. */
export async function identityOf(
  tokens: TokenSigner,
  endpoint: 'agent' | 'widget',
  token: string,
  ip: string,
): Promise<Identity | null> {
  const claims = await tokens.verify(token, endpoint === 'agent' ? 'ws' : 'widget_ws');
  if (!claims) return null;
  const iat = typeof claims.iat === 'number' ? claims.iat : 0;
  const signature = token.slice(token.lastIndexOf('.') + 1);
  const wid = claims.wid;
  if (!isUuid(wid)) return null;
  let who: Identity;
  if (endpoint === 'widget') {
    // Widget tokens: sub = the contact (the visitor), wid = its workspace, vid = the visitor.
    if (!isUuid(claims.sub) || !isUuid(claims.vid)) return null;
    who = { kind: 'widget', wid, contactId: claims.sub, visitorId: claims.vid, iat, signature };
  } else {
    const teams = Array.isArray(claims.teams) ? claims.teams.filter(isUuid) : [];
    let ctx: RequestContext;
    if (claims.kind === 'user') {
      const role = claims.role as Role;
      if (!isUuid(claims.sub) || typeof claims.sid !== 'string' || !ROLES.includes(role)) return null;
      ctx = {
        workspaceId: wid,
        actor: { kind: 'member', userId: claims.sub, sessionId: claims.sid },
        role,
        scopes: null,
        teams,
        ip,
      };
    } else if (claims.kind === 'api_key') {
      if (!isUuid(claims.sub)) return null;
      // A key gets a realtime token only with the `realtime` scope, which sees every event type.
      ctx = {
        workspaceId: wid,
        actor: { kind: 'api_key', apiKeyId: claims.sub, createdBy: null },
        role: null,
        scopes: ['realtime'],
        teams: [],
        ip,
      };
    } else return null;
    who = { kind: 'agent', wid, ctx, iat, signature };
  }
  return who;
}
