// Presence and typing between the people looking at the same ticket, the workspace's people
// online as widgets see them, and the broadcasts that carry them (never stored; with NATS, to
// the other gateway processes too).
import type { Conn } from './conn.js';
import { answer, type GatewayCore } from './core.js';
import { type Meta, PRESENCE_STATES, type PresenceState } from './meta.js';
import type { PresenceList } from './presence.js';
import { broadcastFrame, type Frame, type WireFrame } from './protocol.js';
import { ticketContact } from './queries.js';
import { isUuid, parseTopic, type Topic } from './topics.js';

export function onPresence(g: GatewayCore, conn: Conn, f: Frame) {
  const state = f.payload.state as PresenceState;
  if (!PRESENCE_STATES.includes(state)) {
    return answer(conn, f, 'error', { reason: 'invalid_payload', detail: 'state: viewing, replying or idle' });
  }
  if (!conn.allow('presence')) return answer(conn, f, 'error', { reason: 'rate_limited' });
  g.presence.update(f.topic, conn.id, state);
  answer(conn, f, 'ok');
}

export function onAgentTyping(g: GatewayCore, conn: Conn, t: Extract<Topic, { kind: 'ticket' }>, f: Frame) {
  if (!conn.userId) return answer(conn, f, 'error', { reason: 'forbidden' });
  if (f.payload.contact_id !== undefined && !isUuid(f.payload.contact_id)) {
    return answer(conn, f, 'error', { reason: 'invalid_payload', detail: 'contact_id: a contact id' });
  }
  if (!conn.allow('typing')) return answer(conn, f, 'error', { reason: 'rate_limited' });
  const name = conn.profile?.name ?? '';
  publish(g, f.topic, 'typing', { ticket_id: t.ticketId, user_id: conn.userId, name }, conn.userId);
  // On a chat ticket the customer's widget sees it too (contact_id names the ticket's contact).
  const ticket = conn.tickets?.get(t.ticketId);
  if (ticket && ticket.channel === 'chat' && ticket.contactId && f.payload.contact_id === ticket.contactId) {
    publish(
      g,
      `contact:${t.wid}:${ticket.contactId}`,
      'typing',
      {
        ticket_id: t.ticketId,
        user: { id: conn.userId, name, avatar_url: conn.profile?.avatar ?? null },
      },
      null,
    );
  }
  answer(conn, f, 'ok');
}

export async function onWidgetTyping(g: GatewayCore, conn: Conn, f: Frame) {
  if (conn.who.kind !== 'widget') return answer(conn, f, 'error', { reason: 'forbidden' });
  const ticketId = f.payload.ticket_id;
  if (!isUuid(ticketId)) {
    return answer(conn, f, 'error', { reason: 'invalid_payload', detail: 'ticket_id: a ticket id' });
  }
  if (!conn.allow('typing')) return answer(conn, f, 'error', { reason: 'rate_limited' });
  const { wid, contactId } = conn.who;
  if (!conn.tickets?.has(ticketId)) {
    const row = await ticketContact(g.deps.database.db, wid, ticketId);
    if (!row || row.contact_id !== contactId) return answer(conn, f, 'error', { reason: 'forbidden' });
    conn.tickets ??= new Map();
    if (conn.tickets.size < 100) conn.tickets.set(ticketId, { contactId, channel: row.channel });
  }
  if (conn.closed) return;
  publish(g, `ticket:${wid}:${ticketId}`, 'customer_typing', { ticket_id: ticketId, contact_id: contactId }, null);
  answer(conn, f, 'ok');
}

/** The workspace's people online changed: every widget of the workspace hears it (names and pictures). */
export function agentsChanged(g: GatewayCore, wid: string, diff: { joins: PresenceList; leaves: PresenceList }): void {
  const hub = g.hubs.get(wid);
  if (!hub) return;
  let payload: string | undefined;
  for (const [topic, subs] of hub.subs) {
    if (!topic.startsWith('contact:')) continue;
    payload ??= JSON.stringify({ joins: forVisitors(diff.joins), leaves: forVisitors(diff.leaves) });
    const frame = broadcastFrame(topic, 'presence_diff', payload);
    for (const c of subs) c.sendWire(frame);
  }
}

/** To this process's sockets of the topic and to the other gateways' (never stored). */
export function publish(g: GatewayCore, topic: string, event: string, payload: unknown, exceptUser: string | null) {
  broadcastLocal(g, topic, event, payload, exceptUser);
  g.peers?.send({ t: 'push', node: g.node, topic, event, payload, except_user: exceptUser });
}

export function broadcastLocal(
  g: GatewayCore,
  topic: string,
  event: string,
  payload: unknown,
  exceptUser: string | null,
): void {
  const t = parseTopic(topic);
  if (!t || t.kind === 'user') return;
  const subs = g.hubs.get(t.wid)?.subs.get(topic);
  if (!subs) return;
  let frame: WireFrame | undefined;
  for (const c of subs) {
    if (exceptUser !== null && c.userId === exceptUser) continue;
    frame ??= broadcastFrame(topic, event, JSON.stringify(payload));
    c.sendWire(frame);
  }
}

/** Presence as a widget sees it: each person's name and picture (keyed by user id), nothing else. */
export function forVisitors(list: PresenceList): PresenceList {
  const out: PresenceList = {};
  for (const [key, { metas }] of Object.entries(list)) {
    out[key] = {
      metas: metas.map((m) => ({
        phx_ref: m.phx_ref,
        ...(m.phx_ref_prev ? { phx_ref_prev: m.phx_ref_prev } : {}),
        name: m.name,
        avatar: m.avatar,
        online_at: m.online_at,
      })) as Meta[],
    };
  }
  return out;
}
