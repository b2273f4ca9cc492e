// The picture pipeline: bytes in, two PNGs out (256 and 64 px), or a refusal. It is the only code
// that hands user-given bytes to a decoder, and it runs in a worker thread (pool.ts), so the
// function below is self-contained: it is sent to the worker as its source text (no imports,
// no closures; sharp comes in as an argument). The rules are docs/images.md's:
//
// 1. the type is read from the first bytes: PNG, JPEG, GIF or WebP, whatever the file's name or
//    Content-Type said; SVG and everything else is unsupported_image, before any decoder runs;
// 2. the header alone (sharp's metadata: no pixel decoded) gives the size: over 4,096 px a side,
//    over 16 megapixels or under 16 px a side is image_too_large;
// 3. the pixels are decoded with limitInputPixels (a decompression bomb stops at the limit) and
//    fail on the first decoder warning (a truncated file is unsupported_image, not half a picture);
// 4. EXIF orientation is applied, then a centred square crop (logos and favicons: fitted on a
//    transparent square instead), resized to 256 and 64 px;
// 5. both are encoded as PNG, which sharp writes without metadata (EXIF, GPS, XMP, ICC, comments).

/** The limits of the spec ("Upload (pictures)"). */
export const PICTURE_LIMITS = {
  maxBytes: 5 * 1024 * 1024,
  maxSide: 4096,
  /** 16 megapixels: 16,000,000 pixels (docs/decisions.md "Pictures"). */
  maxPixels: 16_000_000,
  minSide: 16,
  sizes: [256, 64] as const,
} as const;

/** crop: a centred square (people). fit: the whole picture on a transparent square (logos, favicons). */
export type PictureFit = 'crop' | 'fit';

export type ProcessResult =
  | { ok: true; png256: Uint8Array; png64: Uint8Array; format: string; width: number; height: number }
  | { ok: false; code: 'unsupported_image' | 'image_too_large'; detail: string };

/** What the pipeline needs of sharp (the real module in production). */
// biome-ignore lint/suspicious/noExplicitAny: sharp's callable default export, typed at the call site
export type SharpModule = any;

/**
 * Processes one picture. Self-contained (see above): everything it uses is an argument or a
 * global; the limits are passed in rather than read from the constant.
 */
export async function processPicture(
  sharp: SharpModule,
  input: Uint8Array,
  fit: PictureFit,
  limits: { maxSide: number; maxPixels: number; minSide: number },
): Promise<ProcessResult> {
  const b = input;
  const at = (i: number, bytes: number[]) => bytes.every((v, k) => b[i + k] === v);
  const ascii = (i: number, s: string) =>
    at(
      i,
      Array.from(s, (c) => c.charCodeAt(0)),
    );
  let format: string | null = null;
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) format = 'png';
  else if (at(0, [0xff, 0xd8, 0xff])) format = 'jpeg';
  else if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) format = 'gif';
  else if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) format = 'webp';
  if (!format) {
    return { ok: false, code: 'unsupported_image', detail: 'The file is not a PNG, JPEG, GIF or WebP picture.' };
  }
  const unreadable = {
    ok: false as const,
    code: 'unsupported_image' as const,
    detail: `The ${format.toUpperCase()} picture could not be read (damaged or incomplete).`,
  };
  const options = { limitInputPixels: limits.maxPixels, failOn: 'warning' };
  let meta: { format?: string; width?: number; height?: number; pageHeight?: number; pages?: number };
  try {
    // The header only: no pixel is decoded here, so no pixel limit yet (the limits follow).
    meta = await sharp(b, { ...options, limitInputPixels: false }).metadata();
  } catch {
    return unreadable;
  }
  // The decoder sharp would use must be the one the bytes named (no SVG or TIFF behind a PNG name).
  if (meta.format !== format) return unreadable;
  const width = meta.width ?? 0;
  // An animation's height is the sum of its frames; the picture is the first frame.
  const height = meta.pages && meta.pages > 1 && meta.pageHeight ? meta.pageHeight : (meta.height ?? 0);
  if (width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels) {
    return {
      ok: false,
      code: 'image_too_large',
      detail: `The picture is ${width} x ${height} px: at most ${limits.maxSide} px a side and ${limits.maxPixels / 1e6} megapixels.`,
    };
  }
  if (width < limits.minSide || height < limits.minSide) {
    return {
      ok: false,
      code: 'image_too_large',
      detail: `The picture is ${width} x ${height} px: at least ${limits.minSide} px a side.`,
    };
  }
  try {
    // One decode: oriented, cropped or fitted to 256 px, as raw RGBA; the 64 px PNG is made from it.
    const { data, info } = await sharp(b, { ...options, pages: 1 })
      .rotate()
      .resize(256, 256, {
        fit: fit === 'crop' ? 'cover' : 'contain',
        position: 'centre',
        background: { r: 0, g: 0, b: 0, alpha: 0 },
      })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
    const [png256, png64] = await Promise.all([
      sharp(data, raw).png({ compressionLevel: 9, adaptiveFiltering: true }).toBuffer(),
      sharp(data, raw)
        .resize(64, 64, { fit: 'fill', kernel: 'lanczos3' })
        .png({ compressionLevel: 9, adaptiveFiltering: true })
        .toBuffer(),
    ]);
    return { ok: true, png256, png64, format, width, height };
  } catch {
    return unreadable;
  }
}
