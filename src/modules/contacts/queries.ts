// SQL over contacts that other modules read: the companies module's contact counts. Apart from
// service.ts, which uses the companies module (a contact's company), so that the two services
// do not import each other.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.js';

/** For companies: how many contacts each company has (companies without contacts are absent). */
export async function contactCounts(db: Kysely<DB>, workspaceId: string, companyIds: string[]) {
  const out = new Map<string, number>();
  if (companyIds.length === 0) return out;
  const rows = await db
    .selectFrom('contacts')
    .select(['company_id', sql<number>`count(*)::int`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('company_id', 'in', companyIds)
    .groupBy('company_id')
    .execute();
  for (const r of rows) out.set(r.company_id!, Number(r.n));
  return out;
}
