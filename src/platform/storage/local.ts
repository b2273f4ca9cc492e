// Local disk: DATA_DIR/attachments/<key>. A write goes to a temporary file in
// <root>/.partial (same file system), is flushed, then renamed into place, so a reader never
// sees half a file and a crash leaves only a temporary file (removed by sweep()).
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkKey } from './key.js';
import type { Storage } from './types.js';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

export class LocalStorage implements Storage {
  readonly kind = 'local' as const;
  readonly #partial: string;

  constructor(readonly root: string) {
    this.#partial = join(root, '.partial');
  }

  /** The file of a key (exported for tests and operators). */
  pathOf(key: string): string {
    return join(this.root, checkKey(key));
  }

  async put(key: string, body: Buffer | Readable, size: number): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(this.#partial, { recursive: true });
    await mkdir(dirname(target), { recursive: true });
    const temp = join(this.#partial, `${randomBytes(12).toString('hex')}.tmp`);
    try {
      const out = createWriteStream(temp, { flags: 'wx', mode: 0o600 });
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, out);
      const fh = await open(temp, 'r');
      try {
        const written = (await fh.stat()).size;
        if (written !== size) throw new Error(`stored ${written} bytes instead of ${size}`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
  }

  async open(key: string): Promise<Readable | null> {
    try {
      const fh = await open(this.pathOf(key), 'r');
      return fh.createReadStream();
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  async presignedGet(): Promise<null> {
    return null; // the service streams local files itself
  }

  async sweep(before: Date): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.#partial);
    } catch (err) {
      if (isMissing(err)) return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names) {
      const path = join(this.#partial, name);
      try {
        if ((await stat(path)).mtime < before) {
          await unlink(path);
          removed++;
        }
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    return removed;
  }
}
