// The timeline of a ticket that is not messages: status, priority, severity, assignee and team
// changes, merges (and, with later issues, labels, SLA breaches, CSAT, field changes). Each
// activity is written in the change's transaction and published as activity.created.
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { type Actor, actingContactId, actingUserId, recordedActorType } from '../../platform/http/context.js';
import { iso } from '../../platform/http/schemas.js';
import type { Activity, ActivityActor } from './schemas.js';

export type ActivityView = Static<typeof Activity>;
type ActorView = Static<typeof ActivityActor>;
type UserRefView = NonNullable<ActorView['user']>;

/**
 * The activity's actor columns (`actor_type` as the API names it: a member is a `user`, a visitor
 * or a customer the `system` with the contact in actor_contact_id; an AI's user is the person it
 * acted for).
 */
export function actorColumns(actor: Actor) {
  return {
    actor_type: recordedActorType(actor),
    actor_user_id: actingUserId(actor),
    actor_api_key_id: actor.kind === 'api_key' ? actor.apiKeyId : null,
    actor_automation_id: actor.kind === 'automation' ? actor.automationId : null,
    actor_contact_id: actingContactId(actor),
  };
}

/** The API's actor: the contract's four fields, and contact_id only when a contact acted. */
function actorView(
  r: {
    actor_type: ActorView['type'];
    actor_api_key_id: string | null;
    actor_automation_id: string | null;
    actor_contact_id: string | null;
  },
  user: UserRefView | null,
): ActorView {
  return {
    type: r.actor_type,
    user,
    api_key_id: r.actor_api_key_id,
    automation_id: r.actor_automation_id,
    ...(r.actor_contact_id !== null ? { contact_id: r.actor_contact_id } : {}),
  };
}

const userRefs = new WeakMap<object, Promise<UserRefView | null>>();

/** The acting person's UserRef, read once per request (per actor object). */
export function userRefOf(db: Kysely<DB>, actor: Actor): Promise<UserRefView | null> {
  const userId = actingUserId(actor);
  if (userId === null) return Promise.resolve(null);
  let ref = userRefs.get(actor);
  if (!ref) {
    ref = db
      .selectFrom('users')
      .select(['id', 'name', 'email', 'avatar_url'])
      .where('id', '=', userId)
      .executeTakeFirst()
      .then((r) => r ?? null);
    userRefs.set(actor, ref);
  }
  return ref;
}

export interface TicketEventTarget {
  id: string;
  /** The ticket's private team (events go to the team topic in full, stand-ins elsewhere). */
  privateTeamId: string | null;
}

/** Writes one activity and its activity.created event. */
export async function addActivity(
  u: Unit,
  actor: Actor,
  ticket: TicketEventTarget,
  type: string,
  data: Record<string, unknown>,
): Promise<ActivityView> {
  return (await addActivities(u, ticket, [{ actor, type, data }]))[0]!;
}

/** Writes a change's activities in one statement, and their activity.created events in order. */
export async function addActivities(
  u: Unit,
  ticket: TicketEventTarget,
  items: Array<{ actor: Actor; type: string; data: Record<string, unknown> }>,
): Promise<ActivityView[]> {
  if (items.length === 0) return [];
  const rows = items.map((it) => ({
    workspace_id: u.workspaceId,
    id: newId(),
    ticket_id: ticket.id,
    type: it.type,
    data: JSON.stringify(it.data),
    ...actorColumns(it.actor),
  }));
  const written = await u.trx.insertInto('ticket_activities').values(rows).returning(['id', 'created_at']).execute();
  const at = new Map(written.map((w) => [w.id, w.created_at]));
  const views: ActivityView[] = [];
  for (const [i, it] of items.entries()) {
    const r = rows[i]!;
    const view: ActivityView = {
      id: r.id,
      ticket_id: ticket.id,
      type: it.type,
      data: it.data,
      actor: actorView(r, await userRefOf(u.trx, it.actor)),
      created_at: iso(at.get(r.id))!,
    };
    u.emit({
      type: 'activity.created',
      data: { ticket_id: ticket.id, activity: view },
      teamId: ticket.privateTeamId,
    });
    views.push(view);
  }
  return views;
}

/** A ticket's activities, oldest first (the whole list). */
export async function activitiesOf(db: Kysely<DB>, workspaceId: string, ticketId: string): Promise<ActivityView[]> {
  const rows = await db
    .selectFrom('ticket_activities as a')
    .leftJoin('users as u', 'u.id', 'a.actor_user_id')
    .select([
      'a.id',
      'a.ticket_id',
      'a.type',
      'a.data',
      'a.actor_type',
      'a.actor_user_id',
      'a.actor_api_key_id',
      'a.actor_automation_id',
      'a.actor_contact_id',
      'a.created_at',
      'u.name as user_name',
      'u.email as user_email',
      'u.avatar_url as user_avatar_url',
    ])
    .where('a.workspace_id', '=', workspaceId)
    .where('a.ticket_id', '=', ticketId)
    .orderBy('a.created_at')
    .orderBy('a.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    ticket_id: r.ticket_id,
    type: r.type,
    data: r.data ?? {},
    actor: actorView(
      r,
      r.actor_user_id !== null && r.user_name !== null
        ? { id: r.actor_user_id, name: r.user_name, email: r.user_email ?? '', avatar_url: r.user_avatar_url }
        : null,
    ),
    created_at: iso(r.created_at)!,
  }));
}
