// A chat widget visitor's realtime token at connect (docs/widget.md "The widget socket"): the
// token names the visitor (vid) and their contact (sub), and opens a socket only while that
// visitor's row is live: not signed out (revoked_at), its contact not deleted (the row goes with
// it), the contact the token names, and the workspace's widget on. One primary-key read per
// widget connect; what it reads is committed before the API announces the change, so a token
// minted before a revocation is refused by every gateway process, one started after it included.
import { sql } from 'kysely';
import type { Database } from '../platform/db/index.js';
import type { Identity } from './conn.js';

export async function visitorMayConnect(
  db: Database['db'],
  who: Extract<Identity, { kind: 'widget' }>,
): Promise<boolean> {
  const row = await db
    .selectFrom('widget_visitors as wv')
    .leftJoin('widget_settings as s', 's.workspace_id', 'wv.workspace_id')
    .select(sql<boolean>`coalesce(s.enabled, true)`.as('enabled'))
    .where('wv.workspace_id', '=', who.wid)
    .where('wv.id', '=', who.visitorId)
    .where('wv.revoked_at', 'is', null)
    .where(sql<string>`coalesce(wv.contact_id, wv.pending_contact_id)`, '=', who.contactId)
    .executeTakeFirst();
  return row?.enabled === true;
}
