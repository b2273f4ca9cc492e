// Where uploaded bytes live: one small interface, two backends. Local disk under
// DATA_DIR/attachments by default; S3-compatible object storage when S3_BUCKET is set.
// Keys are made by the service (never taken from user input) and checked again (key.ts).
import { join } from 'node:path';
import type { S3Config } from '../../config.js';
import { LocalStorage } from './local.js';
import type { Storage } from './types.js';

export type { PresignOptions, Storage } from './types.js';

/**
 * Local disk under DATA_DIR/attachments, or S3_BUCKET under the `attachments/` prefix. The AWS
 * SDK is loaded only when S3 is configured.
 */
export async function openStorage(opts: { dataDir: string; s3: S3Config | null }): Promise<Storage> {
  if (!opts.s3) return new LocalStorage(join(opts.dataDir, 'attachments'));
  const { S3Storage } = await import('./s3.js');
  return new S3Storage(opts.s3, 'attachments/');
}
