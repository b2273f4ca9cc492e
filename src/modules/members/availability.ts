// Availability and presence: PATCH /v1/members/{user_id}/availability (self, or admins; the cap
// max_open_tickets is for admins only and never for a viewer) and POST /v1/me/heartbeat (marks
// the caller seen, for auto-away). Presence itself is computed in src/modules/assignment/presence.ts.
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access, type RequestContext } from '../../platform/http/context.js';
import { forbidden, invalid, notFound } from '../../platform/http/errors.js';
import { Nullable } from '../../platform/http/schemas.js';
import { type Availability as AvailabilityValue, presenceOf } from '../assignment/presence.js';
import { recordAudit } from '../audit/service.js';
import { Availability, Member, MemberParams } from './schemas.js';
import { getMemberView, type MemberView, targetId } from './service.js';

export const PatchAvailabilityBody = Type.Object(
  {
    availability: Type.Optional(Availability),
    max_open_tickets: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: 1000,
          description:
            'Admins only: at most this many open, pending or on-hold tickets by auto-assignment; null clears.',
        }),
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** A heartbeat writes last_seen_at at most this often per member (the rest are no-ops). */
export const HEARTBEAT_WRITE_SECONDS = 30;

const isAdmin = (ctx: RequestContext) => ctx.actor.kind === 'api_key' || ctx.role === 'admin' || ctx.role === 'owner';

export async function updateAvailability(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: { availability?: AvailabilityValue; max_open_tickets?: number | null },
): Promise<MemberView> {
  const userId = targetId(ctx, param);
  const self = ctx.actor.kind === 'member' && ctx.actor.userId === userId;
  const admin = isAdmin(ctx);
  if (!self && !admin) throw forbidden("Only admins change another member's availability.");
  if (input.max_open_tickets !== undefined && !admin) throw forbidden('Only admins set max_open_tickets.');
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const target = await u.trx
      .selectFrom('members')
      .select(['role', 'availability', 'max_open_tickets'])
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    if (!target) throw notFound('Member not found.');
    const cap = input.max_open_tickets;
    if (cap !== undefined && cap !== null && target.role === 'viewer') {
      throw invalid('body.max_open_tickets', 'viewers are not assigned tickets, so they have no cap');
    }
    const availabilityChanged = input.availability !== undefined && input.availability !== target.availability;
    const capChanged = cap !== undefined && cap !== target.max_open_tickets;
    if (availabilityChanged || capChanged || self) {
      await u.trx
        .updateTable('members')
        .set({
          ...(availabilityChanged ? { availability: input.availability } : {}),
          ...(capChanged ? { max_open_tickets: cap } : {}),
          // Setting one's own availability is a sign of life, like a heartbeat.
          ...(self ? { last_seen_at: sql<Date>`now()` } : {}),
          ...(availabilityChanged || capChanged ? { updated_at: new Date() } : {}),
        })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('user_id', '=', userId)
        .execute();
    }
    const member = (await getMemberView(u.trx, ctx.workspaceId, userId))!;
    if (!availabilityChanged && !capChanged) return member;
    u.emit({ type: 'member.updated', topics: [`user:${userId}`], data: { member } });
    if (capChanged) {
      await recordAudit(u.trx, ctx, {
        action: 'member.assignment_cap_changed',
        entityType: 'member',
        entityId: userId,
        data: { from: target.max_open_tickets, to: cap },
      });
    }
    return member;
  });
}

/**
 * Marks the caller seen. The write happens at most every HEARTBEAT_WRITE_SECONDS per member
 * (a conditional UPDATE; the other heartbeats change nothing). When the heartbeat brings a
 * member back from auto-away, member.updated tells the others.
 */
export async function heartbeat(deps: Deps, ctx: RequestContext): Promise<void> {
  if (ctx.actor.kind !== 'member') return;
  const userId = ctx.actor.userId;
  const r = await sql<{ old: Date | null; availability: AvailabilityValue; away: number }>`
    UPDATE members m SET last_seen_at = now()
      FROM (SELECT m2.last_seen_at AS old, m2.availability,
                   coalesce((SELECT s.auto_away_minutes FROM assignment_settings s
                              WHERE s.workspace_id = m2.workspace_id), 0) AS away
              FROM members m2 WHERE m2.workspace_id = ${ctx.workspaceId} AND m2.user_id = ${userId}) o
     WHERE m.workspace_id = ${ctx.workspaceId} AND m.user_id = ${userId}
       AND (m.last_seen_at IS NULL OR m.last_seen_at < now() - make_interval(secs => ${HEARTBEAT_WRITE_SECONDS}::int))
    RETURNING o.old, o.availability, o.away`.execute(deps.database.db);
  const before = r.rows[0];
  if (!before) return;
  const old = before.old === null ? null : new Date(before.old);
  if (presenceOf(before.availability, old, Number(before.away)) === before.availability) return;
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const member = await getMemberView(u.trx, ctx.workspaceId, userId);
    if (member) u.emit({ type: 'member.updated', topics: [`user:${userId}`], data: { member } });
  });
}

export default async function availabilityRoutes(app: App, deps: Deps) {
  app.patch(
    '/v1/members/:user_id/availability',
    {
      // Self or admins: checked in updateAvailability (any member may set their own).
      config: { access: access.member('viewer', 'settings:write') },
      schema: {
        tags: ['members'],
        summary: "Set a member's availability (self or admin) and cap of open tickets (admin; not for viewers)",
        params: MemberParams,
        body: PatchAvailabilityBody,
        response: { 200: Member },
      },
    },
    async (req) => updateAvailability(deps, req.ctx, req.params.user_id, req.body),
  );

  app.post(
    '/v1/me/heartbeat',
    {
      config: { access: access.usersOnly('viewer'), idempotent: false },
      schema: {
        tags: ['members'],
        summary: 'Marks the caller seen (auto-away); send every minute or so while the app is open',
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await heartbeat(deps, req.ctx);
      return reply.code(204).send(null);
    },
  );
}
