// Reading the portal's forms: application/x-www-form-urlencoded (its fields as
// platform/http/pages.ts's readForms parsed them), or multipart/form-data with
// files (the contact form, a reply). Files are spooled under DATA_DIR/tmp/uploads as the API's
// uploads are, each up to ATTACHMENT_MAX_MB; a file over the limit is skipped and reported, and
// the rest of the form is still read, so that the page can show it again with the values kept.
// Nothing is stored here: the caller moves the files to storage once the whole form is valid,
// and removes the spool files in every case (discardFiles).
import { randomBytes } from 'node:crypto';
import { mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../../platform/http/errors.js';
import { storable } from '../../platform/http/pages.js';
import { contentTypeOf, spool } from '../attachments/upload.js';

/** At most this many files per form. */
export const MAX_FILES = 5;
const MAX_FIELD_BYTES = 256 * 1024;

export interface FormFile {
  path: string;
  filename: string;
  size: number;
  sha256: string;
  contentType: string;
}

export interface ReadForm {
  fields: Record<string, string>;
  files: FormFile[];
  /** Names of files over the size limit (skipped). */
  tooLarge: string[];
  /** More files than MAX_FILES were sent (the extra ones were skipped). */
  tooMany: boolean;
}

/** The fields and files of a form post (see above). */
export async function readForm(req: FastifyRequest, maxFileBytes: number, spoolDir: string): Promise<ReadForm> {
  const out: ReadForm = { fields: {}, files: [], tooLarge: [], tooMany: false };
  if (!req.isMultipart()) {
    // Only the urlencoded parser's fields are a form's (a JSON body is not one: 400 page).
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      throw badRequest('Send the form as application/x-www-form-urlencoded or multipart/form-data.');
    }
    out.fields = (req.body as Record<string, string> | undefined) ?? {};
    return out;
  }
  await mkdir(spoolDir, { recursive: true });
  // The file being written when reading fails: removed with the others.
  let current: string | null = null;
  try {
    const parts = req.parts({
      limits: { fileSize: maxFileBytes, files: 20, fields: 20, parts: 40, fieldSize: MAX_FIELD_BYTES, headerPairs: 32 },
      throwFileSizeLimit: false,
      defParamCharset: 'utf8',
    } as Parameters<FastifyRequest['parts']>[0]);
    for await (const part of parts) {
      if (part.type === 'field') {
        if (!(part.fieldname in out.fields) && part.fieldname !== '__proto__' && typeof part.value === 'string') {
          out.fields[part.fieldname] = storable(part.value);
        }
        continue;
      }
      // A file input left empty is sent as a part without a name and without bytes.
      if (!part.filename || out.files.length >= MAX_FILES) {
        if (part.filename) out.tooMany = true;
        part.file.resume();
        await new Promise<void>((resolve) => part.file.once('end', resolve).once('close', resolve));
        continue;
      }
      const path = join(spoolDir, `${randomBytes(12).toString('hex')}.upload`);
      current = path;
      const got = await spool(part, path, maxFileBytes, true);
      if (got.truncated) {
        await unlink(path).catch(() => {});
        out.tooLarge.push(got.filename);
        continue;
      }
      if (got.size === 0 && got.filename === 'file') {
        await unlink(path).catch(() => {});
        continue;
      }
      out.files.push({
        path,
        filename: got.filename,
        size: got.size,
        sha256: got.sha256,
        contentType: await contentTypeOf(path, got),
      });
      current = null;
    }
  } catch (err) {
    await discardFiles(out.files);
    if (current) await unlink(current).catch(() => {});
    // A file system failure (a full disk) is ours; anything else is a body that is not a form.
    const code = (err as { code?: unknown })?.code;
    if (err instanceof ApiError || (typeof code === 'string' && /^E[A-Z]+$/.test(code))) throw err;
    throw badRequest('The form could not be read.');
  }
  return out;
}

/** Removes the spool files of a form. */
export async function discardFiles(files: FormFile[]): Promise<void> {
  await Promise.all(files.map((f) => unlink(f.path).catch(() => {})));
}
