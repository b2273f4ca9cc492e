// The widget's settings (GET, PATCH /v1/widget/settings) and the checks every widget route makes
// with them: the widget key names the workspace, a turned-off widget answers 404, and a browser
// request from an Origin outside allowed_origins answers 403 (docs/widget.md "Restricting
// origins"). An empty allowed_origins allows every origin.
import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { originOf } from '../../gateway/upgrade.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { forbidden, notFound } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { publishControl } from '../members/control.js';
import type { PatchWidgetSettingsBody, WidgetSettings } from './schemas.js';

export type WidgetSettingsView = Static<typeof WidgetSettings>;

export const DEFAULT_WIDGET_SETTINGS: WidgetSettingsView = {
  greeting: '',
  require_email: false,
  enabled: true,
  allowed_origins: [],
};

/** A workspace's widget as the visitor routes need it. */
export interface Widget {
  workspaceId: string;
  workspaceName: string;
  slug: string;
  workspaceSettings: Record<string, unknown>;
  settings: WidgetSettingsView;
  installed: boolean;
}

const widgetQuery = (db: Kysely<DB>) =>
  db
    .selectFrom('workspaces as w')
    .leftJoin('widget_settings as s', 's.workspace_id', 'w.id')
    .select([
      'w.id',
      'w.name',
      'w.slug',
      'w.settings',
      's.greeting',
      's.require_email',
      's.enabled',
      's.allowed_origins',
      's.installed_at',
    ]);

type WidgetRow = Awaited<ReturnType<ReturnType<typeof widgetQuery>['executeTakeFirstOrThrow']>>;

function present(r: WidgetRow): Widget {
  return {
    workspaceId: r.id,
    workspaceName: r.name,
    slug: r.slug,
    workspaceSettings: (r.settings ?? {}) as Record<string, unknown>,
    settings: {
      greeting: r.greeting ?? DEFAULT_WIDGET_SETTINGS.greeting,
      require_email: r.require_email ?? DEFAULT_WIDGET_SETTINGS.require_email,
      enabled: r.enabled ?? DEFAULT_WIDGET_SETTINGS.enabled,
      allowed_origins: r.allowed_origins ?? [],
    },
    installed: r.installed_at !== null,
  };
}

const widgetOff = () => notFound('No chat widget here: the key is unknown or the widget is turned off.');

/** The widget of a widget_key; 404 when the key is unknown or the widget is off. */
export async function widgetOfKey(deps: Deps, key: string): Promise<Widget> {
  const row = await widgetQuery(deps.database.db).where('w.widget_key', '=', key).executeTakeFirst();
  if (!row || row.enabled === false) throw widgetOff();
  return present(row);
}

/** The widget of a visitor's workspace; 404 while it is off. */
export async function widgetOfWorkspace(deps: Deps, workspaceId: string): Promise<Widget> {
  const row = await widgetQuery(deps.database.db).where('w.id', '=', workspaceId).executeTakeFirst();
  if (!row || row.enabled === false) throw widgetOff();
  return present(row);
}

// ---------------------------------------------------------------------------------------------
// Origins and CORS

/** What the request's Origin was found to be, for the CORS headers of its answer. */
export type OriginVerdict = 'none' | 'allowed' | 'refused';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the widget's routes once the workspace is known (src/modules/widget/settings.ts). */
    widgetOrigin?: OriginVerdict;
  }
}

/** An origin as the allow-list keeps it: scheme://host[:port], lower case, default port left out. */
export const normalOrigin = (text: string): string | null => originOf(text.trim());

/**
 * Checks the request's Origin against the widget's list (throws 403 forbidden when it is not
 * listed) and says whether a browser sent it. A request without Origin (a server, curl) is not a
 * browser's cross-origin request and passes.
 */
export function checkOrigin(req: FastifyRequest, widget: Widget): OriginVerdict {
  const header = req.headers.origin;
  const allowed = widget.settings.allowed_origins;
  const origin = header === undefined ? null : originOf(header);
  const verdict: OriginVerdict =
    header === undefined
      ? 'none'
      : allowed.length === 0 || (origin !== null && allowed.includes(origin))
        ? 'allowed'
        : 'refused';
  req.widgetOrigin = verdict;
  if (verdict === 'refused') {
    throw forbidden('This website is not among the origins allowed to use the chat widget.');
  }
  return verdict;
}

export const CORS_ALLOW_HEADERS = 'authorization, content-type, idempotency-key';
export const CORS_EXPOSE_HEADERS = 'location, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset';

/**
 * The CORS headers of a widget answer: the request's own origin when it is allowed, or when the
 * answer names no workspace (the key or the token is unknown: nothing to protect, and the widget
 * must be able to read that it should start over); none for a refused origin.
 */
export function corsHeaders(req: FastifyRequest, reply: FastifyReply): void {
  const origin = req.headers.origin;
  reply.header('vary', 'Origin');
  if (origin === undefined || req.widgetOrigin === 'refused' || originOf(origin) === null) return;
  reply.header('access-control-allow-origin', originOf(origin)!);
  reply.header('access-control-expose-headers', CORS_EXPOSE_HEADERS);
}

// ---------------------------------------------------------------------------------------------
// Onboarding

/** The first widget session from a browser on an allowed origin: install_widget is done. */
export async function markInstalled(deps: Deps, widget: Widget): Promise<void> {
  if (widget.installed) return;
  await deps.database.db
    .insertInto('widget_settings')
    .values({ workspace_id: widget.workspaceId, installed_at: sql`now()` })
    .onConflict((oc) =>
      oc.column('workspace_id').doUpdateSet({ installed_at: sql`coalesce(widget_settings.installed_at, now())` }),
    )
    .execute();
}

/**
 * Onboarding's install_widget check (registered in runtime.ts): a widget session from a browser
 * on an allowed origin, or a chat ticket (only the widget makes them).
 */
export async function widgetInstalled(db: Kysely<DB>, workspaceId: string): Promise<boolean> {
  const r = await sql<{ done: boolean }>`
    SELECT EXISTS (SELECT 1 FROM widget_settings WHERE workspace_id = ${workspaceId} AND installed_at IS NOT NULL)
        OR EXISTS (SELECT 1 FROM tickets WHERE workspace_id = ${workspaceId} AND channel = 'chat') AS done`.execute(db);
  return r.rows[0]?.done === true;
}

// ---------------------------------------------------------------------------------------------
// GET, PATCH /v1/widget/settings

export async function getWidgetSettings(
  deps: Deps,
  ctx: RequestContext,
  db: Kysely<DB> = deps.database.db,
): Promise<WidgetSettingsView> {
  const row = await widgetQuery(db).where('w.id', '=', ctx.workspaceId).executeTakeFirst();
  if (!row) throw notFound('Workspace not found.');
  return present(row).settings;
}

export async function updateWidgetSettings(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof PatchWidgetSettingsBody>,
): Promise<WidgetSettingsView> {
  const origins =
    input.allowed_origins === undefined
      ? undefined
      : [...new Set(input.allowed_origins.map((o) => normalOrigin(o)).filter((o): o is string => o !== null))];
  let turned: 'on' | 'off' | null = null;
  const after = await deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await getWidgetSettings(deps, ctx, u.trx);
    const set = {
      ...(input.greeting !== undefined ? { greeting: input.greeting } : {}),
      ...(input.require_email !== undefined ? { require_email: input.require_email } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(origins !== undefined ? { allowed_origins: origins } : {}),
    };
    const after: WidgetSettingsView = { ...before, ...set };
    const changed = (Object.keys(set) as Array<keyof WidgetSettingsView>).filter(
      (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
    );
    if (changed.length === 0) return before;
    await u.trx
      .insertInto('widget_settings')
      .values({ workspace_id: ctx.workspaceId, ...after, updated_at: sql`now()` })
      .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ ...set, updated_at: sql`now()` }))
      .execute();
    await recordAudit(u.trx, ctx, {
      action: 'widget.settings_updated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: { changes: changed },
    });
    turned = before.enabled === after.enabled ? null : after.enabled ? 'on' : 'off';
    return after;
  });
  // Turned off: the visitors' open sockets close (their realtime tokens are refused at connect);
  // on again: their tokens work again, as their visitor tokens do.
  if (turned !== null) {
    const type = turned === 'off' ? 'widget.disabled' : 'widget.enabled';
    await publishControl(deps, { type, workspace_id: ctx.workspaceId });
  }
  return after;
}
