// Workspaces: create (caller becomes owner), read, change settings.
import type { Static } from '@sinclair/typebox';
import { type Selectable, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId, randomSecret } from '../../platform/crypto/random.js';
import type { WorkspacesTable } from '../../platform/db/schema.js';
import { EVENT_SEQ } from '../../platform/events/outbox.js';
import type { RequestContext, UserContext } from '../../platform/http/context.js';
import { conflict, forbidden, invalid, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import { hasMfa, verifyMfaCode } from '../auth/mfa.js';
import { type PictureChange, retireWorkspacePictures, swapPictures } from '../images/store.js';
import { getMemberView, type MemberView } from '../members/service.js';
import type { PatchWorkspaceBody, Workspace, WorkspaceSettings } from './schemas.js';

export type WorkspaceView = Static<typeof Workspace>;
type Settings = Static<typeof WorkspaceSettings>;

export const DEFAULT_SETTINGS: Settings = {
  brand_color: '#2563eb',
  timezone: 'UTC',
  help_center_enabled: false,
  help_center_title: '',
  csat_enabled: false,
  auto_assign: 'none',
  gravatar: false,
  domain_logos: true,
  label_creation: 'all',
  auto_close_days: 4,
  ai: { assistant: false },
};

export const IMAGE_SLOTS = ['help_center_logo', 'help_center_favicon', 'widget_avatar', 'widget_launcher'] as const;

export function presentWorkspace(w: Selectable<WorkspacesTable>): WorkspaceView {
  const stored = (w.settings ?? {}) as Partial<Settings>;
  const images = (w.images ?? {}) as Record<string, string | null>;
  return {
    id: w.id,
    name: w.name,
    slug: w.slug,
    widget_key: w.widget_key,
    settings: { ...DEFAULT_SETTINGS, ...stored, ai: { ...DEFAULT_SETTINGS.ai, ...(stored.ai ?? {}) } },
    avatar_url: w.avatar_url,
    avatar_source: w.avatar_source,
    images: Object.fromEntries(IMAGE_SLOTS.map((s) => [s, images[s] ?? null])) as WorkspaceView['images'],
    created_at: iso(w.created_at)!,
  };
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return s || 'workspace';
}

export async function createWorkspace(
  deps: Deps,
  user: UserContext,
  input: { name: string; slug?: string },
): Promise<WorkspaceView> {
  const name = input.name.trim();
  if (name === '') throw invalid('body.name', 'must not be blank');
  const explicit = input.slug !== undefined;
  const base = input.slug ?? slugify(name);
  const id = newId();
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug =
      attempt === 0
        ? base
        : `${base.slice(0, 40)}-${randomSecret('', 3)
            .toLowerCase()
            .replace(/[^a-z0-9]/g, 'x')}`;
    const created = await deps.writer.run(id, async (u) => {
      const row = await u.trx
        .insertInto('workspaces')
        .values({
          id,
          name,
          slug,
          widget_key: randomSecret('wk_', 12),
          widget_secret_enc: deps.secrets.seal(randomSecret('', 32), `widget:${id}`),
          avatar_url: null,
          avatar_source: null,
        })
        .onConflict((oc) => oc.column('slug').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) return null;
      await u.trx.insertInto('workspace_counters').values({ workspace_id: id, name: EVENT_SEQ }).execute();
      await u.trx.insertInto('members').values({ workspace_id: id, user_id: user.userId, role: 'owner' }).execute();
      const member = await u.trx
        .selectFrom('users')
        .select(['id', 'name', 'email', 'avatar_url', 'avatar_source'])
        .where('id', '=', user.userId)
        .executeTakeFirstOrThrow();
      u.emit({
        type: 'member.added',
        topics: [`user:${user.userId}`],
        data: { member: { user: member, role: 'owner', created_at: iso(row.created_at) } },
      });
      return presentWorkspace(row);
    });
    if (created) return created;
    if (explicit) throw conflict('This slug is taken.');
  }
  throw conflict('Could not find a free slug; send one.');
}

export async function getWorkspace(deps: Deps, ctx: RequestContext): Promise<WorkspaceView> {
  const w = await deps.database.db
    .selectFrom('workspaces')
    .selectAll()
    .where('id', '=', ctx.workspaceId)
    .executeTakeFirst();
  if (!w) throw notFound('Workspace not found.');
  return presentWorkspace(w);
}

export async function updateWorkspace(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof PatchWorkspaceBody>,
): Promise<WorkspaceView> {
  if (input.settings?.timezone !== undefined && !isTimeZone(input.settings.timezone)) {
    throw invalid('body.settings.timezone', 'is not an IANA time zone name');
  }
  if (input.name !== undefined && input.name.trim() === '') throw invalid('body.name', 'must not be blank');
  const patch = input.settings ?? {};
  const { ai, ...flat } = patch;
  return deps.writer.run(ctx.workspaceId, async (u) => {
    // The audit row first: the UPDATE below locks the workspace row until COMMIT, so the
    // locked part of the transaction stays as short as possible.
    await recordAudit(u.trx, ctx, {
      action: 'workspace.updated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: {
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.settings ? { settings: input.settings } : {}),
      },
    });
    // A partial merge in one statement: top-level keys replace, `ai` merges key by key.
    const row = await u.trx
      .updateTable('workspaces')
      .set({
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        settings: ai
          ? sql`(settings || ${JSON.stringify(flat)}::jsonb) || jsonb_build_object('ai', coalesce(settings->'ai', '{}'::jsonb) || ${JSON.stringify(ai)}::jsonb)`
          : sql`settings || ${JSON.stringify(flat)}::jsonb`,
        updated_at: new Date(),
      })
      .where('id', '=', ctx.workspaceId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('Workspace not found.');
    const view = presentWorkspace(row);
    u.emit({ type: 'workspace.updated', data: { workspace: view } });
    return view;
  });
}

const RECENT_SIGN_IN_MS = 10 * 60 * 1000;

/**
 * Deletes the workspace and everything of it (every tenant table cascades from workspaces),
 * audit entries included. Owner only, with two-factor on, signed in within the last ten
 * minutes, and the workspace's exact name typed as confirmation.
 */
export async function deleteWorkspace(deps: Deps, ctx: RequestContext, confirmName: string): Promise<void> {
  if (ctx.actor.kind !== 'member' || ctx.role !== 'owner') throw forbidden('Only an owner can delete the workspace.');
  const { userId, sessionId } = ctx.actor;
  const session = await deps.database.db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.created_at', 'u.mfa_enabled'])
    .where('s.id', '=', sessionId)
    .where('s.user_id', '=', userId)
    .executeTakeFirst();
  if (!session?.mfa_enabled) throw forbidden('Turn on two-factor authentication to delete the workspace.');
  if (Date.now() - session.created_at.getTime() > RECENT_SIGN_IN_MS) {
    throw forbidden('Sign in again (within the last 10 minutes) to delete the workspace.');
  }
  await deps.database.db.transaction().execute(async (trx) => {
    const w = await trx
      .selectFrom('workspaces')
      .select('name')
      .where('id', '=', ctx.workspaceId)
      .forUpdate()
      .executeTakeFirst();
    if (!w) throw notFound('Workspace not found.');
    if (w.name !== confirmName) throw invalid('body.confirm_name', 'does not match the workspace name');
    await trx.deleteFrom('workspaces').where('id', '=', ctx.workspaceId).execute();
    await retireWorkspacePictures(trx, ctx.workspaceId);
  });
  deps.knownKeys.forgetWorkspace(ctx.workspaceId);
  await deps.bus.publishControl({ type: 'workspace.deleted', workspace_id: ctx.workspaceId }).catch(() => {});
}

/**
 * Moves ownership to another member: they become owner, the caller becomes admin. Owner only,
 * with two-factor on and a current code (TOTP or recovery code).
 */
export async function transferOwnership(
  deps: Deps,
  ctx: RequestContext,
  input: { user_id: string; code: string },
): Promise<{ owner: MemberView; previous_owner: MemberView }> {
  if (ctx.actor.kind !== 'member' || ctx.role !== 'owner') throw forbidden('Only an owner can transfer ownership.');
  const me = ctx.actor.userId;
  if (!(await hasMfa(deps, me))) throw forbidden('Turn on two-factor authentication to transfer ownership.');
  if (!isUuid(input.user_id)) throw notFound('Member not found.');
  if (input.user_id === me) throw invalid('body.user_id', 'is you: name another member');
  if (!(await verifyMfaCode(deps, me, input.code))) throw invalid('body.code', 'is not a valid two-factor code');
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const rows = await u.trx
      .selectFrom('members')
      .select(['user_id', 'role'])
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', 'in', [me, input.user_id])
      .orderBy('user_id')
      .forUpdate()
      .execute();
    const mine = rows.find((r) => r.user_id === me);
    const theirs = rows.find((r) => r.user_id === input.user_id);
    if (mine?.role !== 'owner') throw forbidden('Only an owner can transfer ownership.');
    if (!theirs) throw notFound('Member not found.');
    const now = new Date();
    await u.trx
      .updateTable('members')
      .set({ role: 'owner', updated_at: now })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', '=', input.user_id)
      .execute();
    await u.trx
      .updateTable('members')
      .set({ role: 'admin', updated_at: now })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', '=', me)
      .execute();
    const owner = (await getMemberView(u.trx, ctx.workspaceId, input.user_id))!;
    const previous = (await getMemberView(u.trx, ctx.workspaceId, me))!;
    u.emit({ type: 'member.updated', topics: [`user:${input.user_id}`], data: { member: owner } });
    u.emit({ type: 'member.updated', topics: [`user:${me}`], data: { member: previous } });
    await recordAudit(u.trx, ctx, {
      action: 'workspace.ownership_transferred',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: { from: me, to: input.user_id, previous_role: theirs.role },
    });
    return { owner, previous_owner: previous };
  });
}

/** A new widget secret (verifies visitors' user_hash); returned once, stored encrypted. */
export async function rotateWidgetSecret(deps: Deps, ctx: RequestContext): Promise<string> {
  const secret = randomSecret('wsec_', 32);
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const r = await u.trx
      .updateTable('workspaces')
      .set({ widget_secret_enc: deps.secrets.seal(secret, `widget:${ctx.workspaceId}`), updated_at: new Date() })
      .where('id', '=', ctx.workspaceId)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw notFound('Workspace not found.');
    await recordAudit(u.trx, ctx, {
      action: 'workspace.widget_secret_rotated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
    });
  });
  return secret;
}

/** The widget secret in clear, for verifying user_hash (widget issue). */
export async function widgetSecret(deps: Deps, workspaceId: string): Promise<string | null> {
  const w = await deps.database.db
    .selectFrom('workspaces')
    .select('widget_secret_enc')
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  return w?.widget_secret_enc ? deps.secrets.open(w.widget_secret_enc, `widget:${workspaceId}`) : null;
}

export async function workspacesOfUser(deps: Deps, userId: string) {
  return deps.database.db
    .selectFrom('members as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id', 'w.name', 'w.slug', 'm.role'])
    .where('m.user_id', '=', userId)
    .orderBy('w.name')
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images: processing, storage): the workspace's logo (avatar_url and
// avatar_source) and its brand images (`images`), with workspace.updated and
// workspace.image_updated / workspace.image_removed.

/** PUT and DELETE /v1/workspace/images/{slot}: `logo` is the workspace's avatar_url. */
export type WorkspaceImageSlot = 'logo' | (typeof IMAGE_SLOTS)[number];

/** Puts a stored picture in a slot, or empties it; the workspace after the change. */
export async function setWorkspaceImage(
  deps: Deps,
  ctx: RequestContext,
  slot: WorkspaceImageSlot,
  change: PictureChange,
): Promise<WorkspaceView> {
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await u.trx
      .selectFrom('workspaces')
      .select(['avatar_url', 'images'])
      .where('id', '=', ctx.workspaceId)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound('Workspace not found.');
    const images = { ...((before.images ?? {}) as Record<string, string | null>) };
    const previous = slot === 'logo' ? before.avatar_url : (images[slot] ?? null);
    const url = change.picture?.url ?? null;
    await swapPictures(u.trx, change.picture?.id ?? null, previous);
    images[slot] = url;
    const row = await u.trx
      .updateTable('workspaces')
      .set(
        slot === 'logo'
          ? { avatar_url: url, avatar_source: url ? 'upload' : null, updated_at: new Date() }
          : { images: JSON.stringify(images), updated_at: new Date() },
      )
      .where('id', '=', ctx.workspaceId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const view = presentWorkspace(row);
    if (previous !== url) {
      u.emit({ type: 'workspace.updated', data: { workspace: view } });
      await recordAudit(u.trx, ctx, {
        action: url ? 'workspace.image_updated' : 'workspace.image_removed',
        entityType: 'workspace',
        entityId: ctx.workspaceId,
        data: { slot },
      });
    }
    return view;
  });
}

/** The workspace's settings with their defaults (automatic picture lookups read gravatar and domain_logos). */
export async function workspaceSettings(deps: Deps, workspaceId: string): Promise<Settings | null> {
  const w = await deps.database.db
    .selectFrom('workspaces')
    .selectAll()
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  return w ? presentWorkspace(w).settings : null;
}
