// What the automation builder offers: the API's triggers, fields, operators and actions in words,
// and the workspace's own choices (custom fields, labels, people, teams, mailboxes) from their
// data hooks.
import { useCustomFields } from '../../../data/custom-fields';
import { useMailboxes } from '../../../data/mailboxes';
import { useMembers } from '../../../data/members';
import { useTags } from '../../../data/tags';
import { useTeams } from '../../../data/teams';
import type { Schemas } from '../../../lib/api';
import { useWorkspace } from '../../../lib/context';
import { fieldError } from '../../../ui/form';

type Automation = Schemas['Automation'];
export type Condition = Automation['conditions'][number];
export type Action = Automation['actions'][number];
export type Trigger = Automation['trigger'];
type CustomField = Schemas['CustomField'];

export const TRIGGERS: Array<[Trigger, string]> = [
  ['ticket_created', 'A ticket is created'],
  ['customer_replied', 'The customer replies'],
  ['agent_replied', 'An agent replies'],
  ['ticket_updated', 'A ticket is updated'],
];
export const triggerText = (t: string) => TRIGGERS.find(([v]) => v === t)?.[1] ?? t;

export const ENUMS: Record<string, Array<[string, string]>> = {
  channel: [
    ['email', 'Email'],
    ['chat', 'Chat'],
    ['api', 'API'],
    ['portal', 'Portal'],
  ],
  priority: [
    ['low', 'Low'],
    ['normal', 'Normal'],
    ['high', 'High'],
    ['urgent', 'Urgent'],
  ],
  severity: [
    ['sev1', 'Sev 1'],
    ['sev2', 'Sev 2'],
    ['sev3', 'Sev 3'],
    ['sev4', 'Sev 4'],
    ['none', 'None'],
  ],
  status: [
    ['open', 'Open'],
    ['pending', 'Pending'],
    ['on_hold', 'On hold'],
    ['solved', 'Solved'],
    ['closed', 'Closed'],
  ],
  sentiment: [
    ['positive', 'Positive'],
    ['neutral', 'Neutral'],
    ['negative', 'Negative'],
    ['frustrated', 'Frustrated'],
    ['none', 'Not known'],
  ],
};

export const BASE_FIELDS: Array<[string, string]> = [
  ['subject', 'Subject'],
  ['body', 'Message text'],
  ['from_email', 'Sender’s email'],
  ['channel', 'Channel'],
  ['mailbox_id', 'Mailbox'],
  ['priority', 'Priority'],
  ['severity', 'Severity'],
  ['status', 'Status'],
  ['tag', 'Labels'],
  ['sentiment', 'Sentiment'],
  ['ai_decide', 'AI decides (a yes/no question)'],
];

export const OP_TEXT: Record<string, string> = {
  contains: 'contains',
  not_contains: 'does not contain',
  equals: 'is',
  not_equals: 'is not',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  any: 'is any of',
  all: 'has all of',
  none: 'is none of',
  set: 'is set',
  not_set: 'is empty',
};

/** The custom field operators per type (equals / not_equals stand for eq / ne). */
export const FIELD_OPS: Record<string, string[]> = {
  text: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  long_text: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  url: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  email: ['equals', 'not_equals', 'contains', 'not_contains', 'set', 'not_set'],
  number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  date: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  checkbox: ['equals', 'not_equals', 'set', 'not_set'],
  select: ['any', 'equals', 'not_equals', 'none', 'set', 'not_set'],
  user: ['any', 'equals', 'not_equals', 'none', 'set', 'not_set'],
  multi_select: ['any', 'all', 'none', 'equals', 'not_equals', 'set', 'not_set'],
};

export const ACTIONS: Array<[string, string]> = [
  ['add_tag', 'Add a label'],
  ['remove_tag', 'Remove a label'],
  ['set_status', 'Set the status'],
  ['set_priority', 'Set the priority'],
  ['set_severity', 'Set the severity'],
  ['assign_user', 'Assign to a person'],
  ['assign_team', 'Assign to a team'],
  ['send_reply', 'Send a reply to the customer'],
  ['add_note', 'Add an internal note'],
  ['set_field', 'Set a custom field'],
  ['mark_spam', 'Mark as spam'],
  ['ai_triage', 'Triage with AI'],
];

// ---------------------------------------------------------------------------------------------
// The data the builder offers as choices.

export function useChoices() {
  const ws = useWorkspace();
  const fields = useCustomFields(ws);
  const tags = useTags(ws);
  const members = useMembers(ws);
  const teams = useTeams(ws);
  const mailboxes = useMailboxes(ws);
  const live = (fields.data ?? []).filter((f) => !f.archived);
  return {
    ticketFields: live.filter((f) => f.entity === 'ticket'),
    contactFields: live.filter((f) => f.entity === 'contact'),
    tags: (tags.data ?? []).filter((t) => !t.archived && t.applies_to.includes('tickets')),
    members: members.data ?? [],
    teams: teams.data ?? [],
    mailboxes: mailboxes.data?.data ?? [],
  };
}
export type Choices = ReturnType<typeof useChoices>;

export function customOf(field: string, c: Choices): CustomField | undefined {
  if (field.startsWith('contact.field.')) return c.contactFields.find((f) => f.key === field.slice(14));
  if (field.startsWith('field.')) return c.ticketFields.find((f) => f.key === field.slice(6));
  return undefined;
}

export function opsOf(field: string, c: Choices): string[] {
  if (field === 'subject' || field === 'body' || field === 'from_email')
    return ['contains', 'not_contains', 'equals', 'not_equals'];
  if (field === 'tag') return ['contains', 'not_contains', 'equals', 'not_equals'];
  if (field === 'ai_decide') return ['gt', 'lt'];
  const custom = customOf(field, c);
  if (custom) return FIELD_OPS[custom.type] ?? ['equals', 'not_equals'];
  return ['equals', 'not_equals'];
}

/** An error about a whole list (body.conditions) rather than one entry. */
export function FieldNote({ error, name }: { error: unknown; name: string }) {
  const m = fieldError(error, name);
  return m ? <p className="field-error">{m}</p> : null;
}
