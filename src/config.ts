// Every setting of the service, read and validated in one place (the README's Configuration).
// A bad value stops the start with one line naming the variable; secrets that are not
// given are generated once and kept in DATA_DIR so restarts keep sessions and keys valid.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** What a process of `npm start` does (ROLE; docs/operations.md "Several processes"). */
export type Role = 'all' | 'api' | 'gateway' | 'worker';
export const ROLES: readonly Role[] = ['all', 'api', 'gateway', 'worker'];

export interface Config {
  /**
   * ROLE: `all` (default: HTTP, sockets and jobs in one process), `api` (HTTP routes only),
   * `gateway` (the realtime sockets only), `worker` (the jobs, schedules and pollers only, with
   * /healthz and /readyz on PORT). Every role but `all` needs DATABASE_URL and NATS_URL.
   */
  role: Role;
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | null;
  dataDir: string;
  natsUrl: string | null;
  redisUrl: string | null;
  secretKey: string;
  inboundSecret: string;
  /** Generated secrets (printed once at start so the operator can copy them). */
  generated: { secretKey: boolean; inboundSecret: boolean };
  eventRetentionMs: number;
  /** Behind a reverse proxy: the client's address from X-Forwarded-For. */
  trustProxy: boolean;
  /**
   * Row-level security between workspaces (platform/db/scope.ts), on unless ROW_LEVEL_SECURITY=false:
   * off only to measure its cost (bench/rls.ts) or to rule it out while troubleshooting.
   */
  rowLevelSecurity: boolean;
  /** How long an Idempotency-Key claimed by a request holds before a retry may take it over. */
  idempotencyLeaseMs: number;
  /**
   * Origins that may open an agent socket (CHECK_ORIGINS): PUBLIC_URL when it is set, else the
   * loopback spellings of the service's own address (loopbackOrigins).
   */
  checkOrigins: string[];
  webhookAllowPrivate: boolean;
  challenge: {
    kind: 'none' | 'turnstile' | 'hcaptcha';
    secret: string | null;
    /** CHALLENGE_VERIFY_URL: the provider's siteverify endpoint (a stand-in server in tests). */
    verifyUrl: string | null;
    /** CHALLENGE_SITE_KEY: the public key the help center's forms show the widget with. */
    siteKey: string | null;
  };
  /** Sign-in protection: failed attempts allowed per window. */
  signin: { maxFailuresPerAccount: number; maxFailuresPerIp: number; windowMs: number };
  /** Apple App Attest for the native app: `<team id>.<bundle id>`; null = off. */
  appAttest: { appId: string | null; allowDevelopment: boolean };
  ai: {
    provider: 'openai' | 'anthropic' | null;
    baseUrl: string | null;
    apiKey: string | null;
    model: string | null;
    fastModel: string | null;
    /**
     * AI_EMBEDDINGS: what embeds for semantic search: `embedded` (default: the model in the
     * package, no provider call), `provider` (the OpenAI-compatible provider's /embeddings with
     * AI_EMBEDDING_MODEL, default text-embedding-3-small) or `off`.
     */
    embeddings: 'embedded' | 'provider' | 'off';
    embeddingModel: string | null;
  };
  /**
   * The hosted offering's payments (docs/billing.md "Connecting Stripe"): billing is on exactly
   * when secretKey is set; apiBase is a stand-in's origin in tests; prices are Stripe Price ids
   * (STRIPE_PRICE_PRO_MONTH, STRIPE_PRICE_PRO_YEAR, STRIPE_PRICE_AI_TOP_UP; null: not offered).
   */
  stripe: {
    secretKey: string | null;
    webhookSecret: string | null;
    apiBase: string | null;
    prices: { proMonth: string | null; proYear: string | null; aiTopUp: string | null };
  };
  smtpUrl: string | null;
  /** INBOUND_DOMAIN: the domain of mailboxes' forwarding addresses (its MX reaches POST /v1/inbound/email). */
  inboundDomain: string;
  /** MAIL_ALLOW_PRIVATE: mailboxes may connect to loopback and private IMAP/SMTP servers (self-hosting, tests). */
  mailAllowPrivate: boolean;
  /** APP_URL: the web app, where the browser returns after connecting a mailbox (default PUBLIC_URL). */
  appUrl: string;
  /** APP_SCHEME: the native app's URL scheme (OAuth sign-in returns to `{scheme}://auth/callback`). */
  appScheme: string;
  /** Google and Microsoft mailboxes (OAuth); null when the provider's client id is not set. */
  oauth: { google: OAuthProviderConfig | null; microsoft: OAuthProviderConfig | null };
  /** IMAP_POLL_INTERVAL: how often IMAP mailboxes without IDLE are checked for new mail. */
  imapPollIntervalMs: number;
  /**
   * INBOUND_AUTHSERV_IDS: the authserv-ids (RFC 8601) of the receiving servers whose
   * Authentication-Results headers inbound mail trusts (auth_failed, trusted_form_senders);
   * lower-cased. Empty: no header is trusted (no mail is auth_failed, no form sender is trusted).
   */
  inboundAuthservIds: string[];
  rateLimitPerMinute: number;
  /** WIDGET_SESSIONS_PER_IP: new chat widget visitors (sessions without visitor_token) per address and workspace in 10 minutes. */
  widgetSessionsPerIp: number;
  /**
   * Ticket q: when PostgreSQL expects more matching messages than this in the workspace, the
   * list walks tickets in order and checks each instead of collecting every match first.
   */
  searchWalkAbove: number;
  attachmentMaxMb: number;
  /** S3-compatible storage for attachments (S3_BUCKET turns it on); null = local disk under DATA_DIR. */
  s3: S3Config | null;
  logLevel: string;
  /** PGlite only: keep the database in memory instead of DATA_DIR (tests). */
  memoryDatabase: boolean;
}

/** A mail server of an OAuth provider (`imaps://host:port`, `imap://host:port` with STARTTLS, `?tls=none`). */
export interface MailEndpoint {
  host: string;
  port: number;
  tls: 'tls' | 'starttls' | 'none';
}

export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Google: the OpenID userinfo endpoint (the account's address). */
  userinfoUrl: string | null;
  /** Microsoft: the keys that sign id_tokens (the account's address is in the id_token). */
  jwksUrl: string | null;
  scopes: string[];
  /** Sign-in (src/modules/auth/oauth): the ID token's issuer (`{tenantid}` = its tid claim) and keys. */
  idIssuer: string;
  idJwksUrl: string;
  imap: MailEndpoint;
  smtp: MailEndpoint;
}

export interface S3Config {
  bucket: string;
  /** S3_ENDPOINT: an S3-compatible server; null = AWS S3 for the region. */
  endpoint: string | null;
  region: string;
  /** Both or neither; neither = the AWS SDK's default credential chain (AWS_* variables, instance role). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  forcePathStyle: boolean;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function int(env: Env, name: string, dflt: number, min: number, max: number): number {
  const v = str(env, name);
  if (v === null) return dflt;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `must be a whole number, got "${v}"`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A comma-separated list of host names (authserv-ids), lower-cased, without repeats. */
function hostList(env: Env, name: string): string[] {
  const v = str(env, name);
  if (v === null) return [];
  const out: string[] = [];
  for (const part of v.split(',')) {
    const h = part.trim().toLowerCase();
    if (h === '') continue;
    if (!/^[a-z0-9](?:[a-z0-9._-]{0,251}[a-z0-9])?$/.test(h)) {
      throw new ConfigError(
        name,
        `must be a comma-separated list of host names such as mx.example.com, got "${h.slice(0, 100)}"`,
      );
    }
    if (!out.includes(h)) out.push(h);
  }
  return out;
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const v = str(env, name);
  if (v === null) return dflt;
  if (/^(true|1|yes)$/i.test(v)) return true;
  if (/^(false|0|no)$/i.test(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${v}"`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const v = str(env, name);
  if (v === null) return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(name, `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}`);
  }
  return v;
}

/** Parses durations such as `7d`, `36h`, `90m`, `45s`. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return n > 0 ? n * unit : null;
}

/** A secret from the environment, or one generated once and stored under DATA_DIR. */
function secret(
  env: Env,
  name: string,
  dataDir: string,
  file: string,
  minBytes: number,
): { value: string; generated: boolean } {
  const v = str(env, name);
  if (v !== null) {
    if (Buffer.byteLength(v) < minBytes) throw new ConfigError(name, `must be at least ${minBytes} bytes long`);
    return { value: v, generated: false };
  }
  const dir = join(dataDir, 'secrets');
  const path = join(dir, file);
  if (existsSync(path)) {
    const stored = readFileSync(path, 'utf8').trim();
    if (Buffer.byteLength(stored) >= minBytes) return { value: stored, generated: false };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const value = randomBytes(32).toString('base64url');
  writeFileSync(path, value + '\n', { mode: 0o600 });
  return { value, generated: true };
}

const HOSTNAME_RE =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * INBOUND_DOMAIN, or the host of PUBLIC_URL (`help.example.com` gives
 * `support-k3j9x2m4qa@help.example.com`); `localhost` when PUBLIC_URL names an IP address.
 */
function inboundDomain(env: Env, publicUrl: string): string {
  const v = str(env, 'INBOUND_DOMAIN');
  if (v !== null) {
    const d = v.toLowerCase().replace(/\.$/, '');
    if (!HOSTNAME_RE.test(d)) throw new ConfigError('INBOUND_DOMAIN', `must be a domain name such as in.example.com`);
    return d;
  }
  const host = new URL(publicUrl).hostname.toLowerCase();
  return HOSTNAME_RE.test(host) && !/^[\d.]+$/.test(host) ? host : 'localhost';
}

function mailEndpoint(env: Env, name: string, dflt: string, kind: 'imap' | 'smtp'): MailEndpoint {
  const text = str(env, name) ?? dflt;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  const secure = `${kind}s:`;
  if (u.protocol !== `${kind}:` && u.protocol !== secure) {
    throw new ConfigError(name, `must look like ${kind}s://host:port (TLS) or ${kind}://host:port (STARTTLS)`);
  }
  const plain = u.searchParams.get('tls') === 'none';
  const tls = u.protocol === secure ? 'tls' : plain ? 'none' : 'starttls';
  const port = u.port ? Number(u.port) : kind === 'imap' ? (tls === 'tls' ? 993 : 143) : tls === 'tls' ? 465 : 587;
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port, tls };
}

/**
 * GOOGLE_* / MICROSOFT_*: the OAuth client of each provider (both id and secret, or neither),
 * and its endpoints, overridable (a stand-in server in tests, a sovereign cloud).
 */
function oauthConfig(env: Env): Config['oauth'] {
  const client = (p: 'GOOGLE' | 'MICROSOFT') => {
    const id = str(env, `${p}_CLIENT_ID`);
    const secret = str(env, `${p}_CLIENT_SECRET`);
    if (id !== null && secret === null)
      throw new ConfigError(`${p}_CLIENT_SECRET`, `is required when ${p}_CLIENT_ID is set`);
    if (secret !== null && id === null)
      throw new ConfigError(`${p}_CLIENT_ID`, `is required when ${p}_CLIENT_SECRET is set`);
    return id === null || secret === null ? null : { clientId: id, clientSecret: secret };
  };
  const web = (name: string, dflt: string) => url(env, name, ['http:', 'https:']) ?? dflt;
  const g = client('GOOGLE');
  const m = client('MICROSOFT');
  const tenant = str(env, 'MICROSOFT_TENANT') ?? 'common';
  if (!/^[A-Za-z0-9.-]{1,100}$/.test(tenant)) {
    throw new ConfigError('MICROSOFT_TENANT', 'must be common, organizations, consumers, a tenant id or a domain');
  }
  const ms = `https://login.microsoftonline.com/${tenant}`;
  return {
    google: g && {
      ...g,
      authorizeUrl: web('GOOGLE_AUTH_URL', 'https://accounts.google.com/o/oauth2/v2/auth'),
      tokenUrl: web('GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
      userinfoUrl: web('GOOGLE_USERINFO_URL', 'https://openidconnect.googleapis.com/v1/userinfo'),
      jwksUrl: null,
      scopes: ['openid', 'email', 'https://mail.google.com/'],
      idIssuer: web('GOOGLE_ISSUER', 'https://accounts.google.com'),
      idJwksUrl: web('GOOGLE_JWKS_URL', 'https://www.googleapis.com/oauth2/v3/certs'),
      imap: mailEndpoint(env, 'GOOGLE_IMAP_URL', 'imaps://imap.gmail.com:993', 'imap'),
      smtp: mailEndpoint(env, 'GOOGLE_SMTP_URL', 'smtps://smtp.gmail.com:465', 'smtp'),
    },
    microsoft: m && {
      ...m,
      authorizeUrl: web('MICROSOFT_AUTH_URL', `${ms}/oauth2/v2.0/authorize`),
      tokenUrl: web('MICROSOFT_TOKEN_URL', `${ms}/oauth2/v2.0/token`),
      userinfoUrl: null,
      jwksUrl: web('MICROSOFT_JWKS_URL', `${ms}/discovery/v2.0/keys`),
      idIssuer: str(env, 'MICROSOFT_ISSUER') ?? 'https://login.microsoftonline.com/{tenantid}/v2.0',
      idJwksUrl: web('MICROSOFT_JWKS_URL', `${ms}/discovery/v2.0/keys`),
      scopes: [
        'openid',
        'email',
        'profile',
        'offline_access',
        'https://outlook.office.com/IMAP.AccessAsUser.All',
        'https://outlook.office.com/SMTP.Send',
      ],
      imap: mailEndpoint(env, 'MICROSOFT_IMAP_URL', 'imaps://outlook.office365.com:993', 'imap'),
      smtp: mailEndpoint(env, 'MICROSOFT_SMTP_URL', 'smtp://smtp.office365.com:587', 'smtp'),
    },
  };
}

/** S3_* settings: S3_BUCKET turns S3 storage on; the others are refused without it. */
function s3Config(env: Env): S3Config | null {
  const bucket = str(env, 'S3_BUCKET');
  const others = ['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'];
  if (bucket === null) {
    const stray = others.find((name) => str(env, name) !== null);
    if (stray) throw new ConfigError('S3_BUCKET', `is required when ${stray} is set`);
    return null;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..')) {
    throw new ConfigError('S3_BUCKET', `must be a bucket name (3 to 63 lowercase letters, digits, dots, hyphens)`);
  }
  const region = str(env, 'S3_REGION') ?? 'us-east-1';
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(region)) {
    throw new ConfigError('S3_REGION', `must be a region name such as eu-west-1, got "${region.slice(0, 64)}"`);
  }
  const accessKeyId = str(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = str(env, 'S3_SECRET_ACCESS_KEY');
  if (accessKeyId !== null && secretAccessKey === null) {
    throw new ConfigError('S3_SECRET_ACCESS_KEY', 'is required when S3_ACCESS_KEY_ID is set');
  }
  if (secretAccessKey !== null && accessKeyId === null) {
    throw new ConfigError('S3_ACCESS_KEY_ID', 'is required when S3_SECRET_ACCESS_KEY is set');
  }
  return {
    bucket,
    endpoint: url(env, 'S3_ENDPOINT', ['http:', 'https:']),
    region,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
  };
}

/**
 * The socket's allowed Origins when neither CHECK_ORIGINS nor PUBLIC_URL is set: the addresses the
 * start banner and a person may type for this machine (`localhost` and `127.0.0.1`, and `[::1]`
 * when the service listens on IPv6), all at the service's port. A page at any of them is this
 * service; with PUBLIC_URL set, CHECK_ORIGINS is PUBLIC_URL alone and the app says where to go.
 */
function loopbackOrigins(host: string, port: number): string[] {
  const origins = [`http://localhost:${port}`, `http://127.0.0.1:${port}`];
  if (['::', '::1', 'localhost'].includes(host.toLowerCase())) origins.push(`http://[::1]:${port}`);
  return origins;
}

/**
 * ROLE, and what a role other than `all` needs: the processes of a fleet share one PostgreSQL
 * (the embedded database is one process's) and hear each other's events over NATS.
 */
function roleOf(env: Env, databaseUrl: string | null, natsUrl: string | null): Role {
  const text = (str(env, 'ROLE') ?? 'all').toLowerCase();
  if (!(ROLES as readonly string[]).includes(text)) {
    throw new ConfigError('ROLE', `must be one of all, api, gateway, worker, got "${text.slice(0, 100)}"`);
  }
  const role = text as Role;
  if (role === 'all') return role;
  if (!databaseUrl) {
    throw new ConfigError(
      'DATABASE_URL',
      `is required with ROLE=${role}: the processes of each role share one PostgreSQL (the embedded database belongs to one process; run ROLE=all for that)`,
    );
  }
  if (!natsUrl) {
    throw new ConfigError(
      'NATS_URL',
      `is required with ROLE=${role}: the processes of each role hear each other's events over NATS`,
    );
  }
  return role;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST') ?? '127.0.0.1';
  const explicitPublicUrl = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  const publicUrl = (explicitPublicUrl ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const dataDir = resolve(str(env, 'DATA_DIR') ?? './data');
  const natsUrl = url(env, 'NATS_URL', ['nats:', 'tls:', 'ws:', 'wss:']);
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const role = roleOf(env, databaseUrl, natsUrl);

  const retentionText = str(env, 'EVENT_RETENTION') ?? '7d';
  const eventRetentionMs = parseDuration(retentionText);
  if (eventRetentionMs === null)
    throw new ConfigError('EVENT_RETENTION', `must look like 7d, 36h or 90m, got "${retentionText}"`);

  const leaseText = str(env, 'IDEMPOTENCY_LEASE') ?? '60s';
  const idempotencyLeaseMs = parseDuration(leaseText);
  if (idempotencyLeaseMs === null || idempotencyLeaseMs < 1000) {
    throw new ConfigError('IDEMPOTENCY_LEASE', `must look like 60s or 2m (at least 1s), got "${leaseText}"`);
  }

  const originsText = str(env, 'CHECK_ORIGINS');
  const checkOrigins = (
    originsText ? originsText.split(',') : explicitPublicUrl ? [publicUrl] : loopbackOrigins(host, port)
  )
    .map((o) => o.trim())
    .filter(Boolean);
  for (const o of checkOrigins) {
    try {
      const u = new URL(o);
      if (u.origin !== o.replace(/\/+$/, '')) throw new Error();
    } catch {
      throw new ConfigError('CHECK_ORIGINS', `"${o}" is not an origin such as https://help.example.com`);
    }
  }

  const challengeKind = (str(env, 'CHALLENGE') ?? 'none').toLowerCase();
  if (!['none', 'turnstile', 'hcaptcha'].includes(challengeKind)) {
    throw new ConfigError('CHALLENGE', `must be none, turnstile or hcaptcha, got "${challengeKind}"`);
  }
  const challengeSecret = str(env, 'CHALLENGE_SECRET');
  if (challengeKind !== 'none' && !challengeSecret) {
    throw new ConfigError('CHALLENGE_SECRET', `is required when CHALLENGE=${challengeKind}`);
  }

  const signinWindowText = str(env, 'SIGNIN_WINDOW') ?? '15m';
  const signinWindowMs = parseDuration(signinWindowText);
  if (signinWindowMs === null) {
    throw new ConfigError('SIGNIN_WINDOW', `must look like 15m, 1h or 90s, got "${signinWindowText}"`);
  }
  const appAttestId = str(env, 'APP_ATTEST_APP_ID');
  if (appAttestId !== null && !/^[A-Z0-9]{10}\.[A-Za-z0-9][A-Za-z0-9.-]{0,154}$/.test(appAttestId)) {
    throw new ConfigError('APP_ATTEST_APP_ID', `must be "<team id>.<bundle id>" such as ABCDE12345.com.example.app`);
  }
  const appAttestEnv = (str(env, 'APP_ATTEST_ENVIRONMENT') ?? 'production').toLowerCase();
  if (appAttestEnv !== 'production' && appAttestEnv !== 'development') {
    throw new ConfigError('APP_ATTEST_ENVIRONMENT', `must be production or development, got "${appAttestEnv}"`);
  }

  const ai = aiConfig(env);

  const memoryDatabase = bool(env, 'DATABASE_IN_MEMORY', false);
  if (!memoryDatabase) mkdirSync(dataDir, { recursive: true });
  const secretKey = secret(env, 'SECRET_KEY', dataDir, 'secret_key', 32);
  const inboundSecret = secret(env, 'INBOUND_SECRET', dataDir, 'inbound_secret', 16);

  const s3 = s3Config(env);
  const oauth = oauthConfig(env);
  const appUrl = (url(env, 'APP_URL', ['http:', 'https:']) ?? publicUrl).replace(/\/+$/, '');
  const pollText = str(env, 'IMAP_POLL_INTERVAL') ?? '60s';
  const imapPollIntervalMs = parseDuration(pollText);
  if (imapPollIntervalMs === null) {
    throw new ConfigError('IMAP_POLL_INTERVAL', `must look like 60s, 5m or 1h, got "${pollText}"`);
  }

  const logLevel = str(env, 'LOG_LEVEL') ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent`);
  }

  return {
    role,
    port,
    host,
    publicUrl,
    databaseUrl,
    dataDir,
    natsUrl,
    redisUrl,
    secretKey: secretKey.value,
    inboundSecret: inboundSecret.value,
    generated: { secretKey: secretKey.generated, inboundSecret: inboundSecret.generated },
    eventRetentionMs,
    idempotencyLeaseMs,
    trustProxy: bool(env, 'TRUST_PROXY', false),
    rowLevelSecurity: bool(env, 'ROW_LEVEL_SECURITY', true),
    checkOrigins,
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    challenge: {
      kind: challengeKind as Config['challenge']['kind'],
      secret: challengeSecret,
      verifyUrl: url(env, 'CHALLENGE_VERIFY_URL', ['http:', 'https:']),
      siteKey: str(env, 'CHALLENGE_SITE_KEY'),
    },
    signin: {
      maxFailuresPerAccount: int(env, 'SIGNIN_MAX_FAILURES_PER_ACCOUNT', 10, 1, 1_000_000),
      maxFailuresPerIp: int(env, 'SIGNIN_MAX_FAILURES_PER_IP', 30, 1, 1_000_000),
      windowMs: signinWindowMs,
    },
    appAttest: { appId: appAttestId, allowDevelopment: appAttestEnv === 'development' },
    ai,
    stripe: {
      secretKey: str(env, 'STRIPE_SECRET_KEY'),
      webhookSecret: str(env, 'STRIPE_WEBHOOK_SECRET'),
      apiBase: url(env, 'STRIPE_API_BASE', ['http:', 'https:']),
      prices: {
        proMonth: str(env, 'STRIPE_PRICE_PRO_MONTH'),
        proYear: str(env, 'STRIPE_PRICE_PRO_YEAR'),
        aiTopUp: str(env, 'STRIPE_PRICE_AI_TOP_UP'),
      },
    },
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    inboundDomain: inboundDomain(env, publicUrl),
    mailAllowPrivate: bool(env, 'MAIL_ALLOW_PRIVATE', false),
    appUrl,
    appScheme: str(env, 'APP_SCHEME') ?? 'helpdesk',
    oauth,
    imapPollIntervalMs,
    inboundAuthservIds: hostList(env, 'INBOUND_AUTHSERV_IDS'),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 700, 1, 10_000_000),
    widgetSessionsPerIp: int(env, 'WIDGET_SESSIONS_PER_IP', 60, 1, 1_000_000),
    searchWalkAbove: int(env, 'SEARCH_WALK_ABOVE', 5_000, 0, 1_000_000_000),
    attachmentMaxMb: int(env, 'ATTACHMENT_MAX_MB', 25, 1, 1024),
    s3,
    logLevel,
    memoryDatabase,
  };
}

/**
 * AI_*: the instance's language model provider (docs/ai.md). The vendor's own API needs a key (its
 * default models are in the catalog, src/modules/ai/models.json); another OpenAI-compatible server
 * (AI_BASE_URL: Ollama, vLLM, llama.cpp) needs the name of the model it serves, and may need no key.
 */
function aiConfig(env: NodeJS.ProcessEnv): Config['ai'] {
  const provider = str(env, 'AI_PROVIDER');
  const baseUrl = url(env, 'AI_BASE_URL', ['http:', 'https:']);
  const apiKey = str(env, 'AI_API_KEY');
  const model = str(env, 'AI_MODEL');
  const fastModel = str(env, 'AI_FAST_MODEL');
  if (provider === null) {
    const stray = (['AI_BASE_URL', 'AI_API_KEY', 'AI_MODEL', 'AI_FAST_MODEL'] as const).find(
      (v) => str(env, v) !== null,
    );
    if (stray) throw new ConfigError('AI_PROVIDER', `is required when ${stray} is set (openai or anthropic)`);
    return {
      provider: null,
      baseUrl: null,
      apiKey: null,
      model: null,
      fastModel: null,
      ...embeddingsConfig(env, null),
    };
  }
  if (provider !== 'openai' && provider !== 'anthropic') {
    throw new ConfigError('AI_PROVIDER', `must be openai or anthropic, got "${provider}"`);
  }
  if (baseUrl === null && apiKey === null) {
    throw new ConfigError(
      'AI_API_KEY',
      `is required for ${provider}'s own API (or set AI_BASE_URL to a server that needs none)`,
    );
  }
  if (baseUrl !== null && provider === 'openai' && model === null) {
    throw new ConfigError('AI_MODEL', 'is required with AI_BASE_URL: the name of a model that server serves');
  }
  return { provider, baseUrl, apiKey, model, fastModel, ...embeddingsConfig(env, provider) };
}

function embeddingsConfig(
  env: NodeJS.ProcessEnv,
  provider: 'openai' | 'anthropic' | null,
): Pick<Config['ai'], 'embeddings' | 'embeddingModel'> {
  const mode = str(env, 'AI_EMBEDDINGS') ?? 'embedded';
  if (mode !== 'embedded' && mode !== 'provider' && mode !== 'off') {
    throw new ConfigError('AI_EMBEDDINGS', `must be embedded, provider or off, got "${mode}"`);
  }
  if (mode === 'provider' && provider !== 'openai') {
    throw new ConfigError('AI_EMBEDDINGS', 'provider needs AI_PROVIDER=openai (Anthropic has no embeddings)');
  }
  const model = str(env, 'AI_EMBEDDING_MODEL');
  if (model !== null && mode !== 'provider') {
    throw new ConfigError('AI_EMBEDDING_MODEL', 'is used only with AI_EMBEDDINGS=provider');
  }
  return { embeddings: mode, embeddingModel: mode === 'provider' ? (model ?? 'text-embedding-3-small') : null };
}
