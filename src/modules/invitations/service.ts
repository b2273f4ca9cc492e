// Invitations: an admin invites an email address with a role; the person signs in (or
// registers) with that address and accepts with the token from the link. Tokens are stored
// only as hashes; the token and its link are shown once, in the create response, and sent
// by email through a durable job (see mail.ts).
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId, randomSecret } from '../../platform/crypto/random.js';
import { hashSecret } from '../../platform/crypto/tokens.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import { isUniqueViolation } from '../../platform/db/unique.js';
import type { RequestContext, UserContext } from '../../platform/http/context.js';
import { conflict, forbidden, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import { checkPlanLimit, seatsChanged } from '../billing/service.js';
import { getMemberView } from '../members/service.js';
import type {
  AcceptedInvitation,
  CreateInvitationBody,
  Invitation,
  InvitationLookup,
  ListInvitationsQuery,
} from './schemas.js';

export type InvitationView = Static<typeof Invitation>;

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
export const INVITATION_TOKEN_PREFIX = 'svc_inv_';
const TOKEN_RE = /^svc_inv_[A-Za-z0-9_-]{43}$/;
export const INVITATION_MAIL_JOB = 'mail.invitation';

/** The accept link: the web app's page for it, which calls lookup and then accept. */
export const acceptUrl = (publicUrl: string, token: string) => `${publicUrl}/invite/${encodeURIComponent(token)}`;

/** The context under which the token is sealed in the mail job's data (never stored in plain). */
export const tokenSealContext = (invitationId: string) => `invitation:${invitationId}`;

function invitationQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('invitations as i')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.id',
      'i.email',
      'i.role',
      'i.expires_at',
      'i.created_at',
      microsOf('i.created_at').as('created_us'),
      'u.id as u_id',
      'u.name as u_name',
      'u.email as u_email',
      'u.avatar_url as u_avatar_url',
    ])
    .where('i.workspace_id', '=', workspaceId);
}

type Row = Awaited<ReturnType<ReturnType<typeof invitationQuery>['executeTakeFirstOrThrow']>>;

const present = (r: Row): InvitationView => ({
  id: r.id,
  email: r.email,
  role: r.role,
  expires_at: iso(r.expires_at)!,
  created_at: iso(r.created_at)!,
  invited_by: r.u_id ? { id: r.u_id, name: r.u_name!, email: r.u_email!, avatar_url: r.u_avatar_url } : null,
});

/** Pending invitations (not accepted, not revoked, not expired), newest first. */
export async function listInvitations(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListInvitationsQuery>,
): Promise<Page<InvitationView>> {
  const limit = q.limit ?? 50;
  const list = `invitations:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = invitationQuery(deps.database.db, ctx.workspaceId)
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', new Date());
  if (after) query = query.where(createdBefore('i', after));
  const rows = await query
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present);
}

/**
 * Invites an address. An existing member's address answers 409. A pending invitation for
 * the same address (in any case) is replaced: revoked, so its link stops working, and a new
 * one with a new token and a new 7-day expiry is created and sent.
 */
export async function createInvitation(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateInvitationBody>,
): Promise<InvitationView & { token: string; url: string }> {
  const email = input.email.trim();
  const token = randomSecret(INVITATION_TOKEN_PREFIX);
  const id = newId();
  const invitedBy = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  try {
    await deps.writer.run(ctx.workspaceId, async (u) => {
      const member = await u.trx
        .selectFrom('members as m')
        .innerJoin('users as us', 'us.id', 'm.user_id')
        .select('m.user_id')
        .where('m.workspace_id', '=', ctx.workspaceId)
        .where(sql<string>`lower(us.email)`, '=', email.toLowerCase())
        .executeTakeFirst();
      if (member) throw conflict('This person is already a member of the workspace.');
      const replaced = await u.trx
        .updateTable('invitations')
        .set({ revoked_at: new Date() })
        .where('workspace_id', '=', ctx.workspaceId)
        .where(sql<string>`lower(email)`, '=', email.toLowerCase())
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .returning('id')
        .execute();
      await u.trx
        .insertInto('invitations')
        .values({
          workspace_id: ctx.workspaceId,
          id,
          email,
          role: input.role,
          token_hash: hashSecret(token),
          invited_by: invitedBy,
          expires_at: new Date(Date.now() + INVITATION_TTL_MS),
        })
        .execute();
      await recordAudit(u.trx, ctx, {
        action: 'invitation.created',
        entityType: 'invitation',
        entityId: id,
        data: { email, role: input.role, ...(replaced.length > 0 ? { replaced_ids: replaced.map((r) => r.id) } : {}) },
      });
      u.afterCommit(() => enqueueInvitationMail(deps, ctx.workspaceId, id, token));
    });
  } catch (err) {
    // Another invitation for this address committed between our revoke and our insert.
    if (isUniqueViolation(err)) throw conflict('An invitation for this address was just created; try again.');
    throw err;
  }
  const row = await invitationQuery(deps.database.db, ctx.workspaceId).where('i.id', '=', id).executeTakeFirstOrThrow();
  return { ...present(row), token, url: acceptUrl(deps.config.publicUrl, token) };
}

/** The email goes out from a durable job; its data holds the token sealed, never in plain. */
async function enqueueInvitationMail(deps: Deps, workspaceId: string, invitationId: string, token: string) {
  try {
    await deps.jobs.send(
      INVITATION_MAIL_JOB,
      {
        workspace_id: workspaceId,
        invitation_id: invitationId,
        sealed_token: deps.secrets.seal(token, tokenSealContext(invitationId)),
      },
      { retryLimit: 8, retryDelaySeconds: 30 },
    );
  } catch (err) {
    // The admin still has the link from the response and can share it, or invite again.
    deps.log.warn(
      { invitation: invitationId, err: err instanceof Error ? err.message : String(err) },
      'invitation email not queued',
    );
  }
}

export async function revokeInvitation(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('Invitation not found.');
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .updateTable('invitations')
      .set({ revoked_at: new Date() })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', new Date())
      .returning(['email', 'role'])
      .executeTakeFirst();
    if (!gone) throw notFound('Invitation not found.');
    await recordAudit(u.trx, ctx, {
      action: 'invitation.revoked',
      entityType: 'invitation',
      entityId: id,
      data: { email: gone.email, role: gone.role },
    });
  });
}

/** A pending, unexpired invitation by its token, with its workspace; null otherwise. */
async function findByToken(db: Kysely<DB>, token: string) {
  if (!TOKEN_RE.test(token)) return null;
  const row = await db
    .selectFrom('invitations as i')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .select(['i.workspace_id', 'i.id', 'i.email', 'i.role', 'i.expires_at', 'w.name as workspace_name'])
    .where('i.token_hash', '=', hashSecret(token))
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || row.expires_at.getTime() <= Date.now()) return null;
  return row;
}

const GONE = 'This invitation does not exist, was revoked or used, or has expired.';

export async function lookupInvitation(deps: Deps, token: string): Promise<Static<typeof InvitationLookup>> {
  const row = await findByToken(deps.database.db, token);
  if (!row) throw notFound(GONE);
  return {
    workspace: { name: row.workspace_name },
    email: row.email,
    role: row.role,
    expires_at: iso(row.expires_at)!,
  };
}

/**
 * The signed-in person joins the invitation's workspace with its role. Their account email
 * must be the invited address (ignoring case): 403 otherwise. A used, revoked, expired or
 * unknown token answers 404.
 */
export async function acceptInvitation(
  deps: Deps,
  user: UserContext,
  token: string,
): Promise<Static<typeof AcceptedInvitation>> {
  const found = await findByToken(deps.database.db, token);
  if (!found) throw notFound(GONE);
  const workspaceId = found.workspace_id;
  return deps.writer.run(workspaceId, async (u) => {
    const inv = await u.trx
      .selectFrom('invitations')
      .select(['id', 'email', 'role', 'expires_at', 'accepted_at', 'revoked_at'])
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', found.id)
      .forUpdate()
      .executeTakeFirst();
    // Checked again under the lock: a concurrent accept or revoke wins once.
    if (!inv || inv.accepted_at || inv.revoked_at || inv.expires_at.getTime() <= Date.now()) throw notFound(GONE);
    const person = await u.trx.selectFrom('users').select(['email']).where('id', '=', user.userId).executeTakeFirst();
    if (!person) throw notFound(GONE);
    if (person.email.trim().toLowerCase() !== inv.email.trim().toLowerCase()) {
      throw forbidden('This invitation was sent to another email address; sign in with that address to accept it.');
    }
    // Hosted offering: a seat (owner, admin, agent) past the plan's max_members answers 402
    // plan_limit and the invitation stays open; viewers are free.
    if (inv.role !== 'viewer') await checkPlanLimit(deps, u.trx, workspaceId, 'members');
    const joined = await u.trx
      .insertInto('members')
      .values({ workspace_id: workspaceId, user_id: user.userId, role: inv.role })
      .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doNothing())
      .returning('user_id')
      .executeTakeFirst();
    if (!joined) throw conflict('You are already a member of this workspace.');
    await u.trx
      .updateTable('invitations')
      .set({ accepted_at: new Date(), accepted_by: user.userId })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', inv.id)
      .execute();
    const member = (await getMemberView(u.trx, workspaceId, user.userId))!;
    u.emit({ type: 'member.added', topics: [`user:${user.userId}`], data: { member } });
    if (inv.role !== 'viewer') u.afterCommit(() => seatsChanged(deps, workspaceId));
    await recordAudit(
      u.trx,
      { workspaceId, actor: { kind: 'member', userId: user.userId, sessionId: user.sessionId }, ip: user.ip },
      {
        action: 'invitation.accepted',
        entityType: 'invitation',
        entityId: inv.id,
        data: { email: inv.email, role: inv.role },
      },
    );
    const ws = await u.trx
      .selectFrom('workspaces')
      .select(['id', 'name', 'slug'])
      .where('id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    return { workspace: ws, member };
  });
}
