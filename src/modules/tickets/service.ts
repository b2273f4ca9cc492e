// Tickets: create, read, change, soft delete, bulk changes and merges. Every write is one
// transaction that locks the ticket row, applies the status rules, writes activities and
// appends its events (ticket.*, activity.*, message.*) before COMMIT.
import type { Static } from '@sinclair/typebox';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import type { JsonText } from '../../platform/http/json.js';
import { mergeCustom } from '../../platform/http/values.js';
import { recordAudit } from '../audit/service.js';
import { findOrCreateContactByEmail } from '../contacts/service.js';
import { applyFieldValues } from '../custom-fields/values.js';
import { loadMailbox } from '../mailboxes/service.js';
import { applyTags } from '../tags/records.js';
import { canSeeTeam } from '../teams/access.js';
import { addActivity } from './activities.js';
import { hookMessage } from './hooks.js';
import { takeTicketNumber } from './numbers.js';
import { cleanBody, insertMessage, outboundMessageStats } from './outbound-message.js';
import { applyPatch, emitUpdated, type PatchInput } from './patch.js';
import {
  parseTicketRef,
  presentTicket,
  reload,
  type TicketRef,
  type TicketRow,
  type TicketView,
  ticketQuery,
} from './queries.js';
import { checkAssignee, checkContact, checkTeam } from './references.js';
import type { BulkBody, CreateTicketBody, MergeBody } from './schemas.js';
import { checkRequiredFields, isDone } from './status.js';

export type { TicketView } from './queries.js';

const NOT_FOUND = 'Ticket not found.';

/** The ticket a path names, by id or by number. */
const byRef = (ref: TicketRef) => (eb: ExpressionBuilder<DB & { t: DB['tickets'] }, 't'>) =>
  'id' in ref ? eb('t.id', '=', ref.id) : eb('t.number', '=', ref.number);

/** The private team of a row as events and visibility need it. */
const target = (r: TicketRow) => ({ id: r.id, privateTeamId: r.private_team_id });

const visible = (ctx: RequestContext, r: TicketRow): boolean => canSeeTeam(ctx, r.private_team_id);

/** A live ticket the caller may see, or 404 (missing, deleted, another workspace, a hidden team). */
export async function findVisibleTicket(db: Kysely<DB>, ctx: RequestContext, param: string): Promise<TicketRow> {
  const ref = parseTicketRef(param);
  if (!ref) throw notFound(NOT_FOUND);
  const row = await ticketQuery(db, ctx.workspaceId).where(byRef(ref)).executeTakeFirst();
  if (!row || row.deleted_at !== null || !visible(ctx, row)) throw notFound(NOT_FOUND);
  return row;
}

/** The same, locked FOR UPDATE in the unit's transaction. */
export async function lockVisibleTicket(u: Unit, ctx: RequestContext, param: string): Promise<TicketRow> {
  const ref = parseTicketRef(param);
  if (!ref) throw notFound(NOT_FOUND);
  const row = await ticketQuery(u.trx, ctx.workspaceId).where(byRef(ref)).forUpdate('t').executeTakeFirst();
  if (!row || row.deleted_at !== null || !visible(ctx, row)) throw notFound(NOT_FOUND);
  return row;
}

/** The ticket as JSON text, as PostgreSQL built it. */
export async function getTicket(deps: Deps, ctx: RequestContext, param: string): Promise<JsonText> {
  return (await findVisibleTicket(deps.database.db, ctx, param)).json as JsonText;
}

// ---------------------------------------------------------------------------------------------
// Create

export async function createTicket(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateTicketBody>,
): Promise<TicketView> {
  const subject = input.subject.trim();
  if (subject === '') throw invalid('body.subject', 'must not be blank');
  if (input.contact_id !== undefined && input.contact !== undefined) {
    throw invalid('body.contact', 'send contact_id or contact, not both');
  }
  if (input.kind !== undefined && input.body_html === undefined) {
    throw invalid('body.kind', 'needs body_html (the first message)');
  }
  const custom = mergeCustom({}, input.custom ?? {});
  const status = input.status ?? 'open';
  const body = input.body_html === undefined ? null : cleanBody(input.body_html, false);

  return deps.writer.run(ctx.workspaceId, async (u) => {
    let contactId: string | null = null;
    if (input.contact_id !== undefined) {
      await checkContact(u, input.contact_id.toLowerCase(), 'body.contact_id');
      contactId = input.contact_id.toLowerCase();
    } else if (input.contact !== undefined) {
      contactId = await findOrCreateContactByEmail(u, input.contact.email, input.contact.name ?? null);
    }
    let mailboxId: string | null = null;
    if (input.mailbox_id !== undefined && input.mailbox_id !== null) {
      const mailbox = await loadMailbox(u.trx, ctx.workspaceId, input.mailbox_id);
      if (!mailbox) throw invalid('body.mailbox_id', 'no such mailbox in this workspace');
      mailboxId = mailbox.id;
    }
    const assigneeId = input.assignee_id?.toLowerCase() ?? null;
    if (assigneeId !== null) await checkAssignee(u, assigneeId, 'body.assignee_id');
    const teamId = input.team_id?.toLowerCase() ?? null;
    if (teamId !== null) await checkTeam(u, teamId, 'body.team_id');
    const { fields } = await applyFieldValues(u, 'ticket', {}, input.fields ?? {}, 'body.fields');
    await checkRequiredFields(u.trx, ctx.workspaceId, status, fields);

    const id = newId();
    const now = new Date();
    const priority = input.priority ?? 'normal';
    const kind = input.kind ?? 'reply';
    // The first message's statistics and the hooks' columns (SLA due dates) go in the INSERT.
    const stats = body === null ? null : outboundMessageStats(ctx.actor, kind, body.text, now, null);
    const hooked = await deps.ticketHooks.prepareCreated(deps, u, {
      priority,
      status,
      created_at: now,
      first_responded_at: stats?.first_responded_at ?? null,
      spam: false,
    });
    // The number comes last before the insert, once every check has passed (numbers.ts).
    const number = await takeTicketNumber(deps, u);
    await sql`
      INSERT INTO tickets (workspace_id, id, number, subject, status, priority, severity, channel, contact_id,
                           assignee_id, team_id, mailbox_id, last_message_at, solved_at, custom, fields,
                           message_count, last_message_preview, first_responded_at, sla, due_at, sla_breach_at,
                           created_at, updated_at)
      VALUES (${ctx.workspaceId}, ${id}, ${number}, ${subject}, ${status}, ${priority},
             ${input.severity ?? null}, ${input.channel ?? 'api'}, ${contactId}, ${assigneeId}, ${teamId}, ${mailboxId},
             ${now}, ${isDone(status) ? now : null}, ${JSON.stringify(custom)}::jsonb, ${JSON.stringify(fields)}::jsonb,
             ${stats === null ? 0 : 1}, ${stats?.last_message_preview ?? ''}, ${stats?.first_responded_at ?? null},
             ${hooked.sla}::jsonb, ${hooked.due_at}, ${hooked.sla_breach_at}, ${now}, ${now})`.execute(u.trx);

    if (input.tags !== undefined)
      await applyTags(u, ctx, { entity: 'ticket', id }, { tags: input.tags }, { locked: true, current: [] });
    const row = await reload(u, id);
    const first = body === null ? null : await insertMessage(deps, u, ctx.actor, row, { kind, body }, { now });
    // ticket.created comes before its first message's message.created, and both before what
    // the workflow hooks (automations, assignment) change next.
    u.emit({ type: 'ticket.created', data: { ticket: presentTicket(row) }, teamId: row.private_team_id });
    if (first) u.emit(first.event);
    const after = await deps.ticketHooks.run(deps, u, {
      trigger: 'ticket_created',
      ticket: row,
      before: null,
      changes: [],
      message: first ? hookMessage(first.message) : null,
      ctx,
    });
    return presentTicket(after ?? row);
  });
}

// ---------------------------------------------------------------------------------------------
// Update (PATCH, bulk, a reply carrying status)

export async function updateTicket(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  patch: PatchInput,
): Promise<TicketView> {
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockVisibleTicket(u, ctx, param);
    const { row } = await applyPatch(deps, u, ctx, before, patch);
    return presentTicket(row);
  });
}

// ---------------------------------------------------------------------------------------------
// Delete (soft): gone from lists and GET, kept for audit; its number is never reused.

async function softDelete(u: Unit, ctx: RequestContext, row: TicketRow): Promise<void> {
  await u.trx
    .updateTable('tickets')
    .set({ deleted_at: new Date(), updated_at: new Date() })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', row.id)
    .execute();
  u.emit({ type: 'ticket.deleted', data: { ticket_id: row.id }, teamId: row.private_team_id });
  await recordAudit(u.trx, ctx, {
    action: 'ticket.deleted',
    entityType: 'ticket',
    entityId: row.id,
    data: { number: Number(row.number), subject: row.subject },
  });
}

export async function deleteTicket(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  await deps.writer.run(ctx.workspaceId, async (u) => {
    await softDelete(u, ctx, await lockVisibleTicket(u, ctx, param));
  });
}

// ---------------------------------------------------------------------------------------------
// Bulk: up to 100 tickets in one transaction, all or nothing; each ticket gets its own events
// and activities. Locks are taken in id order so two bulk calls cannot deadlock.

export async function bulkTickets(deps: Deps, ctx: RequestContext, input: Static<typeof BulkBody>) {
  if ((input.patch === undefined) === (input.delete === undefined)) {
    throw invalid('body', 'send either patch or delete: true');
  }
  const refs = input.ids.map((p, i) => {
    const ref = parseTicketRef(p);
    if (!ref) throw notFound(`${NOT_FOUND} (body.ids.${i})`);
    return ref;
  });
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const ids = refs.filter((r): r is { id: string } => 'id' in r).map((r) => r.id);
    const numbers = refs.filter((r): r is { number: number } => 'number' in r).map((r) => r.number);
    const rows = await ticketQuery(u.trx, ctx.workspaceId)
      .where((eb) =>
        eb.or([
          ...(ids.length > 0 ? [eb('t.id', 'in', ids)] : []),
          ...(numbers.length > 0 ? [eb('t.number', 'in', numbers)] : []),
        ]),
      )
      .orderBy('t.id')
      .forUpdate('t')
      .execute();
    const rowOf = (r: TicketRef) => rows.find((x) => ('id' in r ? x.id === r.id : Number(x.number) === r.number));
    const found: TicketRow[] = [];
    refs.forEach((r, i) => {
      const row = rowOf(r);
      if (!row || row.deleted_at !== null || !visible(ctx, row)) throw notFound(`${NOT_FOUND} (body.ids.${i})`);
      if (!found.includes(row)) found.push(row);
    });
    found.sort((a, b) => (a.id < b.id ? -1 : 1));
    if (input.delete) {
      for (const row of found) await softDelete(u, ctx, row);
      return { data: [], deleted_ids: found.map((r) => r.id) };
    }
    const out: TicketView[] = [];
    for (const row of found)
      out.push(presentTicket((await applyPatch(deps, u, ctx, row, input.patch!, { at: 'body.patch' })).row));
    return { data: out, deleted_ids: [] as string[] };
  });
}

// ---------------------------------------------------------------------------------------------
// Merge: the source's messages move to the target; the source is closed, remembers where it
// went (custom.merged_into) and gets a merged activity. Required fields are not enforced.

export async function mergeTicket(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof MergeBody>,
): Promise<TicketView> {
  const intoRef = parseTicketRef(input.into_id);
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const source0 = await findVisibleTicket(u.trx, ctx, param);
    const into0 = intoRef
      ? await ticketQuery(u.trx, ctx.workspaceId).where(byRef(intoRef)).executeTakeFirst()
      : undefined;
    if (!into0 || into0.deleted_at !== null || !visible(ctx, into0)) {
      throw invalid('body.into_id', 'no such ticket in this workspace (or it was deleted)');
    }
    if (into0.id === source0.id) throw invalid('body.into_id', 'a ticket cannot be merged into itself');
    // Lock both in id order.
    const [first, second] = source0.id < into0.id ? [source0.id, into0.id] : [into0.id, source0.id];
    for (const id of [first, second]) {
      await u.trx
        .selectFrom('tickets')
        .select('id')
        .where('workspace_id', '=', u.workspaceId)
        .where('id', '=', id)
        .forUpdate()
        .execute();
    }
    const source = await reload(u, source0.id);
    const into = await reload(u, into0.id);
    if (source.deleted_at !== null) throw notFound(NOT_FOUND);
    if (source.merged_into_id !== null) throw invalid('body.into_id', 'this ticket was already merged');
    if (into.deleted_at !== null) throw invalid('body.into_id', 'no such ticket in this workspace (or it was deleted)');
    if (into.merged_into_id !== null) throw invalid('body.into_id', 'that ticket was merged into another one');

    await u.trx
      .updateTable('messages')
      .set({ ticket_id: into.id })
      .where('workspace_id', '=', u.workspaceId)
      .where('ticket_id', '=', source.id)
      .execute();
    await refreshMessageStats(u, into.id);
    const intoAfter = await reload(u, into.id);
    emitUpdated(u, intoAfter, ['message_count', 'last_message_at', 'last_message_preview']);

    const custom = { ...(source.custom ?? {}), merged_into: { id: into.id, number: Number(into.number) } };
    await u.trx
      .updateTable('tickets')
      .set({
        status: 'closed',
        solved_at: source.solved_at ?? new Date(),
        snoozed_until: null,
        merged_into_id: into.id,
        custom: JSON.stringify(custom),
        message_count: 0,
        last_message_preview: '',
        updated_at: new Date(),
      })
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', source.id)
      .execute();
    const sourceAfter = await reload(u, source.id);
    if (source.status !== 'closed') {
      await addActivity(u, ctx.actor, target(sourceAfter), 'status_changed', { from: source.status, to: 'closed' });
    }
    await addActivity(u, ctx.actor, target(sourceAfter), 'merged', { into: into.id });
    emitUpdated(u, sourceAfter, [
      ...(source.status !== 'closed' ? ['status'] : []),
      'custom',
      'message_count',
      'last_message_preview',
    ]);
    return presentTicket(intoAfter);
  });
}

/** Recomputes a ticket's message statistics from its messages (after a merge moved some in). */
async function refreshMessageStats(u: Unit, ticketId: string): Promise<void> {
  await sql`
    UPDATE tickets t SET
      message_count = s.n,
      last_message_at = greatest(t.last_message_at, coalesce(s.last_at, t.last_message_at)),
      last_customer_message_at = s.last_in,
      first_responded_at = s.first_out,
      last_message_preview = coalesce(s.preview, t.last_message_preview),
      updated_at = now()
    FROM (
      SELECT count(*)::int AS n,
             max(created_at) AS last_at,
             max(created_at) FILTER (WHERE direction = 'inbound') AS last_in,
             min(created_at) FILTER (WHERE kind = 'reply' AND direction = 'outbound' AND author_type IN ('user', 'api'))
               AS first_out,
             (SELECT left(regexp_replace(m2.body_text, '\\s+', ' ', 'g'), 200) FROM messages m2
               WHERE m2.workspace_id = ${u.workspaceId} AND m2.ticket_id = ${ticketId}
               ORDER BY m2.created_at DESC, m2.id DESC LIMIT 1) AS preview
        FROM messages WHERE workspace_id = ${u.workspaceId} AND ticket_id = ${ticketId}
    ) s
    WHERE t.workspace_id = ${u.workspaceId} AND t.id = ${ticketId}`.execute(u.trx);
}
