// Mailboxes (the /v1/mailboxes routes; docs/api.md "Mailboxes"): CRUD (the connection test is in
// connection-test.ts), and the lookups the email channel uses (a forwarding address to its
// mailbox, a mailbox's secrets).
//
// `password` and `smtp_password` are write-only: sealed with SECRET_KEY (AES-256-GCM, bound to
// the workspace, the mailbox and which secret it is), never returned, never in an event or an
// audit entry (those only say that a secret changed).
import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB, MailboxConfig as StoredConfig } from '../../platform/db/schema.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import { sanitizeHtml } from '../../platform/html/index.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import { checkPlanLimit, mailboxesChanged } from '../billing/service.js';
import { isPublicEmailDomain } from '../email/public-domains.js';
import { hostProblem, resolvedHostProblem } from './connect.js';
import type { CreateMailboxBody, ListMailboxesQuery, Mailbox, PatchMailboxBody } from './schemas.js';

export type MailboxView = Static<typeof Mailbox>;
type Kind = MailboxView['inbound_kind'] | MailboxView['outbound_kind'];

const NOT_FOUND = 'Mailbox not found.';
const UNIQUE_KEYS = { mailboxes_email_key: 'A mailbox with this email address already exists in this workspace.' };

/** Sealing contexts: a sealed value only opens for the mailbox and the field it was written for. */
export const passwordContext = (workspaceId: string, id: string) => `mailbox-password:${workspaceId}:${id}`;
export const smtpPasswordContext = (workspaceId: string, id: string) => `mailbox-smtp-password:${workspaceId}:${id}`;
export const oauthContext = (workspaceId: string, id: string) => `mailbox-oauth:${workspaceId}:${id}`;

function mailboxQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('mailboxes as m')
    .select([
      'm.id',
      'm.name',
      'm.email',
      'm.display_name',
      'm.inbound_kind',
      'm.outbound_kind',
      'm.forwarding_address',
      'm.config',
      'm.team_id',
      'm.signature_html',
      'm.auto_reply_enabled',
      'm.auto_reply_subject',
      'm.auto_reply_html',
      'm.status',
      'm.last_error',
      'm.last_synced_at',
      'm.trusted_form_senders',
      'm.created_at',
      'm.updated_at',
      microsOf('m.created_at').as('created_us'),
    ])
    .where('m.workspace_id', '=', workspaceId);
}

type MailboxRow = Awaited<ReturnType<ReturnType<typeof mailboxQuery>['executeTakeFirstOrThrow']>>;

const CONFIG_KEYS = [
  'imap_host',
  'imap_port',
  'imap_username',
  'imap_tls',
  'smtp_host',
  'smtp_port',
  'smtp_username',
  'smtp_tls',
  'oauth_email',
] as const;

/** The stored config, keys in one order (so equal configs compare equal). */
function orderedConfig(c: StoredConfig): StoredConfig {
  const out: Record<string, unknown> = {};
  for (const k of CONFIG_KEYS) if (c[k] !== undefined && c[k] !== null) out[k] = c[k];
  return out as StoredConfig;
}

export const presentMailbox = (r: MailboxRow): MailboxView => ({
  id: r.id,
  name: r.name,
  email: r.email,
  display_name: r.display_name,
  inbound_kind: r.inbound_kind,
  outbound_kind: r.outbound_kind,
  forwarding_address: r.forwarding_address,
  config: orderedConfig(r.config ?? {}),
  team_id: r.team_id,
  signature_html: r.signature_html,
  auto_reply_enabled: r.auto_reply_enabled,
  auto_reply_subject: r.auto_reply_subject,
  auto_reply_html: r.auto_reply_html,
  status: r.status,
  last_error: r.last_error,
  last_synced_at: iso(r.last_synced_at),
  trusted_form_senders: r.trusted_form_senders,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

export async function loadMailbox(db: Kysely<DB>, workspaceId: string, id: string): Promise<MailboxView | null> {
  if (!isUuid(id)) return null;
  const row = await mailboxQuery(db, workspaceId).where('m.id', '=', id.toLowerCase()).executeTakeFirst();
  return row ? presentMailbox(row) : null;
}

export async function listMailboxes(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListMailboxesQuery>,
): Promise<Page<MailboxView>> {
  const limit = q.limit ?? 50;
  const list = `mailboxes:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = mailboxQuery(deps.database.db, ctx.workspaceId);
  if (after) query = query.where(createdBefore('m', after));
  const rows = await query
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], presentMailbox);
}

export async function getMailbox(deps: Deps, ctx: RequestContext, id: string): Promise<MailboxView> {
  const m = await loadMailbox(deps.database.db, ctx.workspaceId, id);
  if (!m) throw notFound(NOT_FOUND);
  return m;
}

// ---------------------------------------------------------------------------------------------
// Input rules.

const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;
const LOCAL_RE = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;

/**
 * trusted_form_senders as stored: trimmed, lower-cased, without repeats. Each is an exact
 * address (`forms@example.com`) or a whole domain (`@example.com`); a public email provider's
 * domain is refused (anyone could send from it). An exact address there names one account
 * and is accepted.
 */
export function cleanTrustedFormSenders(list: string[]): string[] {
  const out: string[] = [];
  list.forEach((raw, i) => {
    const where = `body.trusted_form_senders.${i}`;
    const entry = raw.trim().toLowerCase();
    const at = entry.lastIndexOf('@');
    if (at < 0) throw invalid(where, 'must be an email address or @domain');
    const local = entry.slice(0, at);
    const domain = entry.slice(at + 1);
    if (!DOMAIN_RE.test(domain)) throw invalid(where, `${domain || '(empty)'} is not a domain name`);
    if (local === '') {
      if (isPublicEmailDomain(domain)) {
        throw invalid(where, `${domain} is a public email provider: anyone can send from it, so it cannot be trusted`);
      }
    } else if (!LOCAL_RE.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
      throw invalid(where, 'must be an email address or @domain');
    }
    if (!out.includes(entry)) out.push(entry);
  });
  return out;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

function cleanEmail(email: string): string {
  const e = email.trim().toLowerCase();
  const at = e.lastIndexOf('@');
  if (at < 1 || !DOMAIN_RE.test(e.slice(at + 1)) || /[\s<>,;"]/.test(e)) {
    throw invalid('body.email', 'must be an email address');
  }
  return e;
}

/** One line: no line breaks in what becomes a From name or a subject header. */
const oneLine = (s: string) => s.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();

/** Sanitized HTML, or '' when nothing is left of it. */
const cleanHtml = (html: string) => (html.trim() === '' ? '' : sanitizeHtml(html));

type ConfigInput = Partial<Record<(typeof CONFIG_KEYS)[number], string | number | null>>;

/** Hosts of a write that resolve to addresses the service may not reach: 422 before anything is stored. */
async function checkResolvedHosts(input: ConfigInput | undefined, allowPrivate: boolean): Promise<void> {
  for (const k of ['imap_host', 'smtp_host'] as const) {
    const host = input?.[k];
    if (typeof host !== 'string') continue;
    const problem = await resolvedHostProblem(host.trim().toLowerCase(), allowPrivate);
    if (problem) throw invalid(`body.config.${k}`, problem);
  }
}

/** The config after a write: POST sets it; PATCH merges key by key (null removes a key). */
function mergedConfig(before: StoredConfig, input: ConfigInput | undefined, allowPrivate: boolean): StoredConfig {
  const out: Record<string, unknown> = { ...before };
  if (!input) return orderedConfig(out as StoredConfig);
  for (const k of CONFIG_KEYS) {
    const v = input[k];
    if (v === undefined) continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    let value: string | number = v;
    if (typeof value === 'string') value = value.trim();
    if (k === 'imap_host' || k === 'smtp_host') {
      const host = String(value).toLowerCase().replace(/\.$/, '');
      const problem = hostProblem(host, allowPrivate);
      if (problem) throw invalid(`body.config.${k}`, problem);
      value = host;
    }
    if ((k === 'imap_username' || k === 'smtp_username') && value === '') {
      throw invalid(`body.config.${k}`, 'must not be blank');
    }
    if (k === 'oauth_email') value = String(value).toLowerCase();
    out[k] = value;
  }
  return orderedConfig(out as StoredConfig);
}

interface Shape {
  inbound_kind: MailboxView['inbound_kind'];
  outbound_kind: MailboxView['outbound_kind'];
  config: StoredConfig;
  hasPassword: boolean;
}

/**
 * What each kind needs, on the mailbox as it would be after the write. Google and Microsoft
 * mailboxes are connected through their OAuth flow, not set by hand.
 */
function checkShape(s: Shape, before: Shape | null): void {
  const oauth = (k: Kind) => k === 'google' || k === 'microsoft';
  if (oauth(s.inbound_kind) && s.inbound_kind !== before?.inbound_kind) {
    throw invalid(
      'body.inbound_kind',
      `${s.inbound_kind} mailboxes are connected through POST /v1/mailboxes/oauth/${s.inbound_kind}/start`,
    );
  }
  if (oauth(s.outbound_kind) && s.outbound_kind !== s.inbound_kind) {
    throw invalid('body.outbound_kind', `${s.outbound_kind} sending needs a ${s.outbound_kind} mailbox (inbound_kind)`);
  }
  if (s.inbound_kind === 'imap') {
    if (!s.config.imap_host) throw invalid('body.config.imap_host', 'is required for an imap mailbox');
    if (!s.hasPassword) throw invalid('body.password', 'is required for an imap mailbox');
  }
  if (s.outbound_kind === 'smtp' && !s.config.smtp_host) {
    throw invalid('body.config.smtp_host', 'is required when outbound_kind is smtp');
  }
}

async function checkTeam(trx: Kysely<DB>, workspaceId: string, teamId: string | null): Promise<string | null> {
  if (teamId === null) return null;
  const id = teamId.toLowerCase();
  const team = await trx
    .selectFrom('teams')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!team) throw invalid('body.team_id', 'no such team in this workspace');
  return id;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * `<readable part>-<10 random base32 characters>@<INBOUND_DOMAIN>`: the readable part comes
 * from the mailbox address (support@acme.com gives support-…); the random part (50 bits) makes
 * the address unguessable, so nobody can deliver into a mailbox by guessing its address.
 */
export function forwardingAddressFor(email: string, domain: string): string {
  const readable =
    (email.split('@')[0] ?? '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 24)
      .replace(/-+$/, '') || 'mailbox';
  const bytes = randomBytes(10);
  const token = Array.from(bytes, (b) => BASE32[b & 31]).join('');
  return `${readable}-${token}@${domain}`;
}

// ---------------------------------------------------------------------------------------------
// Writes.

export async function createMailbox(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateMailboxBody>,
): Promise<MailboxView> {
  const name = cleanName(input.name);
  const email = cleanEmail(input.email);
  const displayName = oneLine(input.display_name ?? '') || name;
  const inboundKind = input.inbound_kind ?? 'forwarding';
  const outboundKind = input.outbound_kind ?? 'system';
  const config = mergedConfig({}, input.config, deps.config.mailAllowPrivate);
  await checkResolvedHosts(input.config, deps.config.mailAllowPrivate);
  checkShape(
    { inbound_kind: inboundKind, outbound_kind: outboundKind, config, hasPassword: input.password !== undefined },
    null,
  );
  const trusted = cleanTrustedFormSenders(input.trusted_form_senders ?? []);
  const signatureHtml = cleanHtml(input.signature_html ?? '');
  const autoReplyHtml = cleanHtml(input.auto_reply_html ?? '');
  const autoReplySubject = oneLine(input.auto_reply_subject ?? '');
  const id = newId();
  const forwardingAddress = forwardingAddressFor(email, deps.config.inboundDomain);
  return uniqueOrConflict(UNIQUE_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const teamId = await checkTeam(u.trx, ctx.workspaceId, input.team_id ?? null);
      // Hosted offering: 402 plan_limit past the plan's max_mailboxes.
      await checkPlanLimit(deps, u.trx, ctx.workspaceId, 'mailboxes');
      await u.trx
        .insertInto('mailboxes')
        .values({
          workspace_id: ctx.workspaceId,
          id,
          name,
          email,
          display_name: displayName,
          inbound_kind: inboundKind,
          outbound_kind: outboundKind,
          forwarding_address: forwardingAddress,
          config: JSON.stringify(config),
          team_id: teamId,
          signature_html: signatureHtml,
          auto_reply_enabled: input.auto_reply_enabled ?? false,
          auto_reply_subject: autoReplySubject,
          auto_reply_html: autoReplyHtml,
          trusted_form_senders: trusted,
          password_enc:
            input.password === undefined
              ? null
              : deps.secrets.seal(input.password, passwordContext(ctx.workspaceId, id)),
          smtp_password_enc:
            input.smtp_password === undefined
              ? null
              : deps.secrets.seal(input.smtp_password, smtpPasswordContext(ctx.workspaceId, id)),
        })
        .execute();
      await u.trx
        .insertInto('mailbox_addresses')
        .values({ address: forwardingAddress, workspace_id: ctx.workspaceId, mailbox_id: id })
        .execute();
      const view = (await loadMailbox(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'mailbox.created', data: { mailbox: view } });
      await mailboxesChanged(deps, u, ctx.workspaceId);
      await recordAudit(u.trx, ctx, {
        action: 'mailbox.created',
        entityType: 'mailbox',
        entityId: id,
        data: {
          name,
          email,
          inbound_kind: inboundKind,
          outbound_kind: outboundKind,
          password: input.password !== undefined ? 'set' : 'none',
          smtp_password: input.smtp_password !== undefined ? 'set' : 'none',
        },
      });
      return view;
    }),
  );
}

/** Fields whose change means "try connecting again": an errored mailbox becomes active. */
const CONNECTION_FIELDS = ['email', 'inbound_kind', 'outbound_kind', 'config', 'password', 'smtp_password'];

export async function updateMailbox(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchMailboxBody>,
): Promise<MailboxView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  // Before the transaction: a lookup must not hold a connection (bad input is a 422 before a 404,
  // as the schema's checks are).
  await checkResolvedHosts(input.config, deps.config.mailAllowPrivate);
  return uniqueOrConflict(UNIQUE_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await u.trx
        .selectFrom('mailboxes')
        .selectAll()
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', rowId)
        .forUpdate()
        .executeTakeFirst();
      if (!before) throw notFound(NOT_FOUND);
      const set: Record<string, unknown> = {};
      const changes: Record<string, unknown> = {};
      const change = (field: string, from: unknown, to: unknown, column = field, value: unknown = to) => {
        if (JSON.stringify(from) === JSON.stringify(to)) return;
        set[column] = value;
        changes[field] = { from, to };
      };
      if (input.name !== undefined) change('name', before.name, cleanName(input.name));
      if (input.email !== undefined) change('email', before.email, cleanEmail(input.email));
      if (input.display_name !== undefined) {
        change('display_name', before.display_name, oneLine(input.display_name) || (input.name ?? before.name).trim());
      }
      const inboundKind = input.inbound_kind ?? before.inbound_kind;
      const outboundKind = input.outbound_kind ?? before.outbound_kind;
      change('inbound_kind', before.inbound_kind, inboundKind);
      change('outbound_kind', before.outbound_kind, outboundKind);
      const beforeConfig = orderedConfig(before.config ?? {});
      const config = mergedConfig(beforeConfig, input.config, deps.config.mailAllowPrivate);
      change('config', beforeConfig, config, 'config', JSON.stringify(config));
      const hasPassword = input.password === undefined ? before.password_enc !== null : input.password !== null;
      checkShape(
        { inbound_kind: inboundKind, outbound_kind: outboundKind, config, hasPassword },
        {
          inbound_kind: before.inbound_kind,
          outbound_kind: before.outbound_kind,
          config: beforeConfig,
          hasPassword: before.password_enc !== null,
        },
      );
      if (input.team_id !== undefined) {
        change('team_id', before.team_id, await checkTeam(u.trx, ctx.workspaceId, input.team_id));
      }
      if (input.signature_html !== undefined) {
        change('signature_html', before.signature_html, cleanHtml(input.signature_html));
      }
      if (input.auto_reply_enabled !== undefined) {
        change('auto_reply_enabled', before.auto_reply_enabled, input.auto_reply_enabled);
      }
      if (input.auto_reply_subject !== undefined) {
        change('auto_reply_subject', before.auto_reply_subject, oneLine(input.auto_reply_subject));
      }
      if (input.auto_reply_html !== undefined) {
        change('auto_reply_html', before.auto_reply_html, cleanHtml(input.auto_reply_html));
      }
      if (input.trusted_form_senders !== undefined) {
        change(
          'trusted_form_senders',
          before.trusted_form_senders,
          cleanTrustedFormSenders(input.trusted_form_senders),
        );
      }
      // Secrets: always re-sealed when given (the old value cannot be compared without opening
      // it); the change records only that it happened.
      if (input.password !== undefined) {
        set.password_enc =
          input.password === null ? null : deps.secrets.seal(input.password, passwordContext(ctx.workspaceId, rowId));
        changes.password = input.password === null ? 'removed' : 'set';
      }
      if (input.smtp_password !== undefined) {
        set.smtp_password_enc =
          input.smtp_password === null
            ? null
            : deps.secrets.seal(input.smtp_password, smtpPasswordContext(ctx.workspaceId, rowId));
        changes.smtp_password = input.smtp_password === null ? 'removed' : 'set';
      }
      // Status: disabled and active by hand; a new connection setting, or `active`, clears an error.
      const reconnect = CONNECTION_FIELDS.some((f) => f in changes);
      let status = before.status;
      if (input.status !== undefined) status = input.status;
      else if (before.status === 'error' && reconnect) status = 'active';
      change('status', before.status, status);
      if (status === 'active' && before.last_error !== null && (input.status === 'active' || reconnect)) {
        change('last_error', before.last_error, null);
      }
      if (Object.keys(changes).length === 0) return (await loadMailbox(u.trx, ctx.workspaceId, rowId))!;
      await u.trx
        .updateTable('mailboxes')
        .set({ ...set, updated_at: sql<Date>`now()` })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', rowId)
        .execute();
      const view = (await loadMailbox(u.trx, ctx.workspaceId, rowId))!;
      u.emit({ type: 'mailbox.updated', data: { mailbox: view, changes: Object.keys(changes) } });
      await recordAudit(u.trx, ctx, {
        action: 'mailbox.updated',
        entityType: 'mailbox',
        entityId: rowId,
        data: auditChanges(changes),
      });
      return view;
    }),
  );
}

/** HTML bodies are long: the audit entry says they changed, not what to. */
function auditChanges(changes: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes)) {
    out[k] = k === 'signature_html' || k === 'auto_reply_html' ? 'changed' : v;
  }
  return out;
}

export async function deleteMailbox(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    // Its forwarding address stops routing (mailbox_addresses is global, without a foreign key
    // to mailboxes: docs/operations.md "Distributing by workspace").
    await u.trx
      .deleteFrom('mailbox_addresses')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('mailbox_id', '=', rowId)
      .execute();
    const gone = await u.trx
      .deleteFrom('mailboxes')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', rowId)
      .returning(['name', 'email', 'forwarding_address'])
      .executeTakeFirst();
    if (!gone) throw notFound(NOT_FOUND);
    u.emit({ type: 'mailbox.deleted', data: { mailbox_id: rowId } });
    await mailboxesChanged(deps, u, ctx.workspaceId);
    await recordAudit(u.trx, ctx, {
      action: 'mailbox.deleted',
      entityType: 'mailbox',
      entityId: rowId,
      data: { name: gone.name, email: gone.email, forwarding_address: gone.forwarding_address },
    });
  });
}

// ---------------------------------------------------------------------------------------------
// For the email channel.

/** The mailbox a recipient address routes to (its forwarding address), in any workspace. */
export async function mailboxForAddress(
  db: Kysely<DB>,
  address: string,
): Promise<{ workspaceId: string; mailboxId: string } | null> {
  const row = await db
    .selectFrom('mailbox_addresses')
    .select(['workspace_id', 'mailbox_id'])
    .where('address', '=', address.trim().toLowerCase())
    .executeTakeFirst();
  return row ? { workspaceId: row.workspace_id, mailboxId: row.mailbox_id } : null;
}

export interface MailboxSecrets {
  password: string | null;
  smtpPassword: string | null;
}

/** The opened secrets of a mailbox (null when unset or when SECRET_KEY changed since). */
export async function mailboxSecrets(deps: Deps, workspaceId: string, id: string): Promise<MailboxSecrets | null> {
  const row = await deps.database.db
    .selectFrom('mailboxes')
    .select(['password_enc', 'smtp_password_enc'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return null;
  return {
    password: row.password_enc ? deps.secrets.open(row.password_enc, passwordContext(workspaceId, id)) : null,
    smtpPassword: row.smtp_password_enc
      ? deps.secrets.open(row.smtp_password_enc, smtpPasswordContext(workspaceId, id))
      : null,
  };
}

/**
 * The mailbox an email ticket without one sends from: the workspace's oldest mailbox that is not
 * disabled, or null when it has none.
 */
export async function defaultMailbox(db: Kysely<DB>, workspaceId: string): Promise<MailboxView | null> {
  const row = await mailboxQuery(db, workspaceId)
    .where('m.status', '!=', 'disabled')
    .orderBy('m.created_at')
    .orderBy('m.id')
    .limit(pageLimit(1))
    .executeTakeFirst();
  return row ? presentMailbox(row) : null;
}
