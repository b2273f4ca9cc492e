// Attachments: files uploaded ahead of the message that uses them. An upload is stored
// (bytes first, then the row) without a message; sending a message claims its attachments
// (claimAttachments, in the message's transaction); unclaimed uploads are purged after 24
// hours (purge.ts). Reading one: any member who may see the message's ticket, a key with
// tickets:read, or anyone holding the url's token (urls.ts).
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { canSeeTeam } from '../teams/access.js';
import type { Attachment } from './schemas.js';
import type { Spooled } from './upload.js';
import { attachmentUrls } from './urls.js';

export type AttachmentView = Static<typeof Attachment>;

type ViewRow = {
  workspace_id: string;
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number | string;
  inline: boolean;
};

const VIEW_COLUMNS = ['workspace_id', 'id', 'filename', 'content_type', 'size_bytes', 'inline'] as const;

export const attachmentNotFound = () => notFound('Attachment not found.');

/** The Attachment object, with a fresh one-hour download url. */
export function attachmentView(deps: Deps, row: ViewRow): AttachmentView {
  return {
    id: row.id,
    filename: row.filename,
    content_type: row.content_type,
    size_bytes: Number(row.size_bytes),
    inline: row.inline,
    url: attachmentUrls(deps.config).url(row.workspace_id, row.id),
  };
}

/** Where an attachment's bytes are kept: `<workspace id>/<last two hex digits of the id>/<id>`. */
export const storageKeyOf = (workspaceId: string, id: string) => `${workspaceId}/${id.slice(-2)}/${id}`;

/** Stores a spooled upload (bytes, then the row) and answers its Attachment. */
export const createAttachment = (deps: Deps, ctx: RequestContext, upload: Spooled): Promise<AttachmentView> =>
  createAttachmentFor(
    deps,
    ctx.workspaceId,
    {
      userId: ctx.actor.kind === 'member' ? ctx.actor.userId : null,
      apiKeyId: ctx.actor.kind === 'api_key' ? ctx.actor.apiKeyId : null,
      contactId: null,
    },
    upload,
  );

/** Who uploaded a file: a member, a key, or a chat widget's visitor (their contact). */
export interface Uploader {
  userId: string | null;
  apiKeyId: string | null;
  contactId: string | null;
}

/** Stores a spooled upload of `uploader` (bytes, then the row) and answers its Attachment. */
export async function createAttachmentFor(
  deps: Deps,
  workspaceId: string,
  uploader: Uploader,
  upload: Spooled,
): Promise<AttachmentView> {
  const id = newId();
  const key = storageKeyOf(workspaceId, id);
  await deps.storage.put(key, createReadStream(upload.path), upload.size, upload.contentType);
  try {
    const row = await deps.database.db
      .insertInto('attachments')
      .values({
        workspace_id: workspaceId,
        id,
        message_id: null,
        filename: upload.filename,
        content_type: upload.contentType,
        size_bytes: upload.size,
        inline: false,
        storage_key: key,
        sha256: upload.sha256,
        uploaded_by_user_id: uploader.userId,
        uploaded_by_api_key_id: uploader.apiKeyId,
        uploaded_by_contact_id: uploader.contactId,
      })
      .returning(VIEW_COLUMNS)
      .executeTakeFirstOrThrow();
    return attachmentView(deps, row);
  } catch (err) {
    await deps.storage.delete(key).catch(() => {});
    throw err;
  }
}

export interface Download {
  filename: string;
  contentType: string;
  size: number;
  storageKey: string;
}

/**
 * The attachment a caller may download. With a url token, the token is the permission (it was
 * handed to someone who could see the attachment). Otherwise the caller must be able to see the
 * ticket of the attachment's message (private teams); unattached uploads are visible to the
 * workspace. Anything else answers exactly like a missing attachment.
 */
export async function findDownload(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  opts: { viaToken: boolean },
): Promise<Download> {
  if (!isUuid(id)) throw attachmentNotFound();
  const row = await deps.database.db
    .selectFrom('attachments as a')
    .leftJoin('messages as m', (j) =>
      j.onRef('m.workspace_id', '=', 'a.workspace_id').onRef('m.id', '=', 'a.message_id'),
    )
    .leftJoin('tickets as t', (j) => j.onRef('t.workspace_id', '=', 'm.workspace_id').onRef('t.id', '=', 'm.ticket_id'))
    .leftJoin('teams as tm', (j) => j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'))
    .select([
      'a.filename',
      'a.content_type',
      'a.size_bytes',
      'a.storage_key',
      sql<string | null>`case when tm.private then tm.id end`.as('private_team_id'),
    ])
    .where('a.workspace_id', '=', ctx.workspaceId)
    .where('a.id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!row) throw attachmentNotFound();
  if (!opts.viaToken && !canSeeTeam(ctx, row.private_team_id)) throw attachmentNotFound();
  return {
    filename: row.filename,
    contentType: row.content_type,
    size: Number(row.size_bytes),
    storageKey: row.storage_key,
  };
}

/** An id as it appears in an error: quoted, and short. */
const shown = (id: unknown) => JSON.stringify(String(id).slice(0, 64));

/**
 * Attaches uploads to a new message, inside the caller's transaction (`u.trx`), after the message
 * row exists. Ids are deduplicated (case-insensitively) and their rows locked (FOR UPDATE, in id
 * order); an id that is not a UUID, not an attachment of this workspace, or already attached to
 * a message is a 422 at body.attachment_ids naming it. Returns the Attachments in the given order.
 */
export async function claimAttachments(
  deps: Deps,
  u: Unit,
  ids: string[],
  messageId: string,
): Promise<AttachmentView[]> {
  const wanted: string[] = [];
  for (const raw of ids) {
    if (!isUuid(raw)) throw invalid('body.attachment_ids', `${shown(raw)} is not an attachment id`);
    const id = raw.toLowerCase();
    if (!wanted.includes(id)) wanted.push(id);
  }
  if (wanted.length === 0) return [];
  const rows = await u.trx
    .selectFrom('attachments')
    .select([...VIEW_COLUMNS, 'message_id'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', 'in', wanted)
    .orderBy('id')
    .forUpdate()
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of wanted) {
    const row = byId.get(id);
    if (!row) throw invalid('body.attachment_ids', `${shown(id)} is not an attachment of this workspace`);
    if (row.message_id !== null) {
      throw invalid('body.attachment_ids', `${shown(id)} is already attached to a message`);
    }
  }
  await u.trx
    .updateTable('attachments')
    .set({ message_id: messageId })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', 'in', wanted)
    .execute();
  return wanted.map((id) => attachmentView(deps, byId.get(id)!));
}

/**
 * The attachments of several messages in one query, each list in upload order (created_at, id).
 * Every requested message id is a key (an empty list when it has none).
 */
export async function attachmentsOfMessages(
  deps: Deps,
  db: Kysely<DB>,
  workspaceId: string,
  messageIds: string[],
): Promise<Map<string, AttachmentView[]>> {
  const out = new Map<string, AttachmentView[]>(messageIds.map((id) => [id, []]));
  if (messageIds.length === 0) return out;
  const rows = await db
    .selectFrom('attachments')
    .select([...VIEW_COLUMNS, 'message_id'])
    .where('workspace_id', '=', workspaceId)
    .where('message_id', 'in', messageIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  for (const r of rows) {
    const list = out.get(r.message_id!);
    if (list) list.push(attachmentView(deps, r));
    else out.set(r.message_id!, [attachmentView(deps, r)]);
  }
  return out;
}

export interface AttachmentFile {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  inline: boolean;
  content_id: string | null;
  /** The bytes, or null when the storage has no such object any more. */
  open(): Promise<Readable | null>;
}

/** A message's files with their bytes in storage, in upload order (outbound email attaches them). */
export async function attachmentFilesOfMessage(
  deps: Deps,
  db: Kysely<DB>,
  workspaceId: string,
  messageId: string,
): Promise<AttachmentFile[]> {
  const rows = await db
    .selectFrom('attachments')
    .select(['id', 'filename', 'content_type', 'size_bytes', 'inline', 'content_id', 'storage_key'])
    .where('workspace_id', '=', workspaceId)
    .where('message_id', '=', messageId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    filename: r.filename,
    content_type: r.content_type,
    size_bytes: Number(r.size_bytes),
    inline: r.inline,
    content_id: r.content_id,
    open: () => deps.storage.open(r.storage_key),
  }));
}
