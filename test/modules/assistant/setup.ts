// Setup shared by the assistant's tests (test/modules/assistant/*.test.ts): a service whose
// instance provider is a stand-in (OpenAI's or Anthropic's wire format), offering two small tools
// of the tests' own (a read and a write on tickets, through the tickets service with the person's
// permissions), the workspace with the assistant on, and helpers to send and stream.
import { Type } from '@sinclair/typebox';
import { expect } from 'vitest';
import {
  type AssistantTool,
  type ReadTool,
  ToolError,
  type WriteTool,
} from '../../../src/modules/assistant/tools/types.js';
import { findVisibleTicket, updateTicket } from '../../../src/modules/tickets/service.js';
import { makeTicket } from '../../support/builders.js';
import { newTenant, type ReqOpts, type Service, type Tenant } from '../../support/helpers.js';
import { featuresSuite, openStream, type Vendor } from '../ai/features-setup.js';

export { VENDORS, type Vendor } from '../ai/features-setup.js';

/** How many times the test write tool ran (per ticket id). */
export const executions = new Map<string, number>();

const TicketArg = Type.Object(
  { ticket: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

/** A read tool: a ticket the person may see, by id or number. */
export const lookupTicket: ReadTool<typeof TicketArg> = {
  kind: 'read',
  name: 'lookup_ticket',
  description: 'A ticket by id or number.',
  parameters: TicketArg,
  label: (a) => `Reading ticket ${a.ticket}`,
  async run(env, args) {
    const t = await findVisibleTicket(env.deps.database.db, env.ctx, args.ticket).catch(() => {
      throw new ToolError(`No ticket ${args.ticket} that you may see.`);
    });
    return {
      content: { id: t.id, number: Number(t.number), subject: t.subject, status: t.status },
      summary: `Ticket #${t.number}`,
      refs: [{ kind: 'ticket', id: t.id, label: t.subject, number: Number(t.number) }],
    };
  },
};

const StatusArgs = Type.Object(
  {
    ticket: Type.String({ minLength: 1, maxLength: 64 }),
    status: Type.Union([Type.Literal('open'), Type.Literal('pending'), Type.Literal('solved')]),
  },
  { additionalProperties: false },
);

/** A write tool: a ticket's status, after approval. */
export const setStatus: WriteTool<typeof StatusArgs, { id: string; status: string }> = {
  kind: 'write',
  name: 'set_status',
  description: "Changes a ticket's status.",
  parameters: StatusArgs,
  label: (a) => `Setting ticket ${a.ticket} to ${a.status}`,
  async prepare(env, args) {
    const t = await findVisibleTicket(env.deps.database.db, env.ctx, args.ticket).catch(() => {
      throw new ToolError(`No ticket ${args.ticket} that you may see.`);
    });
    const ref = { kind: 'ticket', id: t.id, label: t.subject, number: Number(t.number) };
    return {
      preview: {
        title: `Set ticket #${t.number} to ${args.status}`,
        summary: `Status ${t.status} → ${args.status}`,
        changes: [{ field: 'status', from: t.status, to: args.status }],
        targets: [ref],
        external: false,
      },
      plan: { id: t.id, status: args.status },
      refs: [ref],
    };
  },
  async execute(env, plan) {
    executions.set(plan.id, (executions.get(plan.id) ?? 0) + 1);
    const t = await updateTicket(env.deps, env.ctx, plan.id, { status: plan.status as 'open' });
    return {
      content: { id: t.id, status: t.status },
      summary: `Ticket #${t.number} is ${t.status}`,
      refs: [{ kind: 'ticket', id: t.id, label: t.subject, number: Number(t.number) }],
    };
  },
};

export const TEST_TOOLS = [lookupTicket, setStatus];

/** One file's service on a stand-in of `vendor` (ai/features-setup.ts); every answer a test queues must be used. */
export function assistantSuite(
  vendor: Vendor,
  env: Record<string, string> = {},
  /** The tools offered: the tests' own (default), or null for the assistant's real TOOLS. */
  tools: readonly AssistantTool[] | null = TEST_TOOLS,
) {
  return featuresSuite(vendor, env, tools ? { assistant: { tools } } : {});
}

export type Suite = ReturnType<typeof assistantSuite>;

/** A workspace with the assistant on. */
export async function assistantTenant(svc: Service): Promise<Tenant> {
  const t = await newTenant(svc.api);
  const r = await svc.api.patch('/v1/ai/settings', { assistant: true }, t.as);
  expect(r.status, r.text).toBe(200);
  return t;
}

export async function newSession(svc: Service, as: ReqOpts, title?: string): Promise<string> {
  const r = await svc.api.post('/v1/assistant/sessions', title === undefined ? {} : { title }, as);
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}

export const send = (svc: Service, as: ReqOpts, session: string, text: string, context?: Record<string, unknown>) =>
  svc.api.post(`/v1/assistant/sessions/${session}/messages`, { text, ...(context ? { context } : {}) }, as);

export const decideOn = (svc: Service, as: ReqOpts, actionId: string, decision: string, token: string) =>
  svc.api.post(`/v1/assistant/actions/${actionId}/decision`, { decision, token }, as);

/** A stream's events, parsed (data as JSON). */
export async function streamed(svc: Service, path: string, body: unknown, as: ReqOpts) {
  const s = await openStream(svc, path, body, as);
  const events = (await s.rest()).map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
  return { status: s.status, headers: s.headers, events };
}

export const ticketOf = (svc: Service, t: Tenant, subject = 'Refund for order 1234') =>
  makeTicket(svc.api, t, { subject });

export { openStream };
