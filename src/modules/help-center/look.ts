// The help center's colours from the workspace's brand colour: the header is the brand colour
// with white or black text, whichever contrasts more (at least 4.58:1 for any colour), in both
// colour schemes; links on the light page are the brand colour darkened until they reach 4.5:1
// (WCAG AA for text) on it and on its raised surface, links on the dark page (prefers-color-scheme:
// dark) the brand colour lightened until they reach 4.5:1 on it and on its raised surface.
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
  /** Links and accents on the light page, at least 4.5:1 against each LIGHT_SURFACES colour. */
  link: string;
  /** Links and accents on the dark page, at least 4.5:1 against each DARK_SURFACES colour. */
  linkDark: string;
}

/** The backgrounds links sit on (help-center.css: --bg and --surface of each scheme). */
export const LIGHT_SURFACES = ['#ffffff', '#f9fafb'] as const;
export const DARK_SURFACES = ['#111827', '#1f2937'] as const;

const leastContrast = (c: string, surfaces: readonly string[]) => Math.min(...surfaces.map((s) => contrast(c, s)));

/** `start` moved step by step towards `to` (each channel a tenth of the way) until it reaches 4.5:1 on `surfaces`. */
function readableOn(start: Rgb, to: number, surfaces: readonly string[]): string {
  let c = start;
  let out = hexOf(c);
  for (let i = 0; i < 60 && leastContrast(out, surfaces) < 4.5; i++) {
    c = [c[0] + (to - c[0]) * 0.1, c[1] + (to - c[1]) * 0.1, c[2] + (to - c[2]) * 0.1];
    out = hexOf(c);
  }
  return out;
}

export function paletteOf(brandColor: string): Palette {
  const brand = hexOf(rgbOf(brandColor));
  const onBrand = contrast(brand, '#ffffff') >= contrast(brand, '#000000') ? '#ffffff' : '#000000';
  return {
    brand,
    onBrand,
    link: readableOn(rgbOf(brand), 0, LIGHT_SURFACES),
    linkDark: readableOn(rgbOf(brand), 255, DARK_SURFACES),
  };
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
    const css = `:root{--brand:${p.brand};--on-brand:${p.onBrand};--link:${p.link};--link-dark:${p.linkDark}}\n${base}`;
    s = { css, hash: createHash('sha256').update(css).digest('hex').slice(0, 16) };
    if (sheets.size > 1000) sheets.clear();
    sheets.set(brandColor, s);
  }
  return s;
}
