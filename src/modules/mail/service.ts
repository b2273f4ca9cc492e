// Outgoing mail as the workspace's admins see it: whether the system mailer sends or keeps
// (GET /v1/mail/status, which every member reads: the app tells agents on a ticket that its
// replies are not leaving), and the outbox of mail kept while SMTP_URL is unset
// (GET /v1/mail/outbox, /v1/mail/outbox/{id}; owners and admins, or keys with settings:write,
// since bodies carry sign-in and invitation links). The outbox itself is written by the system
// mailer and the mailboxes' transports (src/platform/mail/outbox.ts).
import type { Static } from '@sinclair/typebox';
import { Parser } from 'htmlparser2';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import { sanitizeHtml } from '../../platform/html/index.js';
import type { RequestContext } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { systemMailer } from '../../platform/mail/index.js';
import { openOutboxBody } from '../../platform/mail/outbox.js';
import { defaultMailbox } from '../mailboxes/service.js';
import type { ListOutboxQuery, MailStatus, OutboxMail, OutboxMailSummary } from './schemas.js';

type MailStatusView = Static<typeof MailStatus>;
type SummaryView = Static<typeof OutboxMailSummary>;
type MailView = Static<typeof OutboxMail>;

export async function mailStatus(deps: Deps, ctx: RequestContext): Promise<MailStatusView> {
  const db = deps.database.db;
  const mailer = systemMailer(deps);
  const keeping = mailer.kind === 'outbox';
  const held = keeping
    ? await db
        .selectFrom('mailboxes')
        .select('id')
        .where('workspace_id', '=', ctx.workspaceId)
        .where('outbound_kind', '=', 'system')
        .where('status', '!=', 'disabled')
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    : [];
  const fallback = await defaultMailbox(db, ctx.workspaceId);
  return {
    system_mailer: keeping ? 'outbox' : 'smtp',
    from: mailer.from,
    outbox_mailbox_ids: held.map((r) => r.id),
    default_mailbox_id: fallback?.id ?? null,
  };
}

function outboxQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('mail_outbox as o')
    .select([
      'o.workspace_id',
      'o.id',
      'o.kind',
      'o.from_address',
      'o.to_addresses',
      'o.cc_addresses',
      'o.bcc_addresses',
      'o.subject',
      'o.ticket_id',
      'o.message_id',
      'o.created_at',
      microsOf('o.created_at').as('created_us'),
    ])
    .where('o.workspace_id', '=', workspaceId);
}

type OutboxRow = Awaited<ReturnType<ReturnType<typeof outboxQuery>['executeTakeFirstOrThrow']>>;

const presentSummary = (r: OutboxRow): SummaryView => ({
  id: r.id,
  kind: r.kind,
  from: r.from_address,
  to: r.to_addresses,
  cc: r.cc_addresses,
  bcc: r.bcc_addresses,
  subject: r.subject,
  ticket_id: r.ticket_id,
  message_id: r.message_id,
  created_at: iso(r.created_at)!,
});

/** The outbox, newest first. */
export async function listOutbox(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListOutboxQuery>,
): Promise<Page<SummaryView>> {
  const limit = q.limit ?? 50;
  const list = `mail-outbox:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = outboxQuery(deps.database.db, ctx.workspaceId);
  if (after) query = query.where(createdBefore('o', after));
  const rows = await query
    .orderBy('o.created_at', 'desc')
    .orderBy('o.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], presentSummary);
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]/gi;

/** The absolute http(s) links of a body, in order, each once: the HTML's anchors, else the text's URLs. */
export function linksOf(html: string | null, text: string): string[] {
  const found: string[] = [];
  if (html) {
    const parser = new Parser({
      onopentag(name, attrs) {
        if (name === 'a' && typeof attrs.href === 'string') found.push(attrs.href.trim());
      },
    });
    parser.write(html);
    parser.end();
  }
  found.push(...(text.match(URL_IN_TEXT) ?? []));
  const out: string[] = [];
  for (const link of found) {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    if (!out.includes(url.href)) out.push(url.href);
  }
  return out;
}

/** One kept mail with its text, sanitized HTML, links and files. */
export async function getOutboxMail(deps: Deps, ctx: RequestContext, id: string): Promise<MailView> {
  if (!isUuid(id)) throw notFound('Mail not found.');
  const row = await outboxQuery(deps.database.db, ctx.workspaceId)
    .select(['o.body_enc', 'o.attachments'])
    .where('o.id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!row) throw notFound('Mail not found.');
  const body = openOutboxBody(deps.secrets, row) ?? { text: '', html: null };
  const html = body.html === null ? null : sanitizeHtml(body.html);
  return {
    ...presentSummary(row),
    text: body.text,
    html,
    links: linksOf(html, body.text),
    attachments: row.attachments,
  };
}
