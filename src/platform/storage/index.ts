// Where uploaded bytes live: one small interface, two backends. Local disk under
// DATA_DIR/attachments by default; S3-compatible object storage when S3_BUCKET is set.
// Keys are made by the service (never taken from user input) and checked again (key.ts).
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { S3Config } from '../../config.js';
import { LocalStorage } from './local.js';

export interface PresignOptions {
  /** Content-Type the storage server answers with. */
  contentType: string;
  /** Content-Disposition the storage server answers with. */
  contentDisposition: string;
  expiresInSeconds: number;
}

export interface Storage {
  readonly kind: 'local' | 's3';
  /** Stores `size` bytes under `key` (all or nothing: a failed write leaves no object behind). */
  put(key: string, body: Buffer | Readable, size: number, contentType: string): Promise<void>;
  /** The object's bytes, or null when there is no such object. */
  open(key: string): Promise<Readable | null>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** A short-lived URL the storage server itself answers, or null when this backend cannot sign. */
  presignedGet(key: string, opts: PresignOptions): Promise<string | null>;
  /** Removes what interrupted writes left behind before `before` (a crash between write and rename). */
  sweep?(before: Date): Promise<number>;
  /** Releases connections (S3). */
  close?(): void;
}

/**
 * Local disk under DATA_DIR/attachments, or S3_BUCKET under the `attachments/` prefix. The AWS
 * SDK is loaded only when S3 is configured.
 */
export async function openStorage(opts: { dataDir: string; s3: S3Config | null }): Promise<Storage> {
  if (!opts.s3) return new LocalStorage(join(opts.dataDir, 'attachments'));
  const { S3Storage } = await import('./s3.js');
  return new S3Storage(opts.s3, 'attachments/');
}
