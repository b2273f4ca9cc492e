// Getting a picture's bytes and turning them into a stored picture: from a multipart upload
// (PUT …/avatar, PUT /v1/workspace/images/{slot}) or from a URL fetched server-side (PATCH /v1/me
// avatar_url, the automatic lookups). Either way the bytes go through process.ts in the pool and
// only its PNGs are kept (docs/images.md).
import { readFile, unlink } from 'node:fs/promises';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { ApiError, invalid } from '../../platform/http/errors.js';
import { type SafeGetResult, safeGet } from '../../platform/net/http.js';
import { spoolDirOf } from '../attachments/purge.js';
import { receiveUpload } from '../attachments/upload.js';
import { PICTURE_LIMITS, type PictureFit, type ProcessResult } from './process.js';
import { type AvatarSource, type Owner, type StoredPicture, storePicture } from './store.js';

type Processed = Extract<ProcessResult, { ok: true }>;

/** Decodes and re-encodes `bytes`; 422 unsupported_image or image_too_large when refused. */
export async function processOrRefuse(deps: Deps, bytes: Uint8Array, fit: PictureFit): Promise<Processed> {
  const r = await deps.pictures.pool.process(bytes, fit);
  if (!r.ok) throw new ApiError(r.code, r.detail);
  return r;
}

/**
 * Reads the request's one `file` part (streamed to a spool file, stopped at 5 MB with 413
 * too_large: the attachments' reader), processes and stores it for `owner`. The picture is
 * stored retired: the owner's module adopts it.
 */
export async function pictureFromUpload(
  deps: Deps,
  req: FastifyRequest,
  owner: Owner,
  fit: PictureFit,
): Promise<StoredPicture> {
  const { path } = await receiveUpload(req, PICTURE_LIMITS.maxBytes, spoolDirOf(deps.config));
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } finally {
    await unlink(path).catch(() => {});
  }
  return storePicture(deps, owner, 'upload', await processOrRefuse(deps, bytes, fit));
}

/**
 * GETs a picture from a user-given URL with the webhooks' address rules (src/platform/net: https,
 * public addresses checked at connect time, each redirect checked again), 5 MB and 10 s.
 */
export async function fetchPictureBytes(deps: Deps, url: string): Promise<SafeGetResult> {
  const o = deps.pictures.options;
  return safeGet(url, {
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: o.fetchTimeoutMs,
    maxBytes: PICTURE_LIMITS.maxBytes,
    ...(o.resolve ? { resolve: o.resolve } : {}),
    ...(o.refuse ? { refuse: o.refuse } : {}),
    headers: { 'user-agent': 'helpdesk-pictures/1' },
  });
}

/**
 * PATCH /v1/me avatar_url: the picture at `url`, fetched, processed and stored. 422 at `location`
 * when it cannot be fetched (scheme, address, redirect, status, size, time), 422
 * unsupported_image / image_too_large when it is not an acceptable picture.
 */
export async function pictureFromUrl(
  deps: Deps,
  url: string,
  owner: Owner,
  source: AvatarSource,
  location: string,
): Promise<StoredPicture> {
  const got = await fetchPictureBytes(deps, url);
  if (got.tooLarge) throw invalid(location, `the picture is larger than ${PICTURE_LIMITS.maxBytes / (1024 * 1024)} MB`);
  if (!got.body) throw invalid(location, `could not be fetched: ${got.error ?? 'no answer'}`);
  return storePicture(deps, owner, source, await processOrRefuse(deps, got.body, 'crop'));
}
