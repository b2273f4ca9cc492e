// Where uploaded bytes live: the interface both backends implement, apart from the factory
// (index.ts) so that the backends (local.ts, s3.ts) import only this file.
import type { Readable } from 'node:stream';

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
