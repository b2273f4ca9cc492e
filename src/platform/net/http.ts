// An HTTP client for URLs that users give us (webhook endpoints: safePost; pictures: safeGet),
// safe against server-side request forgery:
//
// - https only, unless private addresses are allowed (WEBHOOK_ALLOW_PRIVATE, self-hosting and
//   tests), which also allows plain http;
// - the host is resolved by the connection itself, through a `lookup` hook that checks every
//   address the name resolves to and refuses the connection if any of them is not public. The
//   address that was checked is the address the socket connects to, so a name that answers
//   with a public address to a first query and a private one to the next (DNS rebinding) cannot
//   get through. Literal IP hosts never reach `lookup` and are checked before connecting;
// - safePost follows no redirect (a 3xx is just a status); safeGet follows a few, each new
//   location checked as the first URL was, and its connection through the same lookup hook;
// - one deadline covers connecting, TLS, sending and the response head; the response body is
//   read up to a small bound and thrown away.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isLocalName, refusedAddress } from './address.js';

/** dns.lookup's shape with `all: true`: every address of a name. */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true } satisfies LookupAllOptions, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    );
  });

export class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

export interface SafeRequestOptions {
  /** Lift the address checks and allow plain http (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** The whole exchange up to the response head, in milliseconds. */
  timeoutMs: number;
  /** How much of the response body is read (then discarded); default 64 KiB. */
  maxResponseBytes?: number;
  /** Name resolution; the system resolver unless a test injects one. */
  resolve?: Resolve;
}

export interface SafeResponse {
  /** The response status; null when there was none (refused, timeout, connection error). */
  status: number | null;
  /** Milliseconds from the start to the response head (or to the failure). */
  durationMs: number;
  /** Why there is no status, in a sentence; null when there is one. */
  error: string | null;
  /** No response head within the timeout. */
  timedOut: boolean;
}

/** Why a URL may not be used at all (scheme, credentials, a local name or address); null when it may. */
export function urlProblem(raw: string, allowPrivate: boolean): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (u.protocol !== 'https:' && !(allowPrivate && u.protocol === 'http:')) {
    return allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
  }
  if (u.username || u.password) return 'must not carry credentials (user:password@)';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) return 'has no host';
  if (allowPrivate) return null;
  if (isLocalName(host)) return `points at ${host}, a local name`;
  if (isIP(host)) {
    const why = refusedAddress(host);
    if (why) return `points at ${host}, a ${why} address`;
  }
  return null;
}

/**
 * Resolves the URL's host now and checks every address (the create-time check). A name that
 * does not resolve (yet) passes: the connection checks again, and that check is the one that
 * counts. Resolution is bounded by `timeoutMs`.
 */
export async function resolvedProblem(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
  timeoutMs = 3000,
): Promise<string | null> {
  const first = urlProblem(raw, allowPrivate);
  if (first || allowPrivate) return first;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return null;
  let timer: NodeJS.Timeout | undefined;
  try {
    const addresses = await Promise.race([
      resolve(host),
      new Promise<null>((r) => {
        timer = setTimeout(() => r(null), timeoutMs);
      }),
    ]);
    for (const a of addresses ?? []) {
      const why = refusedAddress(a.address);
      if (why) return `resolves to ${a.address}, a ${why} address`;
    }
    return null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A `lookup` for net.connect through `resolve`; with `guard`, names resolving to any address that
 * is not public are refused.
 */
function lookupThrough(resolve: Resolve, guard: boolean, refuse = refusedAddress): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = typeof options === 'object' ? options.family : undefined;
        const wanted = addresses.filter((a) => !family || family === 0 || a.family === family);
        for (const a of guard ? addresses : []) {
          const why = refuse(a.address);
          if (why) {
            callback(new RefusedAddressError(`${hostname} resolves to ${a.address}, a ${why} address`), '', 4);
            return;
          }
        }
        if (wanted.length === 0) {
          const err = Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
          callback(err, '', 4);
          return;
        }
        if (typeof options === 'object' && options.all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}

/**
 * Keep-alive agents, one per (scheme, resolver, allowPrivate): connections are reused between
 * deliveries to the same endpoint; a reused socket was checked when it connected.
 */
const agents = new Map<string, http.Agent>();
const resolverIds = new WeakMap<Resolve, number>();
let nextResolverId = 0;

function agentFor(protocol: string, resolve: Resolve, allowPrivate: boolean): http.Agent {
  let rid = resolverIds.get(resolve);
  if (rid === undefined) {
    rid = ++nextResolverId;
    resolverIds.set(resolve, rid);
  }
  const key = `${protocol}|${rid}|${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options: https.AgentOptions = {
      keepAlive: true,
      maxSockets: 64,
      maxFreeSockets: 16,
      // Idle sockets close after 4 s, before the usual 5 s of servers' keep-alive timeouts.
      timeout: 4000,
      ...(allowPrivate && resolve === systemResolve ? {} : { lookup: lookupThrough(resolve, !allowPrivate) }),
    };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes idle kept-alive connections (tests, shutdown). */
export function closeIdleConnections(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

const describe = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException;
  if (e instanceof RefusedAddressError) return `refused: ${e.message}`;
  const code = typeof e?.code === 'string' ? e.code : null;
  const msg = e instanceof Error ? e.message : String(err);
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
};

/** POSTs `body` to a user-given URL under the rules above. Never throws. */
export async function safePost(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: SafeRequestOptions,
): Promise<SafeResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const problem = urlProblem(url, opts.allowPrivate);
  if (problem) return { status: null, durationMs: 0, error: `refused: the URL ${problem}`, timedOut: false };
  const u = new URL(url);
  const resolve = opts.resolve ?? systemResolve;
  const agent = agentFor(u.protocol, resolve, opts.allowPrivate);
  const max = opts.maxResponseBytes ?? 64 * 1024;
  const payload = Buffer.from(body, 'utf8');

  return new Promise((done) => {
    let settled = false;
    const finish = (r: SafeResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      done(r);
    };
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(payload.length) },
      },
      (res) => {
        finish({ status: res.statusCode ?? null, durationMs: elapsed(), error: null, timedOut: false });
        // Read a little of the body (so the connection can be reused) and discard it.
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > max) res.destroy();
        });
        res.on('error', () => {});
        const drain = setTimeout(() => res.destroy(), opts.timeoutMs);
        drain.unref();
        res.on('close', () => clearTimeout(drain));
      },
    );
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      req.destroy(Object.assign(new Error(`timed out after ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }, opts.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      // No second try here, even on a kept-alive socket the server had just closed: the
      // request may have reached it, and an attempt sends once. The schedule retries.
      finish({ status: null, durationMs: elapsed(), error: describe(err), timedOut });
    });
    req.end(payload);
  });
}

export interface SafeGetOptions extends SafeRequestOptions {
  /** The response body is read up to this many bytes; past it the answer is `tooLarge`. */
  maxBytes: number;
  /** Redirects followed (each hop checked like the first); default 3. */
  maxRedirects?: number;
  headers?: Record<string, string>;
  /**
   * Tests only: which addresses are refused (refusedAddress by default). Given, the checks apply
   * even with `allowPrivate` (which then only allows plain http), so that a test on loopback can
   * show a redirect or a name being refused.
   */
  refuse?: (address: string) => string | null;
}

export interface SafeGetResult {
  /** The final response's status; null when there was none. */
  status: number | null;
  /** The body of a 2xx answer, when it fit in maxBytes. */
  body: Buffer | null;
  /** The body went past maxBytes (reading stopped there). */
  tooLarge: boolean;
  /** Why there is no body, in a sentence; null when there is one. */
  error: string | null;
  /** The URL the body came from (after redirects). */
  url: string;
}

/**
 * GETs a user-given URL (a picture) under the rules above, following up to `maxRedirects`
 * redirects, each one checked as the first was (scheme, literal address, and the addresses its
 * name resolves to at connect time). One deadline covers every hop and the body. No keep-alive:
 * these are rare. Never throws.
 */
export async function safeGet(url: string, opts: SafeGetOptions): Promise<SafeGetResult> {
  const guard = !opts.allowPrivate || opts.refuse !== undefined;
  const refuse = opts.refuse ?? refusedAddress;
  const resolve = opts.resolve ?? systemResolve;
  const deadline = Date.now() + opts.timeoutMs;
  const fail = (at: string, error: string, status: number | null = null): SafeGetResult => ({
    status,
    body: null,
    tooLarge: false,
    error,
    url: at,
  });
  let current = url;
  for (let hop = 0; hop <= (opts.maxRedirects ?? 3); hop++) {
    const problem = urlProblem(current, opts.allowPrivate);
    if (problem) return fail(current, `refused: the URL ${problem}`);
    const u = new URL(current);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (guard && isLocalName(host)) return fail(current, `refused: ${host} is a local name`);
    if (guard && isIP(host)) {
      const why = refuse(host);
      if (why) return fail(current, `refused: ${host} is a ${why} address`);
    }
    const left = deadline - Date.now();
    if (left <= 0) return fail(current, `timed out after ${opts.timeoutMs} ms`);
    const r = await getOnce(u, opts, left, lookupThrough(resolve, guard, refuse));
    if (r.location === null) return { ...r.result, url: current };
    let next: string;
    try {
      next = new URL(r.location, current).toString();
    } catch {
      return fail(current, 'the redirect is not a valid URL', r.result.status);
    }
    current = next;
  }
  return fail(current, 'too many redirects');
}

function getOnce(
  u: URL,
  opts: SafeGetOptions,
  timeoutMs: number,
  lookup: LookupFunction,
): Promise<{ result: Omit<SafeGetResult, 'url'>; location: string | null }> {
  return new Promise((done) => {
    let settled = false;
    const finish = (result: Omit<SafeGetResult, 'url'>, location: string | null = null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done({ result, location });
    };
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      { method: 'GET', agent: false, lookup, headers: { accept: 'image/*', ...opts.headers } },
      (res) => {
        const status = res.statusCode ?? null;
        if (status !== null && status >= 300 && status < 400 && res.headers.location) {
          res.destroy();
          finish({ status, body: null, tooLarge: false, error: null }, res.headers.location);
          return;
        }
        if (status === null || status < 200 || status >= 300) {
          res.destroy();
          finish({ status, body: null, tooLarge: false, error: `answered ${status}` });
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > opts.maxBytes) {
          res.destroy();
          finish({ status, body: null, tooLarge: true, error: `larger than ${opts.maxBytes} bytes` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            res.destroy();
            finish({ status, body: null, tooLarge: true, error: `larger than ${opts.maxBytes} bytes` });
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => finish({ status, body: Buffer.concat(chunks), tooLarge: false, error: null }));
        res.on('error', (err) => finish({ status, body: null, tooLarge: false, error: describe(err) }));
        res.on('close', () => finish({ status, body: null, tooLarge: false, error: 'the answer was cut short' }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: null, body: null, tooLarge: false, error: `timed out after ${opts.timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (err) => finish({ status: null, body: null, tooLarge: false, error: describe(err) }));
    req.end();
  });
}
