// Inline images of inbound mail: the stored HTML names each one by its stable address
// `${PUBLIC_URL}/v1/attachments/<id>` (inlineSrc), never by a download URL, whose token
// expires after an hour. Whenever a message is presented, withFreshInlineUrls puts the
// attachment's current url (with a fresh token) in its place, so an <img> keeps working
// in every later read.
import type { AttachmentView } from './service.js';

/** The stable address an inline image is stored under (the url without its token). */
export const inlineSrc = (publicUrl: string, attachmentId: string): string =>
  `${publicUrl}/v1/attachments/${attachmentId}`;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `html` with every src="<stable address>" of these attachments replaced by the attachment's url. */
export function withFreshInlineUrls(html: string, attachments: readonly AttachmentView[]): string {
  if (attachments.length === 0 || !html.includes('/v1/attachments/')) return html;
  let out = html;
  for (const a of attachments) {
    const stable = a.url.split('?')[0]!;
    if (!out.includes(stable)) continue;
    out = out.replace(new RegExp(`(\\ssrc=")${escapeRe(stable)}"`, 'g'), (_m, p: string) => `${p}${a.url}"`);
  }
  return out;
}
