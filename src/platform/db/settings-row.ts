// Workspace settings kept in a one-row-per-workspace table (assignment, triage, AI): the row is
// created on first write and locked FOR UPDATE, so concurrent writers of one workspace's
// settings take turns and each reads what the one before wrote.
import { sql } from 'kysely';
import type { DB } from './schema.js';
import type { Unit } from './tx.js';

/** Tables whose primary key is workspace_id alone and whose other columns have defaults. */
type SettingsTable = 'assignment_settings' | 'triage_settings' | 'ai_settings';

export async function lockSettingsRow(u: Unit, table: SettingsTable & keyof DB): Promise<void> {
  await sql`INSERT INTO ${sql.table(table)} (workspace_id) VALUES (${u.workspaceId})
            ON CONFLICT (workspace_id) DO NOTHING`.execute(u.trx);
  await sql`SELECT 1 FROM ${sql.table(table)} WHERE workspace_id = ${u.workspaceId} FOR UPDATE`.execute(u.trx);
}
