// The help center's colours from the workspace's brand colour: the header is the brand colour
// with white or black text, whichever contrasts more (at least 4.58:1 for any colour), and links
// on the white page are the brand colour darkened until they reach 4.5:1 (WCAG AA for text).
// The CSS the pages load: the stylesheet file beside the templates with these colours prepended
// as custom properties, one file per workspace named by the hash of its content.
import { createHash } from 'node:crypto';

type Rgb = [number, number, number];

const rgbOf = (hex: string): Rgb => {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return [37, 99, 235];
  return [Number.parseInt(m[1]!, 16), Number.parseInt(m[2]!, 16), Number.parseInt(m[3]!, 16)];
};

const hexOf = (c: Rgb): string => `#${c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;

/** WCAG 2 relative luminance. */
function luminance([r, g, b]: Rgb): number {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG 2 contrast ratio of two colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const la = luminance(rgbOf(a));
  const lb = luminance(rgbOf(b));
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

export interface Palette {
  brand: string;
  /** Text and focus ring on the brand colour: #ffffff or #000000. */
  onBrand: string;
  /** Links and accents on the white page, at least 4.5:1 against it. */
  link: string;
}

export function paletteOf(brandColor: string): Palette {
  const brand = hexOf(rgbOf(brandColor));
  const onBrand = contrast(brand, '#ffffff') >= contrast(brand, '#000000') ? '#ffffff' : '#000000';
  let c = rgbOf(brand);
  let link = brand;
  for (let i = 0; i < 40 && contrast(link, '#ffffff') < 4.5; i++) {
    c = [c[0] * 0.9, c[1] * 0.9, c[2] * 0.9];
    link = hexOf(c);
  }
  return { brand, onBrand, link };
}

export interface Stylesheet {
  css: string;
  /** The first 16 hex digits of the content's SHA-256: in the file name and the ETag. */
  hash: string;
}

const sheets = new Map<string, Stylesheet>();

/** The stylesheet of a brand colour (a few colours per process: kept). */
export function stylesheetOf(base: string, brandColor: string): Stylesheet {
  let s = sheets.get(brandColor);
  if (!s?.css.endsWith(base)) {
    const p = paletteOf(brandColor);
    const css = `:root{--brand:${p.brand};--on-brand:${p.onBrand};--link:${p.link}}\n${base}`;
    s = { css, hash: createHash('sha256').update(css).digest('hex').slice(0, 16) };
    if (sheets.size > 1000) sheets.clear();
    sheets.set(brandColor, s);
  }
  return s;
}
