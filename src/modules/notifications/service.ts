// Notifications: a note to one member about a ticket (assigned, mentioned, customer_replied,
// sla_breached) or about the workspace (AI balance and keys). Written in the transaction of
// the change that causes it; notification.created goes to the recipient's user:<uid> topic.
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { forbidden, invalid } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';

export type NotificationType =
  | 'assigned'
  | 'mentioned'
  | 'customer_replied'
  | 'sla_breached'
  | 'ai_handoff'
  | 'ai_cap_reached'
  | 'ai_balance_low'
  | 'ai_balance_out'
  | 'auto_recharge_failed'
  | 'ai_key_failed';

export interface NotificationView {
  id: string;
  type: NotificationType;
  ticket: { id: string; number: number; subject: string } | null;
  data: Record<string, unknown>;
  read_at: string | null;
  created_at: string;
}

export interface NewNotification {
  userId: string;
  type: NotificationType;
  /** The ticket it is about (id, number, subject), or null for a workspace notice. */
  ticket: { id: string; number: number | string; subject: string } | null;
  data?: Record<string, unknown>;
}

/**
 * Notifies one member, inside the unit's transaction. A member notifies nobody about their own
 * doing: callers skip the acting user (e.g. no `assigned` when you take a ticket yourself). Null
 * when the member muted the type here (GET /v1/notifications/settings) or is no member.
 */
export async function notify(u: Unit, n: NewNotification): Promise<NotificationView | null> {
  const member = await u.trx
    .selectFrom('members')
    .select('notifications_muted')
    .where('workspace_id', '=', u.workspaceId)
    .where('user_id', '=', n.userId)
    .executeTakeFirst();
  if (!member || member.notifications_muted.includes(n.type)) return null;
  const id = newId();
  const data = n.data ?? {};
  const row = await u.trx
    .insertInto('notifications')
    .values({
      workspace_id: u.workspaceId,
      id,
      user_id: n.userId,
      type: n.type,
      ticket_id: n.ticket?.id ?? null,
      data: JSON.stringify(data),
    })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  const view: NotificationView = {
    id,
    type: n.type,
    ticket: n.ticket ? { id: n.ticket.id, number: Number(n.ticket.number), subject: n.ticket.subject } : null,
    data,
    read_at: null,
    created_at: iso(row.created_at)!,
  };
  u.emit({ type: 'notification.created', data: { notification: view }, topics: [`user:${n.userId}`] });
  return view;
}

// ---------------------------------------------------------------------------------------------
// Reading: GET /v1/notifications (the caller's own), POST /v1/notifications/read.

export type ListSort = 'newest' | 'unread_first';

function notificationQuery(db: Kysely<DB>, workspaceId: string, userId: string) {
  return db
    .selectFrom('notifications as n')
    .leftJoin('tickets as t', (j) => j.onRef('t.workspace_id', '=', 'n.workspace_id').onRef('t.id', '=', 'n.ticket_id'))
    .select([
      'n.id',
      'n.type',
      'n.ticket_id',
      't.number',
      't.subject',
      'n.data',
      'n.read_at',
      'n.created_at',
      microsOf('n.created_at').as('created_us'),
    ])
    .where('n.workspace_id', '=', workspaceId)
    .where('n.user_id', '=', userId);
}

type NotificationRow = Awaited<ReturnType<ReturnType<typeof notificationQuery>['executeTakeFirstOrThrow']>>;

function presentRow(r: NotificationRow): NotificationView {
  return {
    id: r.id,
    type: r.type as NotificationType,
    // The ticket's number and subject as they are now.
    ticket:
      r.ticket_id !== null && r.number !== null
        ? { id: r.ticket_id, number: Number(r.number), subject: r.subject ?? '' }
        : null,
    data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) ?? {},
    read_at: iso(r.read_at),
    created_at: iso(r.created_at)!,
  };
}

async function unreadCount(db: Kysely<DB>, workspaceId: string, userId: string): Promise<number> {
  const r = await db
    .selectFrom('notifications')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

function userOf(ctx: RequestContext): string {
  if (ctx.actor.kind !== 'member') throw forbidden('Notifications belong to people; API keys have none.');
  return ctx.actor.userId;
}

// ---------------------------------------------------------------------------------------------
// Choices: GET and PATCH /v1/notifications/settings (the caller's, in this workspace).

export async function notificationSettings(deps: Deps, ctx: RequestContext): Promise<{ muted: NotificationType[] }> {
  const row = await deps.database.db
    .selectFrom('members')
    .select('notifications_muted')
    .where('workspace_id', '=', ctx.workspaceId)
    .where('user_id', '=', userOf(ctx))
    .executeTakeFirstOrThrow();
  return { muted: row.notifications_muted as NotificationType[] };
}

export async function setNotificationSettings(
  deps: Deps,
  ctx: RequestContext,
  input: { muted: NotificationType[] },
): Promise<{ muted: NotificationType[] }> {
  const userId = userOf(ctx);
  await deps.writer.run(ctx.workspaceId, async (u) => {
    await u.trx
      .updateTable('members')
      .set({ notifications_muted: [...new Set(input.muted)], updated_at: new Date() })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', '=', userId)
      .execute();
  });
  return notificationSettings(deps, ctx);
}

/**
 * The caller's notifications in this workspace. sort=newest (default): newest first.
 * sort=unread_first: unread ones newest first, then read ones newest first (each part on its
 * own index). unread=true: unread only. A page also carries unread_count.
 */
export async function listNotifications(
  deps: Deps,
  ctx: RequestContext,
  q: { sort?: ListSort; unread?: boolean; limit?: number; cursor?: string },
): Promise<Page<NotificationView> & { unread_count: number }> {
  const userId = userOf(ctx);
  const db = deps.database.db;
  const limit = q.limit ?? 50;
  const sort: ListSort = q.unread ? 'newest' : (q.sort ?? 'newest');
  const list = `notifications:${JSON.stringify([ctx.workspaceId, userId, sort, q.unread === true])}`;
  const count = unreadCount(db, ctx.workspaceId, userId);
  const base = () => notificationQuery(db, ctx.workspaceId, userId);
  const ordered = <Q extends ReturnType<typeof base>>(query: Q, n: number) =>
    query.orderBy('n.created_at', 'desc').orderBy('n.id', 'desc').limit(pageLimit(n)).execute();

  if (sort === 'newest') {
    const after = deps.pager.decode(list, q.cursor, 2);
    let query = base();
    if (q.unread) query = query.where('n.read_at', 'is', null);
    if (after) query = query.where(createdBefore('n', after));
    const rows = await ordered(query, limit + 1);
    return {
      ...deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], presentRow),
      unread_count: await count,
    };
  }

  // unread_first: position [part ('unread' | 'read'), micros, id].
  const after = deps.pager.decode(list, q.cursor, 3);
  const part = after?.[0] ?? 'unread';
  if (part !== 'unread' && part !== 'read') {
    throw invalid('query.cursor', 'is not a cursor of this list; start again without one');
  }
  const rows: NotificationRow[] = [];
  if (part === 'unread') {
    let query = base().where('n.read_at', 'is', null);
    if (after) query = query.where(createdBefore('n', after.slice(1)));
    rows.push(...(await ordered(query, limit + 1)));
  }
  if (rows.length <= limit) {
    let query = base().where('n.read_at', 'is not', null);
    if (after && part === 'read') query = query.where(createdBefore('n', after.slice(1)));
    rows.push(...(await ordered(query, limit + 1 - rows.length)));
  }
  return {
    ...deps.pager.page(
      list,
      rows,
      limit,
      (r) => [r.read_at === null ? 'unread' : 'read', r.created_us, r.id],
      presentRow,
    ),
    unread_count: await count,
  };
}

/** Marks the caller's notifications read: the ids given (others' ids are ignored), or all. */
export async function markRead(
  deps: Deps,
  ctx: RequestContext,
  input: { ids?: string[]; all?: true },
): Promise<{ read: number; unread_count: number }> {
  const userId = userOf(ctx);
  if ((input.ids === undefined) === (input.all === undefined)) {
    throw invalid('body', 'send either ids (an array) or all: true');
  }
  const db = deps.database.db;
  let query = db
    .updateTable('notifications')
    .set({ read_at: sql<Date>`now()` })
    .where('workspace_id', '=', ctx.workspaceId)
    .where('user_id', '=', userId)
    .where('read_at', 'is', null);
  if (input.ids) query = query.where('id', 'in', [...new Set(input.ids.map((id) => id.toLowerCase()))]);
  const r = await query.executeTakeFirst();
  return { read: Number(r.numUpdatedRows), unread_count: await unreadCount(db, ctx.workspaceId, userId) };
}
