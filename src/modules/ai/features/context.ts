// What a ticket gives the model (docs/ai.md "What each feature sends to the model"): the ticket
// (subject, status, priority, channel), its thread (replies and notes, oldest first, each cut to
// MESSAGE_CHARS, the whole kept under THREAD_CHARS: the first message and as many of the latest as
// fit, the ones between named as left out), and, for features that answer the customer, the
// contact (name, email, custom field values) and their company (name, domain, custom field
// values). Everything here is written by customers or agents: it is rendered as data blocks.
import type { Deps } from '../../../deps.js';
import type { RequestContext, ServiceContext } from '../../../platform/http/context.js';
import {
  type BriefMessage,
  type BriefPerson,
  type TicketBrief,
  type TicketReader,
  ticketBrief,
} from '../../tickets/brief.js';
import type { AiCaller } from '../run.js';
import { type ReadyAi, requireAi } from '../service.js';
import { dataBlock } from './prompts.js';

/** Characters of one message the model sees (a long email is cut, "…" marking the cut). */
export const MESSAGE_CHARS = 6_000;
/** Characters of the whole thread the model sees (about 8,000 tokens). */
export const THREAD_CHARS = 32_000;
/** Characters of a record's custom field values, as JSON. */
const FIELDS_CHARS = 2_000;

export interface ThreadEntry {
  /** Position in the whole thread, from 1. */
  n: number;
  kind: 'reply' | 'note';
  from: 'customer' | 'agent' | 'system';
  /** Who wrote it, as the thread names them (a customer's name is their own text). */
  name: string;
  at: string;
  /** False when mail from the customer failed the sender checks (treat as unverified). */
  verified: boolean;
  text: string;
}

export type Ticket = Omit<TicketBrief, 'thread' | 'contact'>;

export interface TicketContext {
  ticket: Ticket;
  thread: ThreadEntry[];
  /** Messages between the first and the latest left out to keep within THREAD_CHARS. */
  omitted: number;
  /** The text of the newest message from the customer (searching articles), or null. */
  lastCustomerText: string | null;
  contact: Omit<BriefPerson, 'company'> | null;
  company: BriefPerson['company'];
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function entryOf(m: BriefMessage, n: number): ThreadEntry {
  const from = m.direction === 'inbound' ? 'customer' : m.author_type === 'system' ? 'system' : 'agent';
  const name =
    from === 'customer'
      ? (m.contact?.name ?? (m.from_name || m.contact?.email) ?? 'Customer')
      : (m.user_name ??
        (m.author_type === 'api' ? 'Integration' : m.author_type === 'ai' ? m.from_name || 'Assistant' : 'System'));
  return {
    n,
    kind: m.kind,
    from,
    name,
    at: m.created_at,
    verified: !m.auth_failed,
    text: cut(m.body_text.trim(), MESSAGE_CHARS),
  };
}

/** The first entry, and the latest ones that fit with it in `budget` characters. */
export function trimThread(all: ThreadEntry[], budget: number): { kept: ThreadEntry[]; omitted: number } {
  if (all.length === 0) return { kept: [], omitted: 0 };
  const size = (e: ThreadEntry) => e.text.length + e.name.length + 120;
  const [first, ...rest] = all;
  let used = size(first!);
  const tail: ThreadEntry[] = [];
  for (let i = rest.length - 1; i >= 0; i--) {
    const e = rest[i]!;
    if (used + size(e) > budget && tail.length > 0) break;
    used += size(e);
    tail.unshift(e);
  }
  return { kept: [first!, ...tail], omitted: rest.length - tail.length };
}

/**
 * The two checks every ticket feature starts with, in their order (AI available: 404
 * ai_disabled; the ticket visible: 404), and the ticket's context (`people`: the contact and
 * company too, for features that answer the customer). The settings and the ticket are read
 * together: one statement each (tickets/brief.ts reads the ticket, its thread and its people).
 */
export async function aiAndTicket(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  opts: { people: boolean },
): Promise<{ ai: ReadyAi; context: TicketContext }> {
  const [ai, brief] = await Promise.allSettled([
    requireAi(deps, ctx.workspaceId),
    // Twice a message's share: its text is trimmed before it is cut.
    ticketBrief(deps.database.db, ctx, param, { textChars: MESSAGE_CHARS * 2, people: opts.people }),
  ]);
  if (ai.status === 'rejected') throw ai.reason;
  if (brief.status === 'rejected') throw brief.reason;
  return { ai: ai.value, context: contextOf(brief.value) };
}

/** The ticket's context as `reader` may see it (404 as aiAndTicket answers it), without the AI check. */
export async function ticketContext(
  deps: Deps,
  reader: TicketReader,
  param: string,
  opts: { people: boolean },
): Promise<TicketContext> {
  const brief = await ticketBrief(deps.database.db, reader, param, {
    textChars: MESSAGE_CHARS * 2,
    people: opts.people,
  });
  return contextOf(brief);
}

function contextOf(brief: TicketBrief): TicketContext {
  const { thread, contact, ...ticket } = brief;
  const entries = thread.map((m, i) => entryOf(m, i + 1));
  const { kept, omitted } = trimThread(entries, THREAD_CHARS);
  const lastCustomer = [...entries].reverse().find((e) => e.from === 'customer' && e.kind === 'reply');
  const { company, ...person } = contact ?? { company: null };
  return {
    ticket,
    thread: kept,
    omitted,
    lastCustomerText: lastCustomer?.text ?? null,
    contact: contact ? (person as Omit<BriefPerson, 'company'>) : null,
    company: company ?? null,
  };
}

const fieldsText = (fields: Record<string, unknown>) =>
  Object.keys(fields).length === 0 ? 'none' : cut(JSON.stringify(fields), FIELDS_CHARS);

/** The ticket and its people as data blocks. */
function headBlocks(c: TicketContext): string[] {
  const t = c.ticket;
  const out = [
    dataBlock(
      'customer_data',
      { kind: 'ticket', number: Number(t.number), status: t.status, priority: t.priority, channel: t.channel },
      `Subject: ${t.subject}`,
    ),
  ];
  if (c.contact) {
    const p = c.contact;
    out.push(
      dataBlock(
        'customer_data',
        { kind: 'customer' },
        [`Name: ${p.name ?? '(none)'}`, `Email: ${p.email ?? '(none)'}`, `Fields: ${fieldsText(p.fields)}`].join('\n'),
      ),
    );
  }
  if (c.company) {
    const co = c.company;
    out.push(
      dataBlock(
        'customer_data',
        { kind: 'company' },
        [`Name: ${co.name}`, `Domain: ${co.domain ?? '(none)'}`, `Fields: ${fieldsText(co.fields)}`].join('\n'),
      ),
    );
  }
  return out;
}

/** The thread as data blocks, oldest first, with a line where messages were left out. */
function threadBlocks(c: TicketContext): string[] {
  const out: string[] = [];
  c.thread.forEach((e, i) => {
    out.push(
      dataBlock(
        'customer_data',
        {
          kind: e.kind === 'note' ? 'note' : 'message',
          n: e.n,
          from: e.from,
          at: e.at,
          ...(e.verified ? {} : { verified: 'false' }),
        },
        `${e.name}:\n${e.text}`,
      ),
    );
    if (i === 0 && c.omitted > 0) out.push(`(${c.omitted} messages between the first and the latest are left out.)`);
  });
  if (c.thread.length === 0) out.push('(The ticket has no messages yet.)');
  return out;
}

/** Everything the ticket gives the model, as the start of the user message. */
export const ticketBlocks = (c: TicketContext): string => [...headBlocks(c), ...threadBlocks(c)].join('\n\n');

/** Who a feature's call is metered to: the member, or no one for an API key. */
export const callerOf = (ctx: RequestContext): AiCaller => ({
  workspaceId: ctx.workspaceId,
  userId: ctx.actor.kind === 'member' ? ctx.actor.userId : null,
});

/** The AI acting for the caller (what it writes is recorded with actor type `ai`). */
export const aiActing = (ctx: RequestContext, model: string): ServiceContext => ({
  actor: { kind: 'ai', model, onBehalfOf: ctx.actor.kind === 'member' ? ctx.actor.userId : null },
});
