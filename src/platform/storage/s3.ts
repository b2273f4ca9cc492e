// S3-compatible object storage through the official AWS SDK v3. Objects live under
// `<prefix><key>` in S3_BUCKET. Reads are presigned GET URLs (the storage server answers the
// download, with the Content-Type and Content-Disposition the service chose); open() is there
// for backends that cannot be reached by clients and for tests.

import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../../config.js';
import { checkKey } from './key.js';
import type { PresignOptions, Storage } from './types.js';

const isMissing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

export class S3Storage implements Storage {
  readonly kind = 's3' as const;
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(
    config: S3Config,
    private readonly prefix = '',
  ) {
    this.#bucket = config.bucket;
    const options: S3ClientConfig = {
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      // Checksums only where S3 requires them: many S3-compatible servers do not accept the
      // SDK's default CRC32 trailers yet.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
    };
    if (config.endpoint) options.endpoint = config.endpoint;
    if (config.accessKeyId && config.secretAccessKey) {
      options.credentials = { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey };
    }
    this.#client = new S3Client(options);
  }

  #key(key: string): string {
    return this.prefix + checkKey(key);
  }

  async put(key: string, body: Buffer | Readable, size: number, contentType: string): Promise<void> {
    // PutObject is atomic: a failed upload leaves no object.
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#key(key),
        Body: body,
        ContentLength: size,
        ContentType: contentType,
      }),
    );
  }

  async open(key: string): Promise<Readable | null> {
    try {
      const r = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
      return (r.Body as Readable | undefined) ?? null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  async presignedGet(key: string, opts: PresignOptions): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.#bucket,
      Key: this.#key(key),
      ResponseContentType: opts.contentType,
      ResponseContentDisposition: opts.contentDisposition,
    });
    return getSignedUrl(this.#client, command, { expiresIn: opts.expiresInSeconds });
  }

  close(): void {
    this.#client.destroy();
  }
}
