// Processed pictures at rest: two PNGs per picture in the storage layer (local disk or S3) under
// images/<2 hex>/<id>-<size>.png, and a row in `images` that says whose it is and, once it was
// replaced or removed, since when. Ids are random UUIDs (v4: 122 random bits), never reused: a
// picture's URL names one set of bytes forever, which is what lets it be served as immutable.
//
// A new picture's row is written retired (retired_at = now) before its bytes, and the owner's
// transaction adopts it (retired_at = null) in the same statement-group that points the owner at
// it and retires the old one. A crash or a failed transaction in between leaves only a retired
// picture, which the removal job takes away like any other.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB, ImagesTable } from '../../platform/db/schema.js';
import type { ProcessResult } from './process.js';

export type PictureSize = 256 | 64;
export type OwnerKind = ImagesTable['owner_kind'];
export type AvatarSource = 'upload' | 'oauth' | 'gravatar' | 'domain' | 'widget';

const URL_ID_RE = /\/v1\/images\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12})(?:[?#]|$)/;

/**
 * How long a replaced or removed picture stays servable: 7 days, the event retention, so that
 * events, webhooks and pages made before the change still show the picture they name
 * (docs/images.md "Removal").
 */
export const CACHE_HORIZON_MS = 7 * 24 * 3600 * 1000;

/** Random (v4), not time-ordered (v7): an id must not tell when a picture was made. */
export const newImageId = (): string => randomUUID();
export const imageKey = (id: string, size: PictureSize): string => `images/${id.slice(0, 2)}/${id}-${size}.png`;
/** The picture's address: GET serves the 256 px PNG, `?s=64` the small one. */
export const imageUrl = (config: Deps['config'], id: string): string => `${config.publicUrl}/v1/images/${id}`;
/** The picture id of an avatar_url this service made; null for anything else. */
export const imageIdOf = (url: string | null | undefined): string | null =>
  url ? (URL_ID_RE.exec(url)?.[1] ?? null) : null;

export interface Owner {
  kind: OwnerKind;
  id: string;
  workspaceId: string | null;
}

export interface StoredPicture {
  id: string;
  url: string;
  source: AvatarSource;
}

/** Writes a processed picture (retired until its owner adopts it); returns its id and URL. */
export async function storePicture(
  deps: Pick<Deps, 'database' | 'storage' | 'config'>,
  owner: Owner,
  source: AvatarSource,
  result: Extract<ProcessResult, { ok: true }>,
): Promise<StoredPicture> {
  const id = newImageId();
  const png256 = Buffer.from(result.png256.buffer, result.png256.byteOffset, result.png256.byteLength);
  const png64 = Buffer.from(result.png64.buffer, result.png64.byteOffset, result.png64.byteLength);
  await deps.database.db
    .insertInto('images')
    .values({
      id,
      owner_kind: owner.kind,
      owner_id: owner.id,
      workspace_id: owner.workspaceId,
      source,
      bytes_256: png256.length,
      bytes_64: png64.length,
      retired_at: new Date(),
    })
    .execute();
  await Promise.all([
    deps.storage.put(imageKey(id, 256), png256, png256.length, 'image/png'),
    deps.storage.put(imageKey(id, 64), png64, png64.length, 'image/png'),
  ]);
  return { id, url: imageUrl(deps.config, id), source };
}

/**
 * In the owner's transaction: the new picture (if any) is in use, the one it replaces (if it is
 * one of ours) is retired from now.
 */
export async function swapPictures(
  trx: Transaction<DB> | Kysely<DB>,
  adopted: string | null,
  previousUrl: string | null,
): Promise<void> {
  if (adopted) await trx.updateTable('images').set({ retired_at: null }).where('id', '=', adopted).execute();
  const old = imageIdOf(previousUrl);
  if (old && old !== adopted) {
    await trx
      .updateTable('images')
      .set({ retired_at: new Date() })
      .where('id', '=', old)
      .where('retired_at', 'is', null)
      .execute();
  }
}

/** A picture's row, for serving (null: no such picture, or already removed). */
/**
 * A deleted workspace's pictures (its logo and brand images, its contacts' and companies'
 * avatars): retired from now, so the removal job takes their bytes and rows away after the cache
 * horizon like any replaced picture. Users' own pictures belong to no workspace and stay.
 */
export async function retireWorkspacePictures(trx: Transaction<DB> | Kysely<DB>, workspaceId: string): Promise<void> {
  await trx
    .updateTable('images')
    .set({ retired_at: new Date() })
    .where('workspace_id', '=', workspaceId)
    .where('retired_at', 'is', null)
    .execute();
}

export async function findPicture(db: Kysely<DB>, id: string) {
  return db.selectFrom('images').select(['id', 'bytes_256', 'bytes_64']).where('id', '=', id).executeTakeFirst();
}

/**
 * Removes pictures retired before `now - horizonMs`: bytes first (a missing object is fine), then
 * the rows, in batches that lock their rows (two processes do not remove the same ones). Served
 * copies cached in memory go too, in this process.
 */
export async function removeRetiredPictures(
  deps: Pick<Deps, 'database' | 'storage'> & Partial<Pick<Deps, 'pictures'>>,
  opts: { now?: Date; horizonMs?: number; batch?: number } = {},
): Promise<number> {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - (opts.horizonMs ?? CACHE_HORIZON_MS));
  const batch = opts.batch ?? 100;
  let total = 0;
  for (;;) {
    const n = await deps.database.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('images')
        .select('id')
        .where('retired_at', '<=', cutoff)
        .orderBy('retired_at')
        .limit(batch)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return 0;
      for (const r of rows) {
        await deps.storage.delete(imageKey(r.id, 256));
        await deps.storage.delete(imageKey(r.id, 64));
        // This process stops serving it at once; others within their cache's hour (pictures.ts).
        deps.pictures?.served.delete(`${r.id}-256`);
        deps.pictures?.served.delete(`${r.id}-64`);
      }
      await trx
        .deleteFrom('images')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
      return rows.length;
    });
    total += n;
    if (n < batch) break;
  }
  return total;
}

/** A change of an owner's picture, as the owner's module applies it (setContactPicture, …). */
export interface PictureChange {
  /** The new picture (stored by storePicture, adopted by the change), or null to remove it. */
  picture: StoredPicture | null;
  /**
   * Applied only while the current picture's source is one of these (null: no picture): an
   * automatic lookup never replaces an upload. Undefined: always.
   */
  onlyOver?: ReadonlyArray<string | null>;
}

/** Whether a change applies to an owner whose picture came from `current`. */
export const changeApplies = (change: PictureChange, current: string | null): boolean =>
  change.onlyOver === undefined || change.onlyOver.includes(current);
