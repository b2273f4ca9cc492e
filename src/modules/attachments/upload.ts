// Reading an upload: a multipart body with exactly one part, a file field named `file`. The
// bytes are streamed to a spool file under DATA_DIR/tmp/uploads while they are counted, hashed
// and checked for UTF-8 text; the upload stops at the size limit (413), whatever was written is
// removed, and the rest of the body is read and thrown away after the answer, within bounds, so
// the client can read the 413 (platform/http/drain.ts). The content type comes from the bytes only (file-type, then a text check).
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { declareBodyLimit } from '../../platform/http/drain.js';
import { ApiError, badRequest, invalid, tooLarge } from '../../platform/http/errors.js';

export interface Spooled {
  path: string;
  filename: string;
  size: number;
  sha256: string;
  contentType: string;
}

/** Room for multipart boundaries and part headers on top of the file itself. */
const MULTIPART_OVERHEAD = 64 * 1024;
const HEAD_BYTES = 1024;

const overLimit = (maxBytes: number) =>
  tooLarge(`The file is larger than the upload limit (${Math.round(maxBytes / (1024 * 1024))} MB).`);
const onlyOneFile = () => invalid('body.file', 'send exactly one part: a file field named file');

/** Control characters, zero-width and direction marks (a name that shows as "exe.txt" but is not). */
const isInvisible = (cp: number) =>
  cp <= 0x1f ||
  (cp >= 0x7f && cp <= 0x9f) ||
  (cp >= 0x200b && cp <= 0x200f) ||
  (cp >= 0x2028 && cp <= 0x202e) ||
  (cp >= 0x2060 && cp <= 0x206f) ||
  cp === 0xfeff;

/** The upload's file name: no path, no control or direction characters, at most 255 characters. */
export function cleanFilename(raw: string | undefined): string {
  let name = (raw ?? '').toWellFormed();
  name = name.split(/[\\/]/).pop() ?? '';
  name = Array.from(name)
    .filter((c) => !isInvisible(c.codePointAt(0)!))
    .join('')
    .trim();
  if (name === '' || name === '.' || name === '..') return 'file';
  const chars = Array.from(name);
  if (chars.length <= 255) return name;
  // Too long: keep a short extension.
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? Array.from(name.slice(dot)) : [];
  if (ext.length > 0 && ext.length <= 16) {
    return (
      chars
        .slice(0, 255 - ext.length)
        .join('')
        .trimEnd() + ext.join('')
    );
  }
  return chars.slice(0, 255).join('').trimEnd();
}

const lower = (b: Buffer) => b.toString('latin1').toLowerCase();

/** HTML and XML among text (the WHATWG MIME sniffing patterns), else text/plain. */
export function textType(head: Buffer): string {
  let i = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) i = 3;
  while (i < head.length && [0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(head[i]!)) i++;
  const s = lower(head.subarray(i));
  if (s.startsWith('<?xml')) return s.includes('<svg') ? 'image/svg+xml' : 'application/xml';
  if (/^<svg[\s>]/.test(s)) return 'image/svg+xml';
  if (s.startsWith('<!--')) return 'text/html';
  const html = ['!doctype html', 'html', 'head', 'script', 'iframe', 'h1', 'div', 'font', 'table', 'a', 'style'];
  const more = ['title', 'b', 'body', 'br', 'p'];
  for (const tag of [...html, ...more]) {
    if (s.startsWith(`<${tag}`) && [' ', '>'].includes(s.charAt(tag.length + 1))) return 'text/html';
  }
  return 'text/plain';
}

/** What multipart failures mean for the client. */
function multipartError(err: unknown, maxBytes: number): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: unknown })?.code;
  switch (code) {
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ApiError('unsupported_media_type', 'Send the file as multipart/form-data.');
    case 'FST_REQ_FILE_TOO_LARGE':
      return overLimit(maxBytes);
    case 'FST_PROTO_VIOLATION':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return onlyOneFile();
  }
  // File system failures (a full disk) are ours; anything else is a body busboy could not read.
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return err;
  return badRequest('The multipart body could not be read.');
}

export interface SpoolResult {
  filename: string;
  size: number;
  sha256: string;
  /** UTF-8 without NUL characters. */
  text: boolean;
  /** The first bytes, for telling HTML and XML from plain text. */
  head: Buffer;
  /** Over the limit (only with `keepReading`: the rest of the part was skipped). */
  truncated: boolean;
}

/**
 * Writes one file part to `path` while counting, hashing and checking it. At `maxBytes` it stops
 * the request (413), or with `keepReading` skips the rest of the part and says so (`truncated`),
 * so that a form's other fields can still be read.
 */
export async function spool(
  part: MultipartFile,
  path: string,
  maxBytes: number,
  keepReading = false,
): Promise<SpoolResult> {
  const hash = createHash('sha256');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let size = 0;
  let text = true;
  const head: Buffer[] = [];
  let headSize = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      hash.update(chunk);
      if (headSize < HEAD_BYTES) {
        const piece = chunk.subarray(0, HEAD_BYTES - headSize);
        head.push(piece);
        headSize += piece.length;
      }
      if (text) {
        if (chunk.includes(0)) text = false;
        else {
          try {
            decoder.decode(chunk, { stream: true });
          } catch {
            text = false;
          }
        }
      }
      done(null, chunk);
    },
    flush(done) {
      if (text) {
        try {
          decoder.decode();
        } catch {
          text = false;
        }
      }
      done();
    },
  });
  // Busboy stops the file at the limit and says so: stop reading the request right there.
  if (!keepReading) part.file.once('limit', () => part.file.destroy(overLimit(maxBytes)));
  await pipeline(part.file, meter, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  if (part.file.truncated && !keepReading) throw overLimit(maxBytes);
  return {
    filename: cleanFilename(part.filename),
    size,
    sha256: hash.digest('hex'),
    text,
    head: Buffer.concat(head),
    truncated: part.file.truncated,
  };
}

/** The content type of a spooled file, from its bytes only (file-type, then a text check). */
export async function contentTypeOf(path: string, got: SpoolResult): Promise<string> {
  if (got.size === 0) return 'application/octet-stream';
  const { fileTypeFromFile } = await import('file-type'); // loaded on first upload, not at start
  const detected = await fileTypeFromFile(path);
  if (detected) return detected.mime;
  return got.text ? textType(got.head) : 'application/octet-stream';
}

/**
 * Reads the one `file` part of a multipart request into a spool file (the caller removes it).
 * 415 for other content types, 413 over `maxBytes`, 422 at body.file for anything but exactly
 * one file field named `file`, 400 for a body that is not valid multipart.
 */
export async function receiveUpload(req: FastifyRequest, maxBytes: number, spoolDir: string): Promise<Spooled> {
  if (!req.isMultipart()) {
    throw new ApiError('unsupported_media_type', 'Send the file as multipart/form-data with one field named file.');
  }
  // What is left of a refused body is drained after the answer (platform/http/drain.ts).
  declareBodyLimit(req, maxBytes + MULTIPART_OVERHEAD);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD) {
    throw overLimit(maxBytes);
  }
  await mkdir(spoolDir, { recursive: true });
  let got: SpoolResult | null = null;
  const path = join(spoolDir, `${randomBytes(12).toString('hex')}.upload`);
  try {
    // throwFileSizeLimit is read per call by the plugin but missing from parts()'s type.
    const parts = req.parts({
      limits: { fileSize: maxBytes, files: 2, fields: 4, parts: 4, fieldSize: 64 * 1024, headerPairs: 32 },
      throwFileSizeLimit: false,
      defParamCharset: 'utf8',
    } as Parameters<FastifyRequest['parts']>[0]);
    for await (const part of parts) {
      if (got !== null || part.type !== 'file' || part.fieldname !== 'file') {
        if (part.type === 'file') part.file.resume();
        throw onlyOneFile();
      }
      got = await spool(part, path, maxBytes);
    }
  } catch (err) {
    await unlink(path).catch(() => {});
    throw multipartError(err, maxBytes);
  }
  if (got === null) throw invalid('body.file', 'is required: send the file as a field named file');
  try {
    const contentType = await contentTypeOf(path, got);
    return { path, filename: got.filename, size: got.size, sha256: got.sha256, contentType };
  } catch (err) {
    await unlink(path).catch(() => {});
    throw err;
  }
}
