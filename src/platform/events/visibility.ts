// Who may see an event: the one rule used by replay (GET /v1/events), the gateway and
// webhooks. What a caller may not see comes back as a stand-in, so seq stays gapless.
import type { RequestContext, Scope } from '../http/context.js';
import { canSeeTeam } from '../http/team-access.js';
import type { EventEnvelope } from './envelope.js';

/** Events meant for one person only (their user:<uid> topic). */
const PERSONAL = new Set(['notification.created']);
/** Types whose events are personal when they carry a user:<uid> topic (a personal view's). */
const PERSONAL_WHEN_ADDRESSED = ['view.'];

/** The scope an API key needs to see an event type (the `realtime` scope sees everything). */
export function scopeForType(type: string): Scope {
  const prefix = type.split('.')[0] ?? '';
  if (prefix === 'ticket' || prefix === 'message' || prefix === 'activity' || prefix === 'saved_reply') {
    return 'tickets:read';
  }
  if (prefix === 'contact' || prefix === 'company') return 'contacts:read';
  if (prefix === 'kb_article' || prefix === 'kb_collection') return 'kb:read';
  return 'settings:read';
}

export function canSee(ctx: RequestContext, e: EventEnvelope): boolean {
  if (!canSeeTeam(ctx, e.team_id || null)) return false;
  const addressed =
    PERSONAL_WHEN_ADDRESSED.some((p) => e.type.startsWith(p)) && e.topics.some((t) => t.startsWith('user:'));
  if (PERSONAL.has(e.type) || addressed) {
    return ctx.actor.kind === 'member' && e.topics.includes(`user:${ctx.actor.userId}`);
  }
  if (ctx.scopes) {
    if (ctx.scopes.includes('realtime')) return true;
    const need = scopeForType(e.type);
    const write = need.replace(':read', ':write') as Scope;
    return ctx.scopes.includes(need) || ctx.scopes.includes(write);
  }
  return true;
}
