// The widget's state and what changes it: the configuration, the visitor's session (its token kept
// in localStorage per widget key, so a reopened tab is the same visitor with the same
// conversations), the conversations and their messages (over HTTP, then live from the socket),
// unread replies, typing, who is online, uploads, sending, article suggestions, and the host
// page's API (open, close, identify, on). The UI (ui.tsx) renders `state` and calls the methods.
import { Api, HttpError } from './api.js';
import { type Connection, Live, type LiveEvent } from './live.js';
import type { Agent, Article, Attachment, Config, Conversation, Identity, Message, Session } from './types.js';

export type View = { name: 'home' } | { name: 'thread'; id: string | null };

/** A message on its way (or that could not go): shown in the thread until the server has it. */
export interface Pending {
  localId: string;
  conversationId: string | null;
  body: string;
  attachments: Attachment[];
  idempotencyKey: string;
  failed: string | null;
}

export interface Upload {
  localId: string;
  name: string;
  attachment: Attachment | null;
  error: string | null;
}

export interface State {
  /** loading: the configuration is on its way; hidden: nothing is shown (refused, unknown key). */
  phase: 'loading' | 'ready' | 'hidden';
  config: Config | null;
  open: boolean;
  view: View;
  session: Session | null;
  conversations: Conversation[] | null;
  messages: Record<string, Message[]>;
  pending: Pending[];
  /** Conversation id → agent messages not seen yet. */
  unread: Record<string, number>;
  /** Conversation id → who is typing there, until when. */
  typing: Record<string, { name: string; until: number }>;
  online: Agent[];
  connection: Connection | 'idle';
  /** What went wrong last, said for people (role=alert). */
  error: string | null;
  /** The visitor must give an email before the first message (require_email). */
  askEmail: boolean;
  uploads: Upload[];
  suggestions: Article[];
}

export type WidgetEvent = 'message' | 'open' | 'close' | 'unread' | 'ready';
type Listener = (payload: unknown) => void;

const TYPING_SHOWN_MS = 5000;
const TYPING_PUSH_EVERY_MS = 2500;

const uid = (): string =>
  typeof crypto !== 'undefined' && 'randomUUID' in crypto
    ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

/** An error said for the visitor. */
export function describe(err: unknown): string {
  if (err instanceof HttpError) {
    if (err.status === 0) {
      return err.message === 'offline'
        ? 'You are offline. Check your connection and try again.'
        : 'The chat service cannot be reached right now. Try again in a moment.';
    }
    if (err.status === 429) {
      return `Too many messages at once. Try again in ${err.retryAfter ?? 60} seconds.`;
    }
    if (err.status === 413) return 'That file is too large to send.';
    if (err.status >= 500) return `Something went wrong on our side (error ${err.status}). Try again in a moment.`;
    return err.message;
  }
  return 'Something went wrong. Try again.';
}

export class Controller {
  state: State = {
    phase: 'loading',
    config: null,
    open: false,
    view: { name: 'home' },
    session: null,
    conversations: null,
    messages: {},
    pending: [],
    unread: {},
    typing: {},
    online: [],
    connection: 'idle',
    error: null,
    askEmail: false,
    uploads: [],
    suggestions: [],
  };
  readonly api: Api;
  private identity: Identity = {};
  private live: Live | null = null;
  private sessionOpening: Promise<Session> | null = null;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly views = new Set<() => void>();
  private readonly seen = new Set<string>();
  private lastTypingPush = 0;
  private searchSeq = 0;
  private searchTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(base: string, key: string) {
    this.api = new Api(base, key);
  }

  private get storageKey(): string {
    return `helpdesk-widget:${this.api.key}`;
  }

  private storedToken(): string | null {
    try {
      return localStorage.getItem(this.storageKey);
    } catch {
      return null; // storage blocked (privacy settings): a visitor for this page only
    }
  }

  private storeToken(token: string | null): void {
    try {
      if (token) localStorage.setItem(this.storageKey, token);
      else localStorage.removeItem(this.storageKey);
    } catch {
      // as above
    }
  }

  // --- Rendering and host-page events ----------------------------------------------------------

  subscribe(fn: () => void): () => void {
    this.views.add(fn);
    return () => this.views.delete(fn);
  }

  private set(patch: Partial<State>): void {
    this.state = { ...this.state, ...patch };
    for (const fn of this.views) fn();
  }

  on(event: string, fn: Listener): () => void {
    const set = this.listeners.get(event) ?? new Set<Listener>();
    this.listeners.set(event, set);
    set.add(fn);
    return () => this.off(event, fn);
  }

  off(event: string, fn: Listener): void {
    this.listeners.get(event)?.delete(fn);
  }

  private emit(event: WidgetEvent, payload: unknown): void {
    for (const fn of this.listeners.get(event) ?? []) {
      try {
        fn(payload);
      } catch (err) {
        console.error('HelpdeskWidget: a listener failed', err);
      }
    }
  }

  unreadCount(): number {
    return Object.values(this.state.unread).reduce((a, b) => a + b, 0);
  }

  // --- Start ---------------------------------------------------------------------------------

  async init(): Promise<void> {
    let config: Config | null = null;
    for (const wait of [0, 2000, 5000]) {
      if (wait) await new Promise((r) => setTimeout(r, wait));
      try {
        config = await this.api.config();
        break;
      } catch (err) {
        // 403 (this site is not allowed) and 404 (unknown key, widget off) are answers: stop.
        if (err instanceof HttpError && err.status !== 0 && err.status < 500) break;
      }
    }
    if (!config) {
      console.warn(
        'HelpdeskWidget: the chat widget could not load its settings. Check data-key, that the widget is ' +
          "enabled, and that this website's origin is among the widget's allowed origins.",
      );
      this.set({ phase: 'hidden' });
      return;
    }
    this.set({ phase: 'ready', config });
    this.emit('ready', { workspace_name: config.workspace_name });
    // A returning visitor (or a signed-in one): connect now, so replies show as unread.
    if (this.storedToken() || this.identity.user_id) await this.ensureSession().catch(() => {});
  }

  // --- The session and the socket ---------------------------------------------------------------

  /** The visitor's session: resumed from localStorage, or a new visitor. */
  ensureSession(): Promise<Session> {
    if (this.state.session) return Promise.resolve(this.state.session);
    if (!this.sessionOpening) {
      this.sessionOpening = this.openSession().finally(() => {
        this.sessionOpening = null;
      });
    }
    return this.sessionOpening;
  }

  private async openSession(extra: Identity = {}): Promise<Session> {
    const identity = { ...this.identity, ...extra };
    const token = this.storedToken();
    let s: Session;
    try {
      s = await this.api.session(token, identity);
    } catch (err) {
      // The stored visitor is gone (revoked, another workspace): start over as a new visitor.
      if (!(err instanceof HttpError && err.status === 401 && token)) throw err;
      this.storeToken(null);
      s = await this.api.session(null, identity);
    }
    const before = this.state.session;
    this.storeToken(s.visitor_token);
    this.set({ session: s });
    if (!before || before.topic !== s.topic) {
      // Another contact (a first session, or a verified identity of someone else): start over.
      this.live?.stop();
      this.seen.clear();
      this.set({ conversations: null, messages: {}, unread: {}, pending: [], view: { name: 'home' } });
      this.live = this.newLive();
      this.live.start(s);
      await this.loadConversations();
    }
    return s;
  }

  private newLive(): Live {
    return new Live({
      event: (e) => this.onEvent(e),
      typing: (p) => {
        this.set({
          typing: {
            ...this.state.typing,
            [p.ticket_id]: { name: p.user.name ?? 'Someone', until: Date.now() + TYPING_SHOWN_MS },
          },
        });
        setTimeout(() => this.set({}), TYPING_SHOWN_MS + 50);
      },
      presence: (online) => this.set({ online }),
      status: (connection) => this.set({ connection }),
      resync: () => void this.reload(),
      refresh: async () => {
        let s: Session;
        try {
          s = await this.api.session(this.state.session?.visitor_token ?? this.storedToken(), this.identity);
        } catch (err) {
          this.ended(err);
          throw err;
        }
        this.storeToken(s.visitor_token);
        this.set({ session: s });
        // Messages may have been missed while away before the first join: reload what is shown.
        return s;
      },
    });
  }

  /**
   * The service ended the visitor's session (the socket closed, and a new session was refused):
   * 401, the visitor signed out or their contact was deleted: start over as a new visitor when
   * they open the chat again; 404, the widget was turned off: show nothing. Anything else
   * (offline, a restart) is tried again.
   */
  private ended(err: unknown): void {
    if (!(err instanceof HttpError) || (err.status !== 401 && err.status !== 404)) return;
    this.live?.stop();
    this.live = null;
    this.seen.clear();
    if (err.status === 401) this.storeToken(null);
    this.set({
      session: null,
      conversations: null,
      messages: {},
      unread: {},
      pending: [],
      online: [],
      view: { name: 'home' },
      connection: 'idle',
      ...(err.status === 404 ? { phase: 'hidden' as const, open: false } : {}),
    });
  }

  async identify(identity: Identity): Promise<void> {
    this.identity = { ...this.identity, ...identity };
    if (this.state.phase !== 'ready') return; // init() opens the session with it
    if (this.state.session || this.identity.user_id) await this.openSession().catch((err) => this.fail(err));
  }

  // --- Data ----------------------------------------------------------------------------------

  /** The list's load in flight: open() waits for it before choosing what to show. */
  private listing: Promise<void> | null = null;

  private loadConversations(): Promise<void> {
    const load = (async () => {
      try {
        const conversations = await this.api.conversations();
        this.set({ conversations });
      } catch (err) {
        this.fail(err);
      }
    })();
    this.listing = load;
    return load;
  }

  private async loadMessages(id: string): Promise<void> {
    try {
      const list = await this.api.messages(id);
      for (const m of list) this.seen.add(m.id);
      this.set({ messages: { ...this.state.messages, [id]: list } });
    } catch (err) {
      this.fail(err);
    }
  }

  private async reload(): Promise<void> {
    await this.loadConversations();
    const v = this.state.view;
    if (v.name === 'thread' && v.id) await this.loadMessages(v.id);
  }

  private onEvent(e: LiveEvent): void {
    if (e.type !== 'message.created') return;
    const m = (e.data as { message?: Message }).message;
    if (!m || this.seen.has(m.id)) return;
    this.seen.add(m.id);
    const id = m.conversation_id;
    const messages = this.state.messages[id];
    const patch: Partial<State> = {};
    if (messages) patch.messages = { ...this.state.messages, [id]: [...messages, m] };
    const known = this.state.conversations?.some((c) => c.id === id);
    if (known) {
      patch.conversations = this.state.conversations!.map((c) =>
        c.id === id ? { ...c, last_message_at: m.created_at } : c,
      );
    }
    const v = this.state.view;
    const looking = this.state.open && v.name === 'thread' && v.id === id && document.visibilityState !== 'hidden';
    if (m.author.type !== 'contact') {
      if (!looking) patch.unread = { ...this.state.unread, [id]: (this.state.unread[id] ?? 0) + 1 };
      const typing = { ...this.state.typing };
      delete typing[id];
      patch.typing = typing;
    }
    this.set(patch);
    if (!known) void this.loadConversations();
    this.emit('message', m);
    if (patch.unread) this.emit('unread', { count: this.unreadCount() });
  }

  private fail(err: unknown): void {
    this.set({ error: describe(err) });
  }

  dismissError(): void {
    this.set({ error: null });
  }

  // --- What the visitor does -----------------------------------------------------------------

  open(): void {
    if (this.state.phase !== 'ready') return;
    if (!this.state.open) {
      this.set({ open: true });
      this.emit('open', null);
      // A conversation solved meanwhile now offers its rating link: the list says so.
      if (this.state.session && this.state.conversations !== null) void this.loadConversations();
    }
    this.markRead();
    void this.ensureSession()
      .then(() => this.listing)
      .then(() => {
        // A first visit without conversations goes straight to writing one.
        if (this.state.view.name === 'home' && this.state.conversations?.length === 0) this.newConversation();
      })
      .catch((err) => this.fail(err));
  }

  close(): void {
    if (!this.state.open) return;
    this.set({ open: false });
    this.emit('close', null);
  }

  toggle(): void {
    if (this.state.open) this.close();
    else this.open();
  }

  home(): void {
    this.set({ view: { name: 'home' }, suggestions: [], askEmail: false });
    void this.loadConversations();
  }

  showThread(id: string): void {
    this.set({ view: { name: 'thread', id }, suggestions: [], askEmail: false });
    this.markRead();
    void this.loadMessages(id);
  }

  newConversation(): void {
    const c = this.state.config;
    const email = this.state.session?.contact.email;
    this.set({
      view: { name: 'thread', id: null },
      suggestions: [],
      askEmail: c?.require_email === true && !email,
    });
  }

  private markRead(): void {
    const v = this.state.view;
    if (!this.state.open || v.name !== 'thread' || !v.id || !this.state.unread[v.id]) return;
    const unread = { ...this.state.unread };
    delete unread[v.id];
    this.set({ unread });
    this.emit('unread', { count: this.unreadCount() });
  }

  async giveEmail(email: string): Promise<boolean> {
    try {
      await this.ensureSession();
      await this.openSession({ email });
      this.set({ askEmail: false, error: null });
      return true;
    } catch (err) {
      this.fail(err);
      return false;
    }
  }

  /** The visitor types: typing for the agents, article suggestions for a new question. */
  typed(text: string): void {
    const v = this.state.view;
    if (v.name !== 'thread') return;
    if (v.id) {
      const now = Date.now();
      if (text !== '' && now - this.lastTypingPush > TYPING_PUSH_EVERY_MS) {
        this.lastTypingPush = now;
        this.live?.typing(v.id);
      }
      return;
    }
    if (!this.state.config?.help_center_url) return;
    if (this.searchTimer) clearTimeout(this.searchTimer);
    const q = text.trim();
    if (q.length < 3) {
      this.searchSeq++;
      if (this.state.suggestions.length > 0) this.set({ suggestions: [] });
      return;
    }
    this.searchTimer = setTimeout(() => void this.suggest(q), 300);
  }

  private async suggest(q: string): Promise<void> {
    const seq = ++this.searchSeq;
    try {
      await this.ensureSession();
      const suggestions = await this.api.articles(q.slice(0, 200));
      if (seq === this.searchSeq) this.set({ suggestions });
    } catch {
      // Suggestions are a help, not a need: nothing to say when they fail.
    }
  }

  async attach(files: File[]): Promise<void> {
    for (const file of files) {
      const upload: Upload = { localId: uid(), name: file.name || 'file', attachment: null, error: null };
      this.set({ uploads: [...this.state.uploads, upload] });
      const update = (u: Partial<Upload>) =>
        this.set({ uploads: this.state.uploads.map((x) => (x.localId === upload.localId ? { ...x, ...u } : x)) });
      try {
        await this.ensureSession();
        update({ attachment: await this.api.upload(file) });
      } catch (err) {
        update({ error: describe(err) });
      }
    }
  }

  removeUpload(localId: string): void {
    this.set({ uploads: this.state.uploads.filter((u) => u.localId !== localId) });
  }

  uploading(): boolean {
    return this.state.uploads.some((u) => !u.attachment && !u.error);
  }

  /** Sends what the composer holds; false when it stays in the composer (an email is needed first). */
  async send(text: string): Promise<boolean> {
    const v = this.state.view;
    if (v.name !== 'thread') return false;
    const body = text.trim();
    const attachments = this.state.uploads.flatMap((u) => (u.attachment ? [u.attachment] : []));
    if (body === '' || this.uploading()) return false;
    const p: Pending = {
      localId: uid(),
      conversationId: v.id,
      body,
      attachments,
      idempotencyKey: uid(),
      failed: null,
    };
    this.set({ pending: [...this.state.pending, p], uploads: [], suggestions: [], error: null });
    await this.deliver(p);
    return true;
  }

  retry(localId: string): void {
    const p = this.state.pending.find((x) => x.localId === localId);
    if (p) void this.deliver(p);
  }

  private async deliver(p: Pending): Promise<void> {
    const updatePending = (u: Partial<Pending>) =>
      this.set({ pending: this.state.pending.map((x) => (x.localId === p.localId ? { ...x, ...u } : x)) });
    const drop = () => this.set({ pending: this.state.pending.filter((x) => x.localId !== p.localId) });
    updatePending({ failed: null });
    const ids = p.attachments.map((a) => a.id);
    try {
      await this.ensureSession();
      if (p.conversationId === null) {
        const c = await this.api.startConversation(p.body, ids, p.idempotencyKey);
        this.set({ conversations: [c, ...(this.state.conversations ?? []).filter((x) => x.id !== c.id)] });
        drop();
        const v = this.state.view;
        if (v.name === 'thread' && v.id === null) this.set({ view: { name: 'thread', id: c.id } });
        await this.loadMessages(c.id);
        return;
      }
      const m = await this.api.send(p.conversationId, p.body, ids, p.idempotencyKey);
      drop();
      if (m.conversation_id !== p.conversationId) {
        // The conversation was closed: the message started a follow-up one.
        await this.loadConversations();
        this.showThread(m.conversation_id);
        return;
      }
      if (!this.seen.has(m.id)) {
        this.seen.add(m.id);
        const list = this.state.messages[m.conversation_id] ?? [];
        this.set({ messages: { ...this.state.messages, [m.conversation_id]: [...list, m] } });
      }
    } catch (err) {
      if (err instanceof HttpError && err.status === 422 && err.location === 'body.email') {
        // require_email: ask for it; the message waits, and goes with Retry once it is given.
        this.set({ askEmail: true });
        updatePending({ failed: 'We need your email address first.' });
        return;
      }
      updatePending({ failed: describe(err) });
    }
  }
}
