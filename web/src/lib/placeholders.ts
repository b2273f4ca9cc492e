// Placeholders in saved replies: `{{customer.first_name}}` and the like. The API stores a saved
// reply's body as it is (it defines no placeholders), so the app defines them: the saved replies
// screen offers this list for insertion (settings/saved-replies-editor.tsx), and the composer fills
// them in when it inserts a saved reply (ticket/composer.tsx), with what it knows of the ticket, its
// customer and the agent. Spaces inside the braces are allowed, and so are the names people type
// from other help desks (contact.* or requester.* for customer.*, user.* or me.* for agent.*). A
// placeholder without a value stays as it is, so the agent sees what to fill in before sending;
// anything else in braces is left alone.

export interface Placeholder {
  token: string;
  /** What it becomes, in words. */
  about: string;
}

export const PLACEHOLDERS: Placeholder[] = [
  { token: '{{customer.name}}', about: "The customer's name" },
  { token: '{{customer.first_name}}', about: "The customer's first name" },
  { token: '{{customer.email}}', about: "The customer's email address" },
  { token: '{{company.name}}', about: "The customer's company" },
  { token: '{{ticket.number}}', about: 'The ticket number' },
  { token: '{{ticket.subject}}', about: "The ticket's subject" },
  { token: '{{agent.name}}', about: 'Your name' },
  { token: '{{agent.first_name}}', about: 'Your first name' },
  { token: '{{agent.email}}', about: 'Your email address' },
  { token: '{{workspace.name}}', about: "The workspace's name" },
];

export interface PlaceholderValues {
  customer?: { name?: string | null; email?: string | null } | null;
  company?: { name?: string | null } | null;
  ticket?: { number?: number; subject?: string } | null;
  agent?: { name?: string | null; email?: string | null } | null;
  workspace?: { name?: string | null } | null;
}

const first = (name: string | null | undefined) => (name ?? '').trim().split(/\s+/)[0] ?? '';
const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const ALIASES: Record<string, string> = { contact: 'customer', requester: 'customer', user: 'agent', me: 'agent' };

/** The text with its placeholders replaced by the values (HTML-escaped when `html`). */
export function fillPlaceholders(text: string, v: PlaceholderValues, opts: { html?: boolean } = {}): string {
  const values: Record<string, string> = {
    'customer.name': v.customer?.name || v.customer?.email || '',
    'customer.first_name': first(v.customer?.name),
    'customer.email': v.customer?.email ?? '',
    'company.name': v.company?.name ?? '',
    'ticket.number': v.ticket?.number !== undefined ? String(v.ticket.number) : '',
    'ticket.subject': v.ticket?.subject ?? '',
    'agent.name': v.agent?.name ?? '',
    'agent.first_name': first(v.agent?.name),
    'agent.email': v.agent?.email ?? '',
    'workspace.name': v.workspace?.name ?? '',
  };
  return text.replace(/\{\{\s*([a-z_]+)\.([a-z_]+)\s*\}\}/gi, (all, scope: string, key: string) => {
    const s = scope.toLowerCase();
    const value = values[`${ALIASES[s] ?? s}.${key.toLowerCase()}`];
    if (!value) return all;
    return opts.html ? escapeHtml(value) : value;
  });
}
