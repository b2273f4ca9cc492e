// Connecting to a mailbox's own servers: the settings with their defaults, the address guard
// (no loopback or private servers unless MAIL_ALLOW_PRIVATE), and the checks behind
// POST /v1/mailboxes/{id}/test. The IMAP poller and the outbound sender use the same settings.
//
// Error texts come from the servers and client libraries; they never carry the password (it is
// scrubbed from every message anyway, in case a server echoes it).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { splitSmtpUrl } from '../../platform/mail/index.js';
import { isLocalName, refusedAddress } from '../../platform/net/address.js';
import type { MailboxConfig } from './schemas.js';

type Config = Partial<Record<keyof typeof MailboxConfig.properties, unknown>>;
export type Tls = 'tls' | 'starttls' | 'none';

export interface ServerSettings {
  host: string;
  port: number;
  tls: Tls;
  username: string | null;
  password: string | null;
  /** Google / Microsoft: an OAuth access token, sent with XOAUTH2 instead of a password. */
  accessToken?: string | null;
}

/** IMAP: implicit TLS on 993 unless told otherwise; STARTTLS when the port is 143. */
export function imapSettings(email: string, config: Config, password: string | null): ServerSettings | null {
  const host = typeof config.imap_host === 'string' ? config.imap_host : null;
  if (!host) return null;
  const givenPort = typeof config.imap_port === 'number' ? config.imap_port : null;
  const tls = (config.imap_tls as Tls | undefined) ?? (givenPort === 143 ? 'starttls' : 'tls');
  const port = givenPort ?? (tls === 'tls' ? 993 : 143);
  const username = typeof config.imap_username === 'string' ? config.imap_username : email;
  return { host, port, tls, username, password };
}

/**
 * SMTP: implicit TLS on 465, STARTTLS otherwise (587 by default). The user name defaults to the
 * IMAP user name, then the address; the password to the IMAP password. No password: no AUTH.
 */
export function smtpSettings(
  email: string,
  config: Config,
  smtpPassword: string | null,
  password: string | null,
): ServerSettings | null {
  const host = typeof config.smtp_host === 'string' ? config.smtp_host : null;
  if (!host) return null;
  const givenPort = typeof config.smtp_port === 'number' ? config.smtp_port : null;
  const tls = (config.smtp_tls as Tls | undefined) ?? (givenPort === 465 ? 'tls' : 'starttls');
  const port = givenPort ?? (tls === 'tls' ? 465 : tls === 'starttls' ? 587 : 25);
  const pass = smtpPassword ?? password;
  const username =
    typeof config.smtp_username === 'string'
      ? config.smtp_username
      : typeof config.imap_username === 'string'
        ? config.imap_username
        : email;
  return { host, port, tls, username: pass ? username : null, password: pass };
}

const HOSTNAME_RE =
  /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)*\.?$/i;

/**
 * No top-level domain is a number. A name ending in one is an IPv4 address in another spelling
 * (`2130706433`, `127.1`, `0x7f.1`) that the system resolver turns into that address.
 */
const NUMERIC_LAST_LABEL = /(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i;

/** Why a configured host may not be used (checked when saved); null when it may. */
export function hostProblem(host: string, allowPrivate: boolean): string | null {
  const h = host.replace(/^\[|\]$/g, '');
  if (!isIP(h) && !HOSTNAME_RE.test(h)) return 'is not a host name or IP address';
  if (!isIP(h) && NUMERIC_LAST_LABEL.test(h)) {
    return 'is an IP address written another way: write it as four numbers with dots, or use a host name';
  }
  if (allowPrivate) return null;
  if (isLocalName(h))
    return `is ${h}, a local name (set MAIL_ALLOW_PRIVATE=true for servers on this machine or network)`;
  if (isIP(h)) {
    const why = refusedAddress(h);
    if (why) return `is a ${why} address (set MAIL_ALLOW_PRIVATE=true for servers on this machine or network)`;
  }
  return null;
}

export class RefusedHostError extends Error {}

/**
 * When a host is saved: a name that resolves now to an address the service may not reach is
 * refused like a literal one (why, or null). A name that does not resolve yet is accepted: the
 * mail server may not exist yet, and every connection checks its addresses again.
 */
export async function resolvedHostProblem(host: string, allowPrivate: boolean): Promise<string | null> {
  const h = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (allowPrivate || isIP(h) || hostProblem(h, allowPrivate) !== null) return null;
  const addresses = await Promise.race([
    lookup(h, { all: true, verbatim: true }).catch(() => []),
    new Promise<[]>((resolve) => setTimeout(() => resolve([]), 3000).unref()),
  ]);
  for (const a of addresses) {
    const why = refusedAddress(a.address);
    if (why)
      return `resolves to ${a.address}, a ${why} address (set MAIL_ALLOW_PRIVATE=true for servers on this machine or network)`;
  }
  return null;
}

/** The address to connect to: resolved now, every address checked (DNS rebinding included). */
export async function resolveHost(host: string, allowPrivate: boolean): Promise<string> {
  const h = host.replace(/^\[|\]$/g, '');
  const problem = hostProblem(h, allowPrivate);
  if (problem) throw new RefusedHostError(`${h} ${problem}`);
  const addresses = isIP(h) ? [{ address: h }] : await lookup(h, { all: true, verbatim: true });
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = refusedAddress(a.address);
      if (why) throw new RefusedHostError(`${h} resolves to ${a.address}, a ${why} address`);
    }
  }
  const first = addresses[0];
  if (!first) throw new RefusedHostError(`${h} has no address`);
  return first.address;
}

export interface CheckResult {
  ok: boolean;
  error: string | null;
}

const OK: CheckResult = { ok: true, error: null };
const TIMEOUT_MS = 20_000;

/** A failure as one line without any of the secrets. */
export function describeError(err: unknown, secrets: Array<string | null>): string {
  const e = err as { message?: unknown; code?: unknown; responseText?: unknown; response?: unknown };
  let text = typeof e?.message === 'string' && e.message ? e.message : String(err);
  const detail =
    typeof e?.responseText === 'string' ? e.responseText : typeof e?.response === 'string' ? e.response : null;
  if (detail && !text.includes(detail)) text += `: ${detail}`;
  for (const s of secrets) {
    if (!s) continue;
    for (const form of [s, Buffer.from(s).toString('base64'), encodeURIComponent(s)]) {
      text = text.split(form).join('***');
    }
  }
  text = text.replace(/[\r\n]+/g, ' ').trim();
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

async function bounded<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Connects, logs in when there is a password, and says goodbye (nodemailer's verify). */
export async function checkSmtp(s: ServerSettings, allowPrivate: boolean): Promise<CheckResult> {
  try {
    const address = await resolveHost(s.host, allowPrivate);
    const nodemailer = await import('nodemailer'); // loaded on first use, not at start
    const transport = nodemailer.createTransport({
      host: address,
      port: s.port,
      secure: s.tls === 'tls',
      requireTLS: s.tls === 'starttls',
      ignoreTLS: s.tls === 'none',
      ...(s.username && s.accessToken
        ? { auth: { type: 'OAuth2' as const, user: s.username, accessToken: s.accessToken } }
        : s.username && s.password
          ? { auth: { user: s.username, pass: s.password } }
          : {}),
      tls: { servername: isIP(s.host) ? undefined : s.host },
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 15_000,
      logger: false,
      debug: false,
    });
    try {
      await bounded(transport.verify(), 'SMTP');
    } finally {
      transport.close();
    }
    return OK;
  } catch (err) {
    return { ok: false, error: describeError(err, [s.password, s.accessToken ?? null]) };
  }
}

/** The system mailer (SMTP_URL); without one, mail is kept in the outbox, which is not a working outbound. */
export async function checkSystemMailer(smtpUrl: string | null): Promise<CheckResult> {
  if (!smtpUrl)
    return {
      ok: false,
      error: 'SMTP_URL is not set: the system mailer keeps mail in the outbox instead of sending it',
    };
  const { url } = splitSmtpUrl(smtpUrl);
  const password = (() => {
    try {
      return decodeURIComponent(new URL(url).password) || null;
    } catch {
      return null;
    }
  })();
  const nodemailer = await import('nodemailer');
  const transport = nodemailer.createTransport({
    url,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 15_000,
    logger: false,
  });
  try {
    await bounded(transport.verify(), 'SMTP');
    return OK;
  } catch (err) {
    return { ok: false, error: describeError(err, [password]) };
  } finally {
    transport.close();
  }
}

/** Connects, logs in and logs out. */
export async function checkImap(s: ServerSettings, allowPrivate: boolean): Promise<CheckResult> {
  try {
    const address = await resolveHost(s.host, allowPrivate);
    if (!s.password && !s.accessToken) return { ok: false, error: 'no password is stored for this mailbox' };
    const imapflow = await import('imapflow'); // loaded on first use, not at start
    const client = new imapflow.ImapFlow({
      host: address,
      port: s.port,
      secure: s.tls === 'tls',
      doSTARTTLS: s.tls === 'starttls' ? true : s.tls === 'none' ? false : undefined,
      ...(isIP(s.host) ? {} : { servername: s.host }),
      auth: s.accessToken
        ? { user: s.username ?? '', accessToken: s.accessToken }
        : { user: s.username ?? '', pass: s.password ?? '' },
      logger: false,
      disableAutoIdle: true,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 15_000,
    });
    // A socket error after connect() settled would otherwise be an unhandled 'error' event.
    client.on('error', () => {});
    try {
      await bounded(client.connect(), 'IMAP');
      await bounded(client.logout(), 'IMAP');
    } finally {
      client.close();
    }
    return OK;
  } catch (err) {
    return { ok: false, error: describeError(err, [s.password, s.accessToken ?? null]) };
  }
}
