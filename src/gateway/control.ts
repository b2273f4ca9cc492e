// Control notices from the API (docs/realtime.md "When the gateway closes a socket"): a logout,
// a removal, a deleted workspace or API key, changed private teams, and the chat widget's
// visitors signing out, a widget turned off, a deleted contact. Each closes the sockets it
// concerns and is remembered (Revocations), so that their tokens, valid for 5 minutes, do not
// open them again.
import type { ControlMessage } from '../platform/bus/index.js';
import type { Conn } from './conn.js';
import { CLOSE } from './protocol.js';
import type { Revocations } from './revocations.js';

/** The gateway's sockets, as control notices find them. */
export interface Sockets {
  revoked: Revocations;
  byUser: Map<string, Set<Conn>>;
  byWorkspace: Map<string, Set<Conn>>;
}

export function applyControl(m: ControlMessage, s: Sockets): void {
  const ofUser = (userId: string) => [...(s.byUser.get(userId) ?? [])];
  const ofWorkspace = (wid: string) => [...(s.byWorkspace.get(wid) ?? [])];
  switch (m.type) {
    case 'sessions.revoked': {
      s.revoked.sessions(m.user_id, m.session_ids);
      for (const c of ofUser(m.user_id)) {
        if (c.who.kind !== 'agent' || c.who.ctx.actor.kind !== 'member') continue;
        const sid = c.who.ctx.actor.sessionId;
        if (m.session_ids === 'all' || m.session_ids.includes(sid)) {
          s.revoked.session(sid);
          c.close(CLOSE.sessionRevoked, 'session_revoked');
        }
      }
      return;
    }
    case 'member.removed':
      s.revoked.member(m.workspace_id, m.user_id);
      for (const c of ofUser(m.user_id)) {
        if (c.wid === m.workspace_id) c.close(CLOSE.removed, 'member_removed');
      }
      return;
    case 'workspace.deleted':
      s.revoked.workspace(m.workspace_id);
      for (const c of ofWorkspace(m.workspace_id)) c.close(CLOSE.removed, 'workspace_deleted');
      return;
    case 'api_key.deleted':
      s.revoked.apiKey(m.api_key_id);
      for (const c of ofWorkspace(m.workspace_id)) {
        if (c.who.kind === 'agent' && c.who.ctx.actor.kind === 'api_key' && c.who.ctx.actor.apiKeyId === m.api_key_id) {
          c.close(CLOSE.apiKeyDeleted, 'api_key_deleted');
        }
      }
      return;
    case 'teams.changed':
      for (const userId of m.user_ids) {
        s.revoked.teams(m.workspace_id, userId);
        for (const c of ofUser(userId)) {
          if (c.wid !== m.workspace_id) continue;
          s.revoked.token(c.who.signature);
          c.close(CLOSE.teamsChanged, 'teams_changed');
        }
      }
      return;
    case 'widget.visitor_revoked':
      s.revoked.visitor(m.visitor_id);
      for (const c of ofWorkspace(m.workspace_id)) {
        if (c.who.kind === 'widget' && c.who.visitorId === m.visitor_id)
          c.close(CLOSE.sessionRevoked, 'session_revoked');
      }
      return;
    case 'contact.deleted':
      s.revoked.contact(m.workspace_id, m.contact_id);
      for (const c of ofWorkspace(m.workspace_id)) {
        if (c.who.kind === 'widget' && c.who.contactId === m.contact_id) c.close(CLOSE.removed, 'contact_deleted');
      }
      return;
    case 'widget.enabled':
      s.revoked.widget(m.workspace_id, 'on');
      return;
    case 'widget.disabled':
      s.revoked.widget(m.workspace_id, 'off');
      for (const c of ofWorkspace(m.workspace_id)) {
        if (c.who.kind === 'widget') c.close(CLOSE.removed, 'widget_disabled');
      }
      return;
  }
}
