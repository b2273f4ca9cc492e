// A person's or a company's picture (avatar_url, served from /v1/images/... on this origin), with
// their initials on a colour picked from the name when there is none or it fails to load. Sizes
// 24, 32, 64 and 96 px. Decorative by default (the name is next to it); `label` names it otherwise.
import { useState } from 'react';
import { servicePath } from '../lib/address';
import './avatar.css';

export type AvatarSize = 24 | 32 | 64 | 96;

export function initials(name: string | null | undefined): string {
  const words = (name ?? '')
    .replace(/[<>@].*$/, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0) return '?';
  const first = [...words[0]!][0] ?? '';
  const last = words.length > 1 ? ([...words[words.length - 1]!][0] ?? '') : '';
  return (first + last).toUpperCase();
}

const HUES = 8;
function hueOf(name: string): number {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % HUES;
}

/** The picture's address at the size shown (the image route's ?s=), on this origin only. */
function sized(url: string, size: AvatarSize): string | null {
  try {
    // The app's CSP loads images from its own origin only: another one would show as broken.
    const path = servicePath(url);
    if (path === null) return null;
    const u = new URL(path, location.origin);
    // The image route keeps two sizes: 64 px (enough for 24 and 32 on a dense screen) and 256.
    if (u.pathname.startsWith('/v1/images/')) {
      if (size < 64) u.searchParams.set('s', '64');
      else u.searchParams.delete('s');
    }
    return u.pathname + u.search;
  } catch {
    return null;
  }
}

export function Avatar({
  url,
  name,
  size = 32,
  label,
  square = false,
}: {
  url?: string | null;
  name: string | null | undefined;
  size?: AvatarSize;
  /** An accessible name when the avatar stands alone (no name next to it). */
  label?: string;
  /** Companies are square. */
  square?: boolean;
}) {
  const [failed, setFailed] = useState<string | null>(null);
  const src = url ? sized(url, size) : null;
  const shape = `avatar avatar-${size}${square ? ' avatar-square' : ''}`;
  const a11y = label ? { role: 'img', 'aria-label': label } : { 'aria-hidden': true as const };
  if (src && failed !== src) {
    return (
      <span className={shape} {...a11y}>
        <img src={src} alt="" width={size} height={size} loading="lazy" onError={() => setFailed(src)} />
      </span>
    );
  }
  return (
    <span className={`${shape} avatar-initials avatar-hue-${hueOf(name ?? '')}`} {...a11y}>
      {initials(name)}
    </span>
  );
}
