// Small parts of the portal's pages: the contact form's human check (widget and CSP), its
// minimum fill time, the email check, whether a post came from another site, and how statuses
// and dates read to customers.
import { createHmac, hkdfSync } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { constantTimeEqual } from '../../platform/crypto/random.js';
import { pageCsp } from '../../platform/http/pages.js';

const PROVIDERS = {
  turnstile: {
    className: 'cf-turnstile',
    script: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    origins: 'https://challenges.cloudflare.com',
  },
  hcaptcha: {
    className: 'h-captcha',
    script: 'https://js.hcaptcha.com/1/api.js',
    origins: 'https://hcaptcha.com https://*.hcaptcha.com',
  },
} as const;

/**
 * The contact form's widget and CSP. With CHALLENGE set (as sign-in uses it), the page loads the
 * provider's script and frame, and nothing else of theirs; without it, the help center's CSP.
 */
export function formCsp(config: Config): {
  csp: string;
  widget: { className: string; script: string; siteKey: string } | null;
} {
  const base = pageCsp(config.publicUrl);
  const kind = config.challenge.kind;
  if (kind === 'none') return { csp: base, widget: null };
  const p = PROVIDERS[kind];
  const csp = base
    .replace("script-src 'none'", `script-src ${p.origins}`)
    .replace("style-src-elem 'self'", `style-src-elem 'self' ${p.origins}`)
    .concat(`; frame-src ${p.origins}; connect-src ${p.origins}`);
  return { csp, widget: { className: p.className, script: p.script, siteKey: config.challenge.siteKey ?? '' } };
}

/** A form sent sooner than this after it was shown is asked to be sent again (a person takes longer). */
export const MIN_FILL_MS = 2000;
const STAMP_TTL_MS = 24 * 3600 * 1000;
const keys = new WeakMap<Config, Buffer>();

const stampMac = (config: Config, workspaceId: string, at: string): string => {
  let k = keys.get(config);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', config.secretKey, 'svc-portal-form', 'portal form stamp key v1', 32));
    keys.set(config, k);
  }
  return createHmac('sha256', k).update(`${workspaceId}\n${at}`).digest('base64url').slice(0, 22);
};

/** The form's hidden `started` value: when it was shown, signed. */
export function formStamp(config: Config, workspaceId: string, now = Date.now()): string {
  const at = String(now);
  return `${at}.${stampMac(config, workspaceId, at)}`;
}

/** Whether a form's `started` is ours and between MIN_FILL_MS and a day old. */
export function stampFresh(config: Config, workspaceId: string, stamp: string | undefined, now = Date.now()): boolean {
  const m = /^(\d{13})\.([A-Za-z0-9_-]{22})$/.exec(stamp ?? '');
  if (!m || !constantTimeEqual(m[2]!, stampMac(config, workspaceId, m[1]!))) return false;
  const age = now - Number(m[1]);
  return age >= MIN_FILL_MS && age <= STAMP_TTL_MS;
}

/** An address a mail can be sent to: one @, a dot in the domain, no spaces or brackets. */
export const isEmail = (v: string): boolean =>
  v.length <= 254 && /^[^\s@<>()[\]\\,;:"]{1,64}@[^\s@<>()[\]\\,;:"_]+\.[^\s@<>()[\]\\,;:"_]{2,}$/.test(v);

/**
 * Whether a form post was sent by a page of another site (docs/decisions.md "Portal sign-in from
 * another site"). Browsers say where a request comes from: `Sec-Fetch-Site` (same-origin and none,
 * a person's own navigation, are ours; same-site and cross-site are not), else `Origin`, which
 * must name this service (PUBLIC_URL's origin, or the host the request was sent to; `null`, an
 * opaque origin, is not ours). A post carrying neither header is taken as ours: every browser
 * that can be driven by a foreign page sends at least Origin on a cross-site POST, and clients
 * that send neither (command-line tools, very old browsers) act for their own user.
 */
export function fromAnotherSite(req: FastifyRequest, publicUrl: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return true; // `null` and anything else that is not an origin
  }
  if (from.origin === new URL(publicUrl).origin) return false;
  return from.host !== req.headers.host;
}

/** A status as customers read it: on_hold is the team's business, not theirs. */
export function statusText(status: string): string {
  switch (status) {
    case 'pending':
      return 'Awaiting your reply';
    case 'solved':
      return 'Solved';
    case 'closed':
      return 'Closed';
    default:
      return 'Open';
  }
}

const WHEN = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
export const when = (d: Date): string => `${WHEN.format(d)} UTC`;
