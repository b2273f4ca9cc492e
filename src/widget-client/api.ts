// The widget's HTTP client: the visitor routes of /v1/widget (docs/widget.md), with the visitor
// credential once a session is open. Every failure is an HttpError: status 0 when the request did
// not get an answer the page may read (offline, the service unreachable, or a CORS refusal: a
// website outside allowed_origins gets a 403 without CORS headers, which a page sees as a network
// error).
import type { Article, Attachment, Config, Conversation, Identity, Message, Session } from './types.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds, from Retry-After (429). */
    readonly retryAfter: number | null = null,
    readonly location: string | null = null,
  ) {
    super(message);
  }
}

interface ErrorBody {
  code?: string;
  detail?: string;
  errors?: Array<{ location?: string }>;
}

export class Api {
  token: string | null = null;

  constructor(
    readonly base: string,
    readonly key: string,
  ) {}

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const h: Record<string, string> = { ...headers };
    if (this.token) h.authorization = `Visitor ${this.token}`;
    let payload: BodyInit | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      h['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    let r: Response;
    try {
      r = await fetch(this.base + path, { method, headers: h, body: payload, credentials: 'omit', mode: 'cors' });
    } catch {
      throw new HttpError(0, 'network', navigator.onLine === false ? 'offline' : 'unreachable');
    }
    if (r.status === 204) return undefined as T;
    const text = await r.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!r.ok) {
      const e = (json ?? {}) as ErrorBody;
      const retry = Number(r.headers.get('retry-after'));
      throw new HttpError(
        r.status,
        e.code ?? 'error',
        e.detail ?? `HTTP ${r.status}`,
        Number.isFinite(retry) && retry > 0 ? retry : null,
        e.errors?.[0]?.location ?? null,
      );
    }
    return json as T;
  }

  config(): Promise<Config> {
    return this.call('GET', `/v1/widget/config?key=${encodeURIComponent(this.key)}`);
  }

  async session(visitorToken: string | null, identity: Identity): Promise<Session> {
    const body: Record<string, string> = { key: this.key };
    if (visitorToken) body.visitor_token = visitorToken;
    for (const k of ['user_id', 'user_hash', 'email', 'name', 'avatar_url'] as const) {
      const v = identity[k];
      if (typeof v === 'string' && v !== '') body[k] = v;
    }
    const saved = this.token;
    this.token = null; // the session route takes no credential
    try {
      const s = await this.call<Session>('POST', '/v1/widget/session', body);
      this.token = s.visitor_token;
      return s;
    } catch (err) {
      this.token = saved;
      throw err;
    }
  }

  async conversations(): Promise<Conversation[]> {
    return (await this.call<{ data: Conversation[] }>('GET', '/v1/widget/conversations?limit=50')).data;
  }

  async messages(conversationId: string): Promise<Message[]> {
    const r = await this.call<{ data: Message[] }>(
      'GET',
      `/v1/widget/conversations/${encodeURIComponent(conversationId)}/messages`,
    );
    return r.data;
  }

  startConversation(body: string, attachmentIds: string[], idempotencyKey: string): Promise<Conversation> {
    return this.call(
      'POST',
      '/v1/widget/conversations',
      { body, ...(attachmentIds.length > 0 ? { attachment_ids: attachmentIds } : {}) },
      { 'idempotency-key': idempotencyKey },
    );
  }

  send(conversationId: string, body: string, attachmentIds: string[], idempotencyKey: string): Promise<Message> {
    return this.call(
      'POST',
      `/v1/widget/conversations/${encodeURIComponent(conversationId)}/messages`,
      { body, ...(attachmentIds.length > 0 ? { attachment_ids: attachmentIds } : {}) },
      { 'idempotency-key': idempotencyKey },
    );
  }

  upload(file: File): Promise<Attachment> {
    const form = new FormData();
    form.append('file', file, file.name || 'file');
    return this.call('POST', '/v1/widget/attachments', form);
  }

  async articles(q: string): Promise<Article[]> {
    return (await this.call<{ data: Article[] }>('GET', `/v1/widget/articles?q=${encodeURIComponent(q)}`)).data;
  }
}
