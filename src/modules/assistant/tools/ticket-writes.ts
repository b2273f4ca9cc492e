// The write tools on one ticket: update_ticket, reply_to_ticket and add_note. None runs when the
// model calls it: `prepare` checks that the person may do it (an agent or above, the ticket
// visible to them) and that the values are valid, and describes exactly what would happen; the
// plan it returns runs only after the person approved, through the tickets module's own writes
// (PATCH /v1/tickets/{id}, POST /v1/tickets/{id}/messages) with their context as it is then,
// recorded with actor type `ai` and the person as actor.user. A reply or note is the person's
// own message (author: the person).
import { type Static, Type } from '@sinclair/typebox';
import { replyOf } from '../../ai/features/output.js';
import { applyFieldValues } from '../../custom-fields/values.js';
import { createMessage } from '../../tickets/messages.js';
import type { PatchInput } from '../../tickets/patch.js';
import { updateTicket } from '../../tickets/service.js';
import {
  refusalsAsToolErrors,
  requireRole,
  rowView,
  StatusArg,
  TicketArg,
  ticketFacts,
  ticketLabel,
  ticketRefOf,
  visibleTicket,
  writerContext,
} from './common.js';
import {
  changeProperties,
  changesFor,
  checkChanges,
  checkStatusRules,
  describeChanges,
  namesAChange,
  patchOf,
} from './ticket-changes.js';
import { type PreviewT, type ToolEnv, ToolError, type WriteTool } from './types.js';

const WRITE = 'change tickets';
const FIELD_KEY = '^[a-z][a-z0-9_]{0,39}$';

// ---------------------------------------------------------------------------------------------
// update_ticket

const UpdateArgs = Type.Object(
  {
    ticket: TicketArg,
    ...changeProperties,
    fields: Type.Optional(
      Type.Record(Type.String({ pattern: FIELD_KEY }), Type.Unknown(), {
        description: 'Custom field values by field key (null clears one), as the API’s fields.',
      }),
    ),
  },
  { additionalProperties: false },
);

interface UpdatePlan {
  ticketId: string;
  number: number;
  patch: PatchInput;
}

export const updateTicketTool: WriteTool<typeof UpdateArgs, UpdatePlan> = {
  kind: 'write',
  name: 'update_ticket',
  description:
    'Propose changes to one ticket: status, priority, severity, assignee, labels to add or remove, custom fields. ' +
    'Nothing changes until the user approves the preview.',
  parameters: UpdateArgs,
  label: (args) => `Updating ${ticketLabel(args.ticket)}`,
  async prepare(env, args) {
    requireRole(env.ctx, 'agent', WRITE);
    const row = await visibleTicket(env, args.ticket);
    const t = rowView(row);
    const checked = await checkChanges(env, args);
    const changes = changesFor(t, checked);
    const patch = patchOf(checked);
    let fieldsAfter = t.fields;
    if (args.fields !== undefined && Object.keys(args.fields).length > 0) {
      const applied = await dryRunFields(env, t.fields, args.fields);
      fieldsAfter = applied.fields;
      for (const c of applied.changes) changes.push({ field: `fields.${c.key}`, from: c.from, to: c.to });
      // Checked by the dry run: the PATCH checks them again.
      if (applied.changes.length > 0) patch.fields = args.fields as PatchInput['fields'];
    } else if (!namesAChange(checked)) {
      throw new ToolError(
        'Name at least one change (status, priority, severity, assignee_id, add_labels, remove_labels, fields).',
      );
    }
    await checkStatusRules(env, t, checked, fieldsAfter);
    if (changes.length === 0) throw new ToolError(`Nothing would change: #${t.number} already has these values.`);
    const what = [describeChanges(checked), ...(patch.fields ? ['custom fields'] : [])].filter(Boolean).join(', ');
    const preview: PreviewT = {
      title: `Update ticket #${t.number}`,
      summary: `#${t.number} “${t.subject}”: ${what}.`,
      changes,
      targets: [ticketRefOf(t)],
      external: false,
    };
    return { preview, plan: { ticketId: t.id, number: t.number, patch }, refs: [ticketRefOf(t)] };
  },
  async execute(env, plan) {
    requireRole(env.ctx, 'agent', WRITE);
    const t = await refusalsAsToolErrors(() => updateTicket(env.deps, writerContext(env), plan.ticketId, plan.patch));
    return { content: { ticket: ticketFacts(t) }, summary: `#${t.number} updated`, refs: [ticketRefOf(t)] };
  },
};

/** The custom field values the change would leave, checked as the PATCH checks them (a read-only transaction). */
async function dryRunFields(env: ToolEnv, before: Record<string, unknown>, input: Record<string, unknown>) {
  const { db } = env.deps.database;
  return refusalsAsToolErrors(() =>
    db
      .transaction()
      .execute((trx) =>
        applyFieldValues(
          { trx, workspaceId: env.ctx.workspaceId, emit: () => {}, afterCommit: () => {} },
          'ticket',
          before,
          input,
          'fields',
        ),
      ),
  );
}

// ---------------------------------------------------------------------------------------------
// reply_to_ticket and add_note

const Body = Type.String({
  minLength: 1,
  maxLength: 20_000,
  description: 'Markdown-like text: paragraphs apart by a blank line, "- " items, links.',
});

const ReplyArgs = Type.Object(
  {
    ticket: TicketArg,
    body: Body,
    status: Type.Optional(StatusArg),
  },
  { additionalProperties: false },
);
const NoteArgs = Type.Object({ ticket: TicketArg, body: Body }, { additionalProperties: false });

interface MessagePlan {
  ticketId: string;
  kind: 'reply' | 'note';
  bodyHtml: string;
  status?: PatchInput['status'];
}

/** The message's HTML as it will be stored, and its text (what the preview shows). */
function bodyOf(markdown: string): { html: string; text: string } {
  const body = replyOf(markdown);
  if (body.text.trim() === '') throw new ToolError('body is empty once unsafe content is removed.');
  return body;
}

async function prepareMessage(
  env: ToolEnv,
  args: { ticket: string | number; body: string; status?: Static<typeof StatusArg> },
  kind: 'reply' | 'note',
) {
  requireRole(env.ctx, 'agent', kind === 'reply' ? 'reply to tickets' : 'add notes');
  const t = rowView(await visibleTicket(env, args.ticket));
  const body = bodyOf(args.body);
  const changes: PreviewT['changes'] = [];
  if (args.status !== undefined && args.status !== t.status) {
    const checked = { status: args.status, add: [], remove: [], exclusiveGroups: new Set<string>() };
    await checkStatusRules(env, t, checked);
    changes.push({ field: 'status', from: t.status, to: args.status });
  }
  const to = t.contact ? (t.contact.name ?? t.contact.email ?? 'the customer') : 'the customer';
  const preview: PreviewT = {
    title: kind === 'reply' ? `Reply to ticket #${t.number}` : `Add a note to ticket #${t.number}`,
    summary:
      kind === 'reply'
        ? `Send a reply to ${to} on #${t.number} “${t.subject}”${changes.length ? `, and set the status to ${args.status}` : ''}.`
        : `Add an internal note (seen by agents only) on #${t.number} “${t.subject}”.`,
    changes,
    targets: [ticketRefOf(t)],
    external: kind === 'reply',
    body: body.text,
  };
  const plan: MessagePlan = {
    ticketId: t.id,
    kind,
    bodyHtml: body.html,
    ...(changes.length > 0 ? { status: args.status } : {}),
  };
  return { preview, plan, refs: [ticketRefOf(t)] };
}

async function executeMessage(env: ToolEnv, plan: MessagePlan) {
  requireRole(env.ctx, 'agent', plan.kind === 'reply' ? 'reply to tickets' : 'add notes');
  const m = await refusalsAsToolErrors(() =>
    createMessage(env.deps, writerContext(env), plan.ticketId, {
      kind: plan.kind,
      body_html: plan.bodyHtml,
      ...(plan.status ? { status: plan.status } : {}),
    }),
  );
  const t = rowView(await visibleTicket(env, plan.ticketId));
  return {
    content: { message_id: m.id, kind: m.kind, delivery_status: m.delivery_status, ticket: ticketFacts(t) },
    summary: plan.kind === 'reply' ? `Reply sent on #${t.number}` : `Note added on #${t.number}`,
    refs: [ticketRefOf(t)],
  };
}

export const replyToTicket: WriteTool<typeof ReplyArgs, MessagePlan> = {
  kind: 'write',
  name: 'reply_to_ticket',
  description:
    'Propose a reply to the customer on a ticket (it reaches the customer: by email, or in the chat), optionally setting the status. ' +
    'Nothing is sent until the user approves the preview.',
  parameters: ReplyArgs,
  label: (args) => `Replying on ${ticketLabel(args.ticket)}`,
  prepare: (env, args) => prepareMessage(env, args, 'reply'),
  execute: executeMessage,
};

export const addNote: WriteTool<typeof NoteArgs, MessagePlan> = {
  kind: 'write',
  name: 'add_note',
  description:
    'Propose an internal note on a ticket (agents only, never sent). Nothing is added until the user approves.',
  parameters: NoteArgs,
  label: (args) => `Adding a note on ${ticketLabel(args.ticket)}`,
  prepare: (env, args) => prepareMessage(env, args, 'note'),
  execute: executeMessage,
};
