// The email module's pure functions: raw inbound mail → what the help desk stores and decides
// on, and the headers of outbound replies. No database, no I/O; the route, the inbound job
// and the outbound job wire them in.

export type { AuthResults, DmarcResult } from './auth.js';
export { authResults, formSender, isTrustedFormSender, parseAuthenticationResults } from './auth.js';
export type { AutoSubmittedReason, Bounce, BounceRecipient } from './classify.js';
export { autoSubmitted, bounceOf, isNoReplyAddress } from './classify.js';
export type { InboundMailErrorCode } from './errors.js';
export { InboundMailError, isInboundMailError } from './errors.js';
export type { MailHeaders } from './headers.js';
export { firstHeader, toMailHeaders } from './headers.js';
export { MAX_REFERENCES, messageIdsOf, normaliseMessageId } from './message-id.js';
export type { ReplyHeaders, ReplyHeadersInput } from './outbound-headers.js';
export {
  buildReplyHeaders,
  HeaderInjectionError,
  headerSafe,
  MAX_OUTBOUND_REFERENCES,
  newMessageId,
  replySubject,
  safeAddress,
  safeMailbox,
} from './outbound-headers.js';
export type { InboundAttachment, InboundMail, MailAddress, MailReport, ParseOptions } from './parse.js';
export { cidsReferenced, INBOUND_LIMITS, parseInbound, rewriteCids } from './parse.js';
export { isPublicEmailDomain } from './public-domains.js';
export type { TrimmedBody, TrimOptions } from './quotes.js';
export { trimQuoted, trimQuotedHtml, trimQuotedText } from './quotes.js';
export type { TicketTokenRef } from './threading.js';
export {
  MAX_THREAD_CANDIDATES,
  makeTicketToken,
  normaliseSubject,
  threadCandidates,
  ticketTokenOf,
  verifyTicketToken,
} from './threading.js';
