// Joining and leaving topics (docs/realtime.md "Topics"): who may join which topic, the hub of
// the topic's workspace, the reply with latest_seq, a widget's replay of what it missed, and the
// presence a join starts.
import { canSeeTeam } from '../platform/http/team-access.js';
import type { Conn, TicketInfo } from './conn.js';
import { AGENTS_PREFIX, answer, type GatewayCore, MAX_TOPICS_PER_SOCKET } from './core.js';
import { Hub } from './hub.js';
import { forVisitors } from './live.js';
import { PRESENCE_STATES, type PresenceState } from './meta.js';
import { broadcastFrame, encodeFrame, type Frame } from './protocol.js';
import { ticketForJoin, userProfile } from './queries.js';
import { type Missed, missedEvents, sinceOf } from './replay.js';
import { parseTopic, type Topic } from './topics.js';

type JoinOutcome =
  | { ok: true; ticket?: { id: string; info: TicketInfo } }
  | { ok: false; reason: 'forbidden' | 'unavailable' };

export async function join(g: GatewayCore, conn: Conn, f: Frame) {
  const topic = f.topic;
  if (!conn.joined.has(topic) && conn.joined.size >= MAX_TOPICS_PER_SOCKET) {
    return answer(conn, f, 'error', { reason: 'too_many_topics' });
  }
  const t = parseTopic(topic);
  const outcome: JoinOutcome = t ? await authorize(g, conn, t, f.payload) : { ok: false, reason: 'forbidden' };
  if (conn.closed) return;
  if (!outcome.ok) return answer(conn, f, 'error', { reason: outcome.reason });
  const wid = t!.kind === 'user' ? conn.wid : (t as Exclude<Topic, { kind: 'user' }>).wid;
  const hub = hubFor(g, wid);
  hub.pending++;
  try {
    await hub.ready;
  } catch (err) {
    hub.pending--;
    g.deps.log.warn({ err: String(err), workspace_id: wid }, 'gateway could not start a workspace');
    return answer(conn, f, 'error', { reason: 'unavailable' });
  }
  hub.pending--;
  if (conn.closed || g.hubs.get(wid) !== hub) {
    releaseIfIdle(g, hub);
    if (!conn.closed) answer(conn, f, 'error', { reason: 'unavailable' });
    return;
  }
  // A second join of the same topic replaces the first (the Phoenix client rejoins this way).
  const previous = conn.joined.get(topic);
  if (conn.joined.has(topic)) {
    part(g, conn, topic);
    conn.send(encodeFrame(previous ?? null, null, topic, 'phx_close', {}));
  }
  conn.joined.set(topic, f.joinRef);
  // A widget that joins with {since: seq} gets the public events of its topic it missed, then
  // the live ones; live events wait (conn.held) until the missed ones are sent.
  const upTo = hub.lastSeq;
  const since = t!.kind === 'contact' ? sinceOf(f.payload.since) : null;
  const replay = since !== null && since < upTo;
  if (replay) {
    conn.held ??= new Map();
    conn.held.set(topic, []);
  }
  hub.subscribe(topic, conn);
  const response: Record<string, unknown> = { server_time: new Date().toISOString() };
  if (t!.kind === 'workspace' || t!.kind === 'contact') response.latest_seq = upTo;
  if (replay) {
    let missed: Missed;
    try {
      missed = await missedEvents(g.deps.database.db, wid, topic, since, upTo);
    } catch (err) {
      conn.held?.delete(topic);
      throw err;
    }
    if (conn.closed || conn.joined.get(topic) !== f.joinRef || !conn.held?.has(topic)) return;
    if (missed.resync) response.resync = true;
    answer(conn, f, 'ok', response);
    for (const e of missed.events) conn.sendWire(broadcastFrame(topic, 'event', JSON.stringify(e)));
    const held = conn.held.get(topic) ?? [];
    conn.held.delete(topic);
    for (const frame of held) conn.sendWire(frame);
  } else {
    answer(conn, f, 'ok', response);
  }
  if (t!.kind === 'contact') {
    // Who of the workspace's people is online, for the widget: names and pictures only.
    conn.send(encodeFrame(f.joinRef, null, topic, 'presence_state', forVisitors(g.presence.list(AGENTS_PREFIX + wid))));
  }
  if (t!.kind === 'workspace' && conn.who.kind === 'agent' && conn.userId) {
    const profile = conn.profile ?? { name: '', avatar: null };
    g.presence.track(AGENTS_PREFIX + wid, conn.id, {
      user_id: conn.userId,
      name: profile.name,
      avatar: profile.avatar,
      state: 'viewing',
    });
  }
  if (outcome.ticket && conn.who.kind === 'agent' && conn.userId) {
    conn.tickets ??= new Map();
    conn.tickets.set(outcome.ticket.id, outcome.ticket.info);
    conn.send(encodeFrame(f.joinRef, null, topic, 'presence_state', g.presence.list(topic)));
    const state = PRESENCE_STATES.includes(f.payload.state as PresenceState)
      ? (f.payload.state as PresenceState)
      : 'viewing';
    const profile = conn.profile ?? { name: '', avatar: null };
    g.presence.track(topic, conn.id, { user_id: conn.userId, name: profile.name, avatar: profile.avatar, state });
  }
}

/** Who may join which topic (docs/realtime.md "Topics"). */
async function authorize(g: GatewayCore, conn: Conn, t: Topic, payload: Record<string, unknown>): Promise<JoinOutcome> {
  const no: JoinOutcome = { ok: false, reason: 'forbidden' };
  const who = conn.who;
  if (who.kind === 'widget') {
    return t.kind === 'contact' && t.wid === who.wid && t.contactId === who.contactId ? { ok: true } : no;
  }
  const ctx = who.ctx;
  switch (t.kind) {
    case 'workspace':
      if (t.wid !== who.wid) return no;
      // A person on the workspace topic is online for the widget (name and picture).
      if (ctx.actor.kind === 'member') await loadProfile(g, conn, ctx.actor.userId);
      return { ok: true };
    case 'team':
      // The private teams' rule (team-access.ts): admins and owners every team, others their own.
      return t.wid === who.wid && canSeeTeam(ctx, t.teamId) ? { ok: true } : no;
    case 'user':
      return ctx.actor.kind === 'member' && ctx.actor.userId === t.userId ? { ok: true } : no;
    case 'contact':
      return no;
    case 'ticket': {
      if (t.wid !== who.wid || ctx.actor.kind !== 'member') return no;
      const row = await ticketForJoin(g.deps.database.db, t.wid, t.ticketId);
      if (!row) return no;
      const privateTeam = row.private ? row.team_id : null;
      // A private team's ticket: joined with its team_id, by someone who may see the team.
      if (privateTeam !== null && payload.team_id !== privateTeam) return no;
      if (!canSeeTeam(ctx, privateTeam)) return no;
      await loadProfile(g, conn, ctx.actor.userId);
      return { ok: true, ticket: { id: t.ticketId, info: { contactId: row.contact_id, channel: row.channel } } };
    }
  }
}

/** The person's name and picture, for presence and typing (read once per socket). */
async function loadProfile(g: GatewayCore, conn: Conn, userId: string): Promise<void> {
  if (conn.profile) return;
  const user = await userProfile(g.deps.database.db, userId);
  conn.profile = { name: user?.name ?? '', avatar: user?.avatar_url ?? null };
}

/** Leaves a topic: unsubscribes, and ends the socket's presence there. */
export function part(g: GatewayCore, conn: Conn, topic: string): void {
  const t = parseTopic(topic);
  if (!t) return;
  const hub = g.hubs.get(t.kind === 'user' ? conn.wid : t.wid);
  if (t.kind === 'ticket') {
    g.presence.untrack(topic, conn.id);
    conn.tickets?.delete(t.ticketId);
  }
  if (t.kind === 'workspace') g.presence.untrack(AGENTS_PREFIX + t.wid, conn.id);
  conn.held?.delete(topic);
  if (!hub) return;
  hub.unsubscribe(topic, conn);
  releaseIfIdle(g, hub);
}

function hubFor(g: GatewayCore, wid: string): Hub {
  let hub = g.hubs.get(wid);
  if (!hub) {
    const created = new Hub(
      wid,
      g.deps.database,
      g.deps.log,
      () => g.limits.gapWaitMs,
      (n) => g.delivered(n),
    );
    created.ready.catch(() => {
      if (g.hubs.get(wid) === created) g.hubs.delete(wid);
      created.close();
    });
    g.hubs.set(wid, created);
    hub = created;
  }
  return hub;
}

function releaseIfIdle(g: GatewayCore, hub: Hub): void {
  if (!hub.idle || g.hubs.get(hub.wid) !== hub) return;
  hub.close();
  g.hubs.delete(hub.wid);
}
