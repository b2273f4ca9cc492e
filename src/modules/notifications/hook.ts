// Ticket notifications (workflow hook, order 40, nested: it also sees the changes other hooks
// make, such as auto-assignment and automations):
// - assigned: to the new assignee whenever the assignee changes (or a ticket is created with
//   one), unless the new assignee made the change themselves;
// - mentioned: to each member a note mentions, once per note, never the note's author, and only
//   members who can see the ticket (a private team's members and admins);
// - customer_replied: to the assignee when the customer writes.
//
// Mention syntax (what survives the HTML sanitizer, which drops data-* attributes): a link
// `<a href="#mention-<user_id>">@Name</a>` (stored as `#user-content-mention-<user_id>`), or
// plain text `@Full Name` / `@email` matching a member (any case; not inside a longer word).
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { actingUserId } from '../../platform/http/context.js';
import { seesEveryTeam } from '../teams/access.js';
import { actorColumns, userRefOf } from '../tickets/activities.js';
import type { TicketChange, TicketHook } from '../tickets/hooks.js';
import type { TicketRow } from '../tickets/queries.js';
import { reload } from '../tickets/queries.js';
import { notify } from './service.js';

const ticketRef = (t: TicketRow) => ({ id: t.id, number: t.number, subject: t.subject });

const excerpt = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 200);

const MENTION_LINK =
  /href="#(?:user-content-)?mention-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"/gi;

/** `@needle` in the text, not inside a longer word or address (case-insensitive). */
export function mentionsText(text: string, needle: string): boolean {
  const hay = text.toLowerCase();
  const n = `@${needle.toLowerCase()}`;
  if (n.length < 2) return false;
  for (let i = hay.indexOf(n); i >= 0; i = hay.indexOf(n, i + 1)) {
    const before = i === 0 ? '' : hay[i - 1]!;
    const after = hay[i + n.length] ?? '';
    if (!/[\p{L}\p{N}._%+-]/u.test(before) && !/[\p{L}\p{N}_@-]/u.test(after)) return true;
  }
  return false;
}

/** Members the note mentions (by link or by text), in workspace order. */
async function mentionedMembers(
  db: Kysely<DB>,
  workspaceId: string,
  html: string,
  text: string,
): Promise<Array<{ user_id: string; role: string }>> {
  const linked = new Set([...html.matchAll(MENTION_LINK)].map((m) => m[1]!.toLowerCase()));
  if (linked.size === 0 && !text.includes('@')) return [];
  const members = await db
    .selectFrom('members as m')
    .innerJoin('users as us', 'us.id', 'm.user_id')
    .select(['m.user_id', 'm.role', 'us.name', 'us.email'])
    .where('m.workspace_id', '=', workspaceId)
    .orderBy('m.created_at')
    .orderBy('m.user_id')
    .execute();
  return members.filter(
    (m) =>
      linked.has(m.user_id) ||
      (m.name.trim() !== '' && mentionsText(text, m.name.trim())) ||
      (m.email !== '' && mentionsText(text, m.email)),
  );
}

async function teamMemberIds(db: Kysely<DB>, workspaceId: string, teamId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('team_members')
    .select('user_id')
    .where('workspace_id', '=', workspaceId)
    .where('team_id', '=', teamId)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

async function onAssigned(u: Unit, change: TicketChange, to: string, from: string | null): Promise<void> {
  if (to === actingUserId(change.ctx.actor)) return;
  await notify(u, {
    userId: to,
    type: 'assigned',
    ticket: ticketRef(change.ticket),
    data: { by: await userRefOf(u.trx, change.ctx.actor), actor_type: actorColumns(change.ctx.actor).actor_type, from },
  });
}

async function onNote(u: Unit, change: TicketChange): Promise<void> {
  const m = change.message;
  if (m?.kind !== 'note') return;
  const author = actingUserId(change.ctx.actor);
  let mentioned = await mentionedMembers(u.trx, u.workspaceId, m.body_html, m.body_text);
  mentioned = mentioned.filter((x) => x.user_id !== author);
  if (mentioned.length === 0) return;
  const t = change.ticket;
  if (t.private_team_id !== null) {
    const team = await teamMemberIds(u.trx, u.workspaceId, t.private_team_id);
    mentioned = mentioned.filter((x) => seesEveryTeam(x.role) || team.has(x.user_id));
  }
  const by = await userRefOf(u.trx, change.ctx.actor);
  for (const x of mentioned) {
    await notify(u, {
      userId: x.user_id,
      type: 'mentioned',
      ticket: ticketRef(t),
      data: { message_id: m.id, by, excerpt: excerpt(m.body_text) },
    });
  }
}

async function onCustomerReply(u: Unit, change: TicketChange): Promise<void> {
  // The assignee as the earlier hooks (automations) left it.
  const t = await reload(u, change.ticket.id);
  if (t.assignee_id === null || !change.message) return;
  await notify(u, {
    userId: t.assignee_id,
    type: 'customer_replied',
    ticket: ticketRef(t),
    data: {
      message_id: change.message.id,
      from_email: change.message.from_email,
      excerpt: excerpt(change.message.body_text),
    },
  });
}

export const notificationsHook: TicketHook = {
  name: 'notifications',
  order: 40,
  nested: true,
  // Notifications never change the ticket's row.
  async run(_deps: Deps, u: Unit, change: TicketChange): Promise<boolean> {
    switch (change.trigger) {
      case 'ticket_created':
        // The assignee the ticket was created with; auto-assignment and automations assign
        // through a ticket_updated of their own.
        // (`origin`: as created, before the hooks before this one changed it).
        {
          const created = change.origin ?? change.ticket;
          if (created.assignee_id !== null) await onAssigned(u, change, created.assignee_id, null);
        }
        return false;
      case 'ticket_updated':
        if (change.changes.includes('assignee_id') && change.ticket.assignee_id !== null) {
          await onAssigned(u, change, change.ticket.assignee_id, change.before?.assignee_id ?? null);
        }
        return false;
      case 'note_added':
        await onNote(u, change);
        return false;
      case 'customer_replied':
        await onCustomerReply(u, change);
        return false;
      default:
        return false;
    }
  },
};
