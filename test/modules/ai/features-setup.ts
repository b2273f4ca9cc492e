// Setup shared by the AI features' tests (test/modules/ai/features-*.test.ts): a service whose
// instance provider is a stand-in (OpenAI's or Anthropic's wire format), tickets with a customer's
// messages (through the chat widget), articles, the usage rows, what the stand-in received, and an
// event-stream client.
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import {
  type AnthropicStandIn,
  type OpenAiStandIn,
  type Recorded,
  startAnthropicStandIn,
  startOpenAiStandIn,
} from '../../support/ai-standin/index.js';
import { uniqueEmail } from '../../support/builders.js';
import { type ReqOpts, type RuntimeOptions, type Service, startService, type Tenant } from '../../support/helpers.js';

export type Vendor = 'openai' | 'anthropic';
export const VENDORS: Vendor[] = ['openai', 'anthropic'];
const KEY = 'sk-standin-features-0000';

/**
 * One file's service on a stand-in of `vendor`; every answer a test queues must be used. `env` and
 * `opts` add to the service's settings (the assistant's tests give their own tools).
 */
export function featuresSuite(vendor: Vendor, env: Record<string, string> = {}, opts: RuntimeOptions = {}) {
  let ai: OpenAiStandIn | AnthropicStandIn;
  let svc: Service;
  beforeAll(async () => {
    ai = vendor === 'openai' ? await startOpenAiStandIn({ keys: [KEY] }) : await startAnthropicStandIn({ keys: [KEY] });
    svc = await startService(
      {
        AI_PROVIDER: vendor,
        AI_BASE_URL: ai.url,
        AI_API_KEY: KEY,
        ...(vendor === 'openai' ? { AI_MODEL: 'gpt-4.1', AI_FAST_MODEL: 'gpt-4.1-mini' } : {}),
        ...env,
      },
      { jobs: false, ai: { timeoutMs: 5000, maxRetries: 0 }, ...opts },
    );
  });
  afterAll(async () => {
    await svc?.stop();
    await ai?.stop();
  });
  beforeEach(() => ai.reset());
  // Every answer a test queued was asked for.
  afterEach(() => expect(ai.pending()).toBe(0));
  return {
    get svc() {
      return svc;
    },
    get ai() {
      return ai;
    },
    vendor,
  };
}

export type Suite = ReturnType<typeof featuresSuite>;

/** The system prompt and the user message of a chat request, in either wire format. */
export function promptOf(req: Recorded): { system: string; user: string } {
  const b = req.body;
  const text = (c: unknown): string =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c.map((p: { text?: string }) => p.text ?? '').join('')
        : JSON.stringify(c ?? '');
  if (typeof b.system === 'string' || Array.isArray(b.system)) {
    return { system: text(b.system), user: b.messages.map((m: { content: unknown }) => text(m.content)).join('\n') };
  }
  const msgs: Array<{ role: string; content: unknown }> = b.messages;
  return {
    system: msgs
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => text(m.content))
      .join('\n'),
    user: msgs
      .filter((m) => m.role === 'user')
      .map((m) => text(m.content))
      .join('\n'),
  };
}

/** A chat widget visitor's conversation: a chat ticket whose first message is the customer's. */
export async function customerTicket(
  svc: Service,
  t: Tenant,
  body: string,
  name = 'Jane Customer',
): Promise<{ id: string; contactId: string; visitor: ReqOpts }> {
  const key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key as string;
  const s = await svc.api.post('/v1/widget/session', { key, name, email: uniqueEmail('jane') });
  expect(s.status, s.text).toBe(200);
  const visitor = { headers: { authorization: `Visitor ${s.body.visitor_token}` } };
  const conv = await svc.api.post('/v1/widget/conversations', { body }, visitor);
  expect(conv.status, conv.text).toBe(201);
  return { id: conv.body.id, contactId: s.body.contact.id, visitor };
}

/** An agent's reply (or note) on the ticket. */
export async function agentMessage(svc: Service, t: Tenant, id: string, html: string, kind = 'reply') {
  const r = await svc.api.post(`/v1/tickets/${id}/messages`, { kind, body_html: html }, t.as);
  expect(r.status, r.text).toBe(201);
}

/** An article of the workspace (published unless said). */
export async function article(svc: Service, t: Tenant, title: string, text: string, status = 'published') {
  const r = await svc.api.post('/v1/kb/articles', { title, body_html: `<p>${text}</p>`, status }, t.as);
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; slug: string; title: string };
}

/** The workspace's AI usage rows, oldest first. */
export const usageOf = (svc: Service, t: Tenant) =>
  svc.rt.deps.database.db
    .selectFrom('ai_usage')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

export interface StreamEvent {
  event: string;
  data: string;
}

/**
 * A POST asking for an event stream: the response's status and headers once they arrive, the
 * events as they arrive (`next()`), and `abort()` to go away mid-stream.
 */
export async function openStream(svc: Service, path: string, body: unknown, as: ReqOpts) {
  const control = new AbortController();
  const r = await fetch(svc.url + path, {
    method: 'POST',
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${as.token}`,
      'svc-workspace': as.workspace!,
    },
    body: JSON.stringify(body),
    signal: control.signal,
  });
  const reader = r.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: StreamEvent[] = [];
  let ended = false;
  const parse = () => {
    let at = buffer.indexOf('\n\n');
    while (at >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: ') || l === 'data:')
        .map((l) => l.replace(/^data: ?/, ''))
        .join('\n');
      queue.push({ event, data });
      at = buffer.indexOf('\n\n');
    }
  };
  /** The next event, or null once the stream ended. */
  const next = async (): Promise<StreamEvent | null> => {
    while (queue.length === 0 && !ended) {
      const { done, value } = await reader.read();
      if (done) ended = true;
      else {
        buffer += decoder.decode(value, { stream: true });
        parse();
      }
    }
    return queue.shift() ?? null;
  };
  const rest = async (): Promise<StreamEvent[]> => {
    const out: StreamEvent[] = [];
    for (let e = await next(); e; e = await next()) out.push(e);
    return out;
  };
  /** The bytes of the stream still to come, as written (before any next()). */
  const raw = async (): Promise<string> => {
    let out = buffer;
    for (let c = await reader.read(); !c.done; c = await reader.read())
      out += decoder.decode(c.value, { stream: true });
    ended = true;
    return out;
  };
  return { status: r.status, headers: r.headers, next, rest, raw, abort: () => control.abort() };
}
