// IMAP mailboxes (issue 8 part 7): new mail in a mailbox's INBOX becomes inbound mail.
//
// - One poller per mailbox across all processes: a process polls a mailbox only while it holds
//   the mailbox's lease (mailboxes.imap_lease_owner / imap_lease_until, 60 s, renewed every
//   20 s). A process that dies lets its leases lapse and another process takes them over.
// - Position: UIDVALIDITY and the last UID handed over are stored on the mailbox. Each message is
//   handed to ingestRaw (durable in inbound_emails, with its UIDVALIDITY/UID) BEFORE the position
//   moves past it, so a crash in between fetches it again and the spool's unique
//   (mailbox, uidvalidity, uid) key stores it once: at least once, never twice. The position
//   update is fenced by the lease, so a process that lost its lease cannot write it.
// - A new UIDVALIDITY (the server renumbered the folder) refetches the mail since the last sync
//   (less a day); the new UIDs are new spool rows, and the inbound job keeps one message per
//   Message-ID per mailbox.
// - First sync: the mail of the last INITIAL_DAYS days, then everything after.
// - IDLE where the server offers it (re-synced at least every 5 minutes), otherwise a check every
//   IMAP_POLL_INTERVAL. The folder is opened read-only: flags are never changed.
// - Errors: status `error` with last_error (no secret in it), then retries with backoff (5 s
//   doubling to 5 minutes); the first good sync sets status `active` and last_synced_at. A
//   change to the mailbox (a new password, reconnected OAuth) restarts its poller at once.
// - Google and Microsoft mailboxes are polled the same way over XOAUTH2 (accessTokenFor).
import { hostname } from 'node:os';
import type { ImapFlow } from 'imapflow';
import { type Selectable, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { randomSecret } from '../../platform/crypto/random.js';
import type { MailboxesTable } from '../../platform/db/schema.js';
import { describeError, imapSettings, resolveHost, type ServerSettings } from '../mailboxes/connect.js';
import { accessTokenFor, OAuthTokenError, oauthServers } from '../mailboxes/oauth.js';
import { loadMailbox, mailboxSecrets } from '../mailboxes/service.js';
import { isInboundMailError } from './errors.js';
import { ingestRaw } from './ingest.js';
import { INBOUND_LIMITS } from './parse.js';

export interface ImapOptions {
  /** Without IDLE: how often to look for new mail. */
  pollIntervalMs: number;
  /** With IDLE: re-sync at least this often anyway. */
  idleMaxMs: number;
  /** How long a lease lasts; renewed every third of it. */
  leaseMs: number;
  /** How often every process looks for mailboxes nobody polls (and for changes it missed). */
  scanIntervalMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  /** A mailbox's first sync takes the mail of this many days. */
  initialDays: number;
  /** At most this many mailboxes polled by one process (the others are left to other processes). */
  maxPerProcess: number;
}

export const defaultImapOptions = (deps: Deps): ImapOptions => ({
  pollIntervalMs: deps.config.imapPollIntervalMs,
  idleMaxMs: 5 * 60_000,
  leaseMs: 60_000,
  scanIntervalMs: 30_000,
  backoffMinMs: 5_000,
  backoffMaxMs: 5 * 60_000,
  initialDays: 7,
  maxPerProcess: 500,
});

const POLLED_KINDS = ['imap', 'google', 'microsoft'] as const;
type PolledKind = (typeof POLLED_KINDS)[number];
const DAY_MS = 86_400_000;

class LeaseLost extends Error {}
class Gone extends Error {}

type MailboxRow = Pick<
  Selectable<MailboxesTable>,
  | 'workspace_id'
  | 'id'
  | 'email'
  | 'inbound_kind'
  | 'config'
  | 'status'
  | 'imap_uidvalidity'
  | 'imap_last_uid'
  | 'last_synced_at'
  | 'updated_at'
>;

/** Every IMAP, Google and Microsoft mailbox this process holds the lease of, each with its poller. */
export class ImapPollers {
  readonly owner = `${hostname()}:${process.pid}:${randomSecret('').slice(0, 10)}`;
  readonly options: ImapOptions;
  readonly #pollers = new Map<string, MailboxPoller>();
  #timers: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | null = null;
  #reconciling: Promise<void> | null = null;
  #again = false;
  #stopped = true;

  constructor(
    readonly deps: Deps,
    options: Partial<ImapOptions> = {},
  ) {
    this.options = { ...defaultImapOptions(deps), ...options };
  }

  /** Mailboxes polled here now (workspace:id). */
  get polling(): string[] {
    return [...this.#pollers.keys()];
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#unsubscribe = this.deps.bus.subscribe((e) => {
      if (e.type.startsWith('mailbox.')) this.reconcile();
    });
    this.#timers.push(setInterval(() => this.reconcile(), this.options.scanIntervalMs));
    this.#timers.push(setInterval(() => void this.#renew(), Math.max(1000, Math.floor(this.options.leaseMs / 3))));
    for (const t of this.#timers) t.unref();
    this.reconcile();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unsubscribe?.();
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    await this.#reconciling?.catch(() => {});
    const all = [...this.#pollers.values()];
    this.#pollers.clear();
    await Promise.all(all.map((p) => p.stop()));
    await this.#release(all.map((p) => p.ref));
  }

  /** Looks again at which mailboxes to poll (coalesced: at most one look at a time, plus one after). */
  reconcile(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#reconciling) {
      this.#again = true;
      return this.#reconciling;
    }
    this.#reconciling = (async () => {
      do {
        this.#again = false;
        try {
          await this.#reconcileOnce();
        } catch (err) {
          this.deps.log.warn({ err: (err as Error).message }, 'imap: looking for mailboxes to poll failed');
        }
      } while (this.#again && !this.#stopped);
    })().finally(() => {
      this.#reconciling = null;
    });
    return this.#reconciling;
  }

  async #reconcileOnce(): Promise<void> {
    const db = this.deps.database.db;
    const rows = await db
      .selectFrom('mailboxes')
      .select(['workspace_id', 'id', 'updated_at', 'imap_lease_owner', 'imap_lease_until'])
      .where('inbound_kind', 'in', [...POLLED_KINDS])
      .where('status', '<>', 'disabled')
      .execute();
    const wanted = new Map(rows.map((r) => [`${r.workspace_id}:${r.id}`, r]));
    // Pollers of mailboxes that are gone, disabled, no longer IMAP, or changed: stop (and restart).
    for (const [key, p] of this.#pollers) {
      const row = wanted.get(key);
      if (!row || new Date(row.updated_at).getTime() !== p.version) {
        this.#pollers.delete(key);
        await p.stop();
        if (!row) await this.#release([p.ref]);
      }
    }
    for (const [key, row] of wanted) {
      if (this.#stopped) return;
      if (this.#pollers.has(key) || this.#pollers.size >= this.options.maxPerProcess) continue;
      const untilMs = row.imap_lease_until ? new Date(row.imap_lease_until).getTime() : 0;
      if (row.imap_lease_owner && row.imap_lease_owner !== this.owner && untilMs > Date.now()) continue;
      const claimed = await db
        .updateTable('mailboxes')
        .set({
          imap_lease_owner: this.owner,
          imap_lease_until: sql<Date>`now() + ${`${this.options.leaseMs} milliseconds`}::interval`,
        })
        .where('workspace_id', '=', row.workspace_id)
        .where('id', '=', row.id)
        .where((eb) =>
          eb.or([
            eb('imap_lease_owner', 'is', null),
            eb('imap_lease_owner', '=', this.owner),
            eb('imap_lease_until', '<', sql<Date>`now()`),
          ]),
        )
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) continue;
      const p = new MailboxPoller(
        this,
        { workspaceId: row.workspace_id, id: row.id },
        new Date(row.updated_at).getTime(),
      );
      this.#pollers.set(key, p);
      p.start(() => {
        // The poller ended by itself (lease lost, mailbox gone): forget it; the next look decides.
        if (this.#pollers.get(key) === p) this.#pollers.delete(key);
      });
    }
  }

  /** Extends the leases of the mailboxes polled here; a poller whose lease was taken stops. */
  async #renew(): Promise<void> {
    if (this.#stopped || this.#pollers.size === 0) return;
    const ids = [...this.#pollers.values()].map((p) => p.ref.id);
    try {
      const kept = await this.deps.database.db
        .updateTable('mailboxes')
        .set({ imap_lease_until: sql<Date>`now() + ${`${this.options.leaseMs} milliseconds`}::interval` })
        .where('id', 'in', ids)
        .where('imap_lease_owner', '=', this.owner)
        .returning(['workspace_id', 'id'])
        .execute();
      const keys = new Set(kept.map((r) => `${r.workspace_id}:${r.id}`));
      for (const [key, p] of this.#pollers) {
        if (keys.has(key)) continue;
        this.#pollers.delete(key);
        void p.stop();
      }
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'imap: renewing leases failed');
    }
  }

  async #release(refs: Array<{ workspaceId: string; id: string }>): Promise<void> {
    for (const r of refs) {
      await this.deps.database.db
        .updateTable('mailboxes')
        .set({ imap_lease_owner: null, imap_lease_until: null })
        .where('workspace_id', '=', r.workspaceId)
        .where('id', '=', r.id)
        .where('imap_lease_owner', '=', this.owner)
        .execute()
        .catch(() => {});
    }
  }
}

/** One mailbox: connect, sync, wait for mail (IDLE or a timer), again; back off after errors. */
class MailboxPoller {
  #stopped = false;
  #client: ImapFlow | null = null;
  #wake: (() => void) | null = null;
  /** The server announced mail since the last sync began (it may come while no one sleeps). */
  #mailArrived = false;
  #done: Promise<void> = Promise.resolve();

  constructor(
    private readonly mgr: ImapPollers,
    readonly ref: { workspaceId: string; id: string },
    /** The mailbox's updated_at when this poller started (a change restarts it). */
    readonly version: number,
  ) {}

  private get deps() {
    return this.mgr.deps;
  }

  start(onEnd: () => void): void {
    this.#done = this.#run().finally(onEnd);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    this.#client?.close();
    await this.#done.catch(() => {});
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stopped) {
      const secrets: Array<string | null> = [];
      try {
        await this.#session(secrets, () => {
          failures = 0;
        });
      } catch (err) {
        if (this.#stopped || err instanceof LeaseLost || err instanceof Gone) return;
        failures++;
        const message = err instanceof OAuthTokenError ? err.message : `IMAP: ${describeError(err, secrets)}`;
        await this.#markError(message).catch(() => {});
        const o = this.mgr.options;
        const delay = Math.min(o.backoffMaxMs, o.backoffMinMs * 2 ** Math.min(failures - 1, 16));
        await this.#sleep(delay * (0.8 + Math.random() * 0.4));
      } finally {
        this.#client?.close();
        this.#client = null;
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.#wake = done;
    });
  }

  async #load(): Promise<MailboxRow> {
    const row = await this.deps.database.db
      .selectFrom('mailboxes')
      .select([
        'workspace_id',
        'id',
        'email',
        'inbound_kind',
        'config',
        'status',
        'imap_uidvalidity',
        'imap_last_uid',
        'last_synced_at',
        'updated_at',
      ])
      .where('workspace_id', '=', this.ref.workspaceId)
      .where('id', '=', this.ref.id)
      .executeTakeFirst();
    if (!row || row.status === 'disabled' || !(POLLED_KINDS as readonly string[]).includes(row.inbound_kind)) {
      throw new Gone();
    }
    return row;
  }

  /** How to log in: the stored password, or an OAuth access token (XOAUTH2). */
  async #settings(m: MailboxRow, secrets: Array<string | null>): Promise<ServerSettings> {
    const kind = m.inbound_kind as PolledKind;
    if (kind === 'imap') {
      const pw = (await mailboxSecrets(this.deps, m.workspace_id, m.id))?.password ?? null;
      secrets.push(pw);
      const s = imapSettings(m.email, m.config ?? {}, pw);
      if (!s) throw new Error('no IMAP server is configured');
      if (!pw) throw new Error('no password is stored for this mailbox');
      return s;
    }
    const servers = oauthServers(this.deps, kind, { email: m.email, config: m.config ?? {} });
    if (!servers) throw new OAuthTokenError(`${kind} is not configured on this server`);
    const accessToken = await accessTokenFor(this.deps, this.ref);
    secrets.push(accessToken);
    return { ...servers.imap, username: servers.user, password: null, accessToken };
  }

  async #session(secrets: Array<string | null>, onGood: () => void): Promise<void> {
    const m = await this.#load();
    const s = await this.#settings(m, secrets);
    const address = await resolveHost(s.host, this.deps.config.mailAllowPrivate);
    const imapflow = await import('imapflow'); // loaded on first use, not at start
    if (this.#stopped) return;
    const client = new imapflow.ImapFlow({
      host: address,
      port: s.port,
      secure: s.tls === 'tls',
      doSTARTTLS: s.tls === 'starttls' ? true : s.tls === 'none' ? false : undefined,
      ...(address !== s.host ? { servername: s.host } : {}),
      auth: s.accessToken
        ? { user: s.username ?? m.email, accessToken: s.accessToken }
        : { user: s.username ?? m.email, pass: s.password ?? '' },
      logger: false,
      disableAutoIdle: true,
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 10 * 60_000,
    });
    this.#client = client;
    let closed = false;
    client.on('error', () => {});
    client.on('close', () => {
      closed = true;
      this.#wake?.();
    });
    client.on('exists', () => {
      this.#mailArrived = true;
      this.#wake?.();
    });
    await client.connect();
    await client.mailboxOpen('INBOX', { readOnly: true });
    const idle = client.capabilities.has('IDLE');
    while (!this.#stopped) {
      this.#mailArrived = false;
      await this.#sync(client, await this.#load());
      await this.#markGood();
      onGood();
      if (this.#stopped) return;
      // Mail announced during the sync (an EXISTS in a FETCH answer, say) was not seen by it and
      // will not be announced again: sync once more instead of waiting.
      if (this.#mailArrived) continue;
      // Wait for mail: IDLE (the server tells us), or a timer (then a NOOP asks).
      const o = this.mgr.options;
      if (idle) client.idle().catch(() => {});
      await this.#sleep(idle ? o.idleMaxMs : o.pollIntervalMs);
      if (this.#stopped) return;
      if (closed || !client.usable) throw new Error('the connection to the server closed');
      if (!idle) await client.noop();
    }
  }

  async #sync(client: ImapFlow, m: MailboxRow): Promise<void> {
    const box = client.mailbox;
    if (!box) throw new Error('INBOX is not open');
    const uidValidity = Number(box.uidValidity);
    const sameFolder = m.imap_uidvalidity !== null && Number(m.imap_uidvalidity) === uidValidity;
    let uids: number[];
    if (sameFolder && m.imap_last_uid !== null) {
      const last = Number(m.imap_last_uid);
      // `n:*` always includes the newest message, even below n: keep only what is new.
      const found = (await client.search({ uid: `${last + 1}:*` }, { uid: true })) || [];
      uids = found.filter((u) => u > last);
    } else {
      if (m.imap_uidvalidity !== null) {
        this.deps.log.warn(
          { mailbox_id: m.id, from: m.imap_uidvalidity, to: uidValidity },
          'imap: UIDVALIDITY changed; fetching recent mail again (duplicates are dropped by Message-ID)',
        );
      }
      const since =
        m.imap_uidvalidity === null || !m.last_synced_at
          ? new Date(Date.now() - this.mgr.options.initialDays * DAY_MS)
          : new Date(new Date(m.last_synced_at).getTime() - DAY_MS);
      uids = (await client.search({ since }, { uid: true })) || [];
    }
    uids.sort((a, b) => a - b);
    if (uids.length === 0) {
      if (!sameFolder || m.imap_last_uid === null) {
        // Nothing to take: remember where the folder stands so later syncs look only past it.
        await this.#savePosition(uidValidity, Math.max(0, Number(box.uidNext ?? 1) - 1));
      }
      return;
    }
    // Sizes first: a message over the inbound limit is skipped without downloading it.
    const sizes = new Map<number, number>();
    for await (const msg of client.fetch(uids.join(','), { uid: true, size: true }, { uid: true })) {
      sizes.set(msg.uid, msg.size ?? 0);
    }
    const source = m.inbound_kind as PolledKind;
    for (const uid of uids) {
      if (this.#stopped) return;
      const size = sizes.get(uid);
      if (size === undefined) {
        // Expunged since the search: nothing to take.
      } else if (size > INBOUND_LIMITS.maxBytes) {
        this.deps.log.warn(
          { mailbox_id: m.id, uid, size_bytes: size, limit: INBOUND_LIMITS.maxBytes },
          'imap: message over the inbound size limit skipped',
        );
      } else {
        const msg = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
        const raw = msg ? msg.source : undefined;
        if (raw) {
          try {
            await ingestRaw(this.deps, {
              raw,
              recipient: m.email,
              mailboxId: m.id,
              workspaceId: m.workspace_id,
              source,
              imap: { uidvalidity: uidValidity, uid },
            });
          } catch (err) {
            if (!isInboundMailError(err)) throw err;
            // Refused for good (too large once downloaded): skipping it is the only way forward.
            this.deps.log.warn({ mailbox_id: m.id, uid, err: err.message }, 'imap: message refused by ingest');
          }
        }
      }
      await this.#savePosition(uidValidity, uid);
    }
  }

  /** Moves the position, only while this process holds the lease. */
  async #savePosition(uidValidity: number, lastUid: number): Promise<void> {
    const r = await this.deps.database.db
      .updateTable('mailboxes')
      .set({ imap_uidvalidity: uidValidity, imap_last_uid: lastUid })
      .where('workspace_id', '=', this.ref.workspaceId)
      .where('id', '=', this.ref.id)
      .where('imap_lease_owner', '=', this.mgr.owner)
      .where('imap_lease_until', '>', sql<Date>`now()`)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new LeaseLost();
  }

  async #markGood(): Promise<void> {
    const db = this.deps.database.db;
    const r = await db
      .updateTable('mailboxes')
      .set({ last_synced_at: sql<Date>`now()` })
      .where('workspace_id', '=', this.ref.workspaceId)
      .where('id', '=', this.ref.id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return;
    await this.#setStatus('active', null);
  }

  async #markError(message: string): Promise<void> {
    this.deps.log.warn(
      { mailbox_id: this.ref.id, workspace_id: this.ref.workspaceId, err: message },
      'imap: sync failed',
    );
    await this.#setStatus('error', message);
  }

  /** Status changes are mailbox.updated events (never for a disabled mailbox). */
  async #setStatus(status: 'active' | 'error', lastError: string | null): Promise<void> {
    await this.deps.writer.run(this.ref.workspaceId, async (u) => {
      const before = await u.trx
        .selectFrom('mailboxes')
        .select(['status', 'last_error'])
        .where('workspace_id', '=', this.ref.workspaceId)
        .where('id', '=', this.ref.id)
        .forUpdate()
        .executeTakeFirst();
      if (!before || before.status === 'disabled') return;
      const changes = [
        ...(before.status !== status ? ['status'] : []),
        ...(before.last_error !== lastError ? ['last_error'] : []),
      ];
      await u.trx
        .updateTable('mailboxes')
        .set({
          status,
          last_error: lastError,
          ...(status === 'active' ? { last_synced_at: sql<Date>`now()` } : {}),
        })
        .where('workspace_id', '=', this.ref.workspaceId)
        .where('id', '=', this.ref.id)
        .execute();
      if (changes.length === 0) return;
      const view = await loadMailbox(u.trx, this.ref.workspaceId, this.ref.id);
      if (view) u.emit({ type: 'mailbox.updated', data: { mailbox: view, changes } });
    });
  }
}
