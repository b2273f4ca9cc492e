// What the API revoked, remembered by each gateway process (docs/realtime.md "When the gateway
// closes a socket").
import type { Identity } from './conn.js';

/** Realtime tokens live 5 minutes: revocations are remembered a little longer than that. */
const REMEMBER_REVOKED_MS = 6 * 60_000;

/**
 * Realtime tokens stay valid for 5 minutes, and the Phoenix client reconnects with the same
 * token after a close: the gateway remembers what the API revoked so that a closed socket stays
 * closed. Tokens are refused by session (logout, password change, session revoke), by issue
 * time (`iat`, seconds) for a person's workspace membership, a workspace, or all of a person's
 * sessions, and, for a change of private teams, by issue time strictly before the change plus
 * the exact tokens of the sockets it closed: a fresh token fetched in the same second works.
 * Chat widget tokens are refused by visitor (signed out), by contact (deleted) and, for a widget
 * turned off, by issue time; the gateway also reads the visitor's row at connect (visitors.ts),
 * which a restarted process needs; this memory covers a revocation arriving during that read.
 */
export class Revocations {
  readonly #sessions = new Map<string, number>();
  readonly #users = new Map<string, number>();
  readonly #members = new Map<string, number>();
  readonly #workspaces = new Map<string, number>();
  readonly #teams = new Map<string, number>();
  readonly #tokens = new Map<string, number>();
  readonly #apiKeys = new Map<string, number>();
  /** Chat widget visitors who signed out, deleted contacts (wid:cid), widgets turned off (wid). */
  readonly #visitors = new Map<string, number>();
  readonly #contacts = new Map<string, number>();
  readonly #widgets = new Map<string, number>();

  #now = () => Math.floor(Date.now() / 1000);

  sessions(userId: string, ids: string[] | 'all'): void {
    if (ids === 'all') this.#users.set(userId, this.#now());
    else for (const id of ids) this.#sessions.set(id, this.#now());
  }
  session(id: string): void {
    this.#sessions.set(id, this.#now());
  }
  member(wid: string, userId: string): void {
    this.#members.set(`${wid}:${userId}`, this.#now());
  }
  teams(wid: string, userId: string): void {
    this.#teams.set(`${wid}:${userId}`, this.#now());
  }
  token(signature: string): void {
    this.#tokens.set(signature, this.#now());
  }
  workspace(wid: string): void {
    this.#workspaces.set(wid, this.#now());
  }
  /** A deleted key: every token it was given is refused (a key id never comes back). */
  apiKey(id: string): void {
    this.#apiKeys.set(id, this.#now());
  }

  /** A visitor signed out: their tokens are refused (a visitor id never comes back). */
  visitor(id: string): void {
    this.#visitors.set(id, this.#now());
  }
  /** A deleted contact: its visitors' tokens are refused. */
  contact(wid: string, contactId: string): void {
    this.#contacts.set(`${wid}:${contactId}`, this.#now());
  }
  /** A widget turned off: its visitors' tokens issued until now are refused; on again: no longer. */
  widget(wid: string, state: 'on' | 'off'): void {
    if (state === 'off') this.#widgets.set(wid, this.#now());
    else this.#widgets.delete(wid);
  }

  refuses(who: Identity): boolean {
    const upTo = (at: number | undefined) => at !== undefined && who.iat <= at;
    if (this.#tokens.has(who.signature) || upTo(this.#workspaces.get(who.wid))) return true;
    if (who.kind === 'widget') {
      return (
        this.#visitors.has(who.visitorId) ||
        this.#contacts.has(`${who.wid}:${who.contactId}`) ||
        upTo(this.#widgets.get(who.wid))
      );
    }
    if (who.kind === 'agent' && who.ctx.actor.kind === 'api_key') return this.#apiKeys.has(who.ctx.actor.apiKeyId);
    if (who.kind !== 'agent' || who.ctx.actor.kind !== 'member') return false;
    const { userId, sessionId } = who.ctx.actor;
    const key = `${who.wid}:${userId}`;
    const changed = this.#teams.get(key);
    return (
      this.#sessions.has(sessionId) ||
      upTo(this.#users.get(userId)) ||
      upTo(this.#members.get(key)) ||
      (changed !== undefined && who.iat < changed)
    );
  }

  prune(): void {
    const oldest = this.#now() - REMEMBER_REVOKED_MS / 1000;
    for (const map of [
      this.#sessions,
      this.#users,
      this.#members,
      this.#workspaces,
      this.#teams,
      this.#tokens,
      this.#apiKeys,
      this.#visitors,
      this.#contacts,
      this.#widgets,
    ]) {
      for (const [k, at] of map) if (at < oldest) map.delete(k);
    }
  }
}
