// The key of ticket tokens (threading.ts: "[#1234-k3m9x2q7ab]" in subjects, "+t1234-…" in
// addresses): derived from SECRET_KEY with HKDF, so it needs no setting of its own and is
// never the raw secret. Outbound mail writes tokens with ticketTokenFor; the inbound job
// verifies them with the same key. Rotating SECRET_KEY voids the tokens of mail already sent
// (replies then thread by Message-ID only).
import { hkdfSync } from 'node:crypto';
import type { Config } from '../../config.js';
import { makeTicketToken, verifyTicketToken } from './threading.js';

const keys = new WeakMap<Config, Buffer>();

/** The HMAC key of ticket tokens for a configuration (one HKDF per process). */
export function ticketTokenKey(config: Config): Buffer {
  let k = keys.get(config);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', config.secretKey, 'svc-ticket-token', 'ticket token key v1', 32));
    keys.set(config, k);
  }
  return k;
}

/** The token of ticket `number` of a workspace ("1234-k3m9x2q7ab"). */
export const ticketTokenFor = (config: Config, workspaceId: string, number: number): string =>
  makeTicketToken(ticketTokenKey(config), workspaceId, number);

/** The ticket number a token names when it is right for this workspace, else null. */
export const verifyTicketTokenFor = (config: Config, workspaceId: string, token: string): number | null =>
  verifyTicketToken(ticketTokenKey(config), workspaceId, token);
