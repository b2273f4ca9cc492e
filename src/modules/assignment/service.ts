// Assignment settings: the mode (one value with the workspace setting `auto_assign`), rules per
// mailbox or team, and auto-away (presence.ts turns it into a member's presence).
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { lockSettingsRow } from '../../platform/db/settings-row.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { presentWorkspace } from '../workspace/service.js';
import type { AssignMode, Assignment, PatchAssignmentBody } from './schemas.js';

export type AssignmentView = Static<typeof Assignment>;
export type Mode = Static<typeof AssignMode>;

const MODES: readonly Mode[] = ['none', 'round_robin', 'load_balanced'];
const asMode = (v: unknown): Mode => (MODES.includes(v as Mode) ? (v as Mode) : 'none');

export interface StoredRule {
  target_type: 'mailbox' | 'team';
  mailbox_id: string | null;
  team_id: string | null;
  mode: Mode;
}

/** Everything assignment reads, in one query: mode, auto-away and the rules in order. */
export async function loadAssignmentConfig(
  db: Kysely<DB>,
  workspaceId: string,
): Promise<{ mode: Mode; autoAway: number; rules: StoredRule[] }> {
  const row = await sql<{ mode: string | null; away: number; rules: StoredRule[] | string | null }>`
    SELECT w.settings->>'auto_assign' AS mode,
           coalesce((SELECT s.auto_away_minutes FROM assignment_settings s WHERE s.workspace_id = w.id), 0) AS away,
           (SELECT json_agg(json_build_object('target_type', r.target_type, 'mailbox_id', r.mailbox_id,
                                              'team_id', r.team_id, 'mode', r.mode) ORDER BY r.position)
              FROM assignment_rules r WHERE r.workspace_id = w.id) AS rules
      FROM workspaces w WHERE w.id = ${workspaceId}`.execute(db);
  const r = row.rows[0];
  const rules = typeof r?.rules === 'string' ? (JSON.parse(r.rules) as StoredRule[]) : (r?.rules ?? []);
  return { mode: asMode(r?.mode), autoAway: Number(r?.away ?? 0), rules };
}

function present(c: { mode: Mode; autoAway: number; rules: StoredRule[] }): AssignmentView {
  return {
    mode: c.mode,
    auto_away_minutes: c.autoAway,
    rules: c.rules.map((r) => ({
      target_type: r.target_type,
      target_id: (r.target_type === 'mailbox' ? r.mailbox_id : r.team_id)!,
      mode: r.mode,
    })),
  };
}

export async function getAssignment(deps: Deps, ctx: RequestContext): Promise<AssignmentView> {
  return present(await loadAssignmentConfig(deps.database.db, ctx.workspaceId));
}

/** Each rule's target must be a mailbox or team of this workspace, named once. */
async function checkRules(u: Unit, rules: NonNullable<Static<typeof PatchAssignmentBody>['rules']>) {
  const seen = new Set<string>();
  const out: StoredRule[] = [];
  for (const [i, r] of rules.entries()) {
    const id = r.target_id.toLowerCase();
    const key = `${r.target_type}:${id}`;
    const at = `body.rules.${i}.target_id`;
    if (seen.has(key)) throw invalid(at, `this ${r.target_type} already has a rule (one rule per target)`);
    seen.add(key);
    const exists =
      r.target_type === 'mailbox'
        ? await u.trx
            .selectFrom('mailboxes')
            .select('id')
            .where('workspace_id', '=', u.workspaceId)
            .where('id', '=', id)
            .forShare()
            .executeTakeFirst()
        : await u.trx
            .selectFrom('teams')
            .select('id')
            .where('workspace_id', '=', u.workspaceId)
            .where('id', '=', id)
            .forShare()
            .executeTakeFirst();
    if (!exists) throw invalid(at, `no such ${r.target_type} in this workspace`);
    out.push({
      target_type: r.target_type,
      mailbox_id: r.target_type === 'mailbox' ? id : null,
      team_id: r.target_type === 'team' ? id : null,
      mode: r.mode,
    });
  }
  return out;
}

/**
 * PATCH /v1/assignment: any subset; `rules` replaces the whole list. `mode` is written to the
 * workspace setting auto_assign (workspace.updated follows). Audit: assignment.updated.
 */
export async function updateAssignment(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof PatchAssignmentBody>,
): Promise<AssignmentView> {
  const away = input.auto_away_minutes;
  if (away !== undefined && away > 0 && away < 10) {
    throw invalid('body.auto_away_minutes', 'must be 0 (off) or 10 to 1440');
  }
  return deps.writer.run(ctx.workspaceId, async (u) => {
    // One writer at a time per workspace: the settings row is the lock (rules are replaced whole).
    await lockSettingsRow(u, 'assignment_settings');
    const before = present(await loadAssignmentConfig(u.trx, ctx.workspaceId));
    const rules = input.rules === undefined ? null : await checkRules(u, input.rules);

    if (rules !== null) {
      await u.trx.deleteFrom('assignment_rules').where('workspace_id', '=', ctx.workspaceId).execute();
      if (rules.length > 0) {
        await u.trx
          .insertInto('assignment_rules')
          .values(rules.map((r, position) => ({ workspace_id: ctx.workspaceId, position, ...r })))
          .execute();
      }
    }
    if (away !== undefined && away !== before.auto_away_minutes) {
      await u.trx
        .updateTable('assignment_settings')
        .set({ auto_away_minutes: away, updated_at: new Date() })
        .where('workspace_id', '=', ctx.workspaceId)
        .execute();
    }
    const modeChanged = input.mode !== undefined && input.mode !== before.mode;
    const after: AssignmentView = {
      ...present(await loadAssignmentConfig(u.trx, ctx.workspaceId)),
      mode: input.mode ?? before.mode,
    };
    const changed: Array<keyof AssignmentView> = [];
    if (modeChanged) changed.push('mode');
    if (after.auto_away_minutes !== before.auto_away_minutes) changed.push('auto_away_minutes');
    if (JSON.stringify(after.rules) !== JSON.stringify(before.rules)) changed.push('rules');
    if (changed.length === 0) return after;
    await recordAudit(u.trx, ctx, {
      action: 'assignment.updated',
      entityType: 'workspace',
      entityId: ctx.workspaceId,
      data: {
        changes: changed,
        from: Object.fromEntries(changed.map((k) => [k, before[k]])),
        to: Object.fromEntries(changed.map((k) => [k, after[k]])),
      },
    });
    if (modeChanged) {
      // Last: the UPDATE locks the workspace row until COMMIT.
      const row = await u.trx
        .updateTable('workspaces')
        .set({
          settings: sql`settings || jsonb_build_object('auto_assign', ${after.mode}::text)`,
          updated_at: new Date(),
        })
        .where('id', '=', ctx.workspaceId)
        .returningAll()
        .executeTakeFirstOrThrow();
      u.emit({ type: 'workspace.updated', data: { workspace: presentWorkspace(row) } });
    }
    return after;
  });
}
