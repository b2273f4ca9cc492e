// The gateway's topics (docs/realtime.md "Topics"), parsed. Ids are lowercase UUIDs, exactly as
// the API returns them (topics are compared as strings, as Phoenix clients match them).

export type Topic =
  | { kind: 'workspace'; wid: string }
  | { kind: 'team'; wid: string; teamId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'ticket'; wid: string; ticketId: string }
  | { kind: 'contact'; wid: string; contactId: string };

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const PATTERN = new RegExp(`^(workspace|team|user|ticket|contact):(${UUID})(?::(${UUID}))?$`);

const UUID_ONLY = new RegExp(`^${UUID}$`);
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_ONLY.test(s);

export function parseTopic(topic: string): Topic | null {
  const m = PATTERN.exec(topic);
  if (!m) return null;
  const [, kind, a, b] = m as unknown as [string, string, string, string | undefined];
  switch (kind) {
    case 'workspace':
      return b === undefined ? { kind, wid: a } : null;
    case 'user':
      return b === undefined ? { kind, userId: a } : null;
    case 'team':
      return b === undefined ? null : { kind, wid: a, teamId: b };
    case 'ticket':
      return b === undefined ? null : { kind, wid: a, ticketId: b };
    case 'contact':
      return b === undefined ? null : { kind, wid: a, contactId: b };
  }
  return null;
}

/** The workspace a topic belongs to (user topics belong to the socket's workspace). */
export const workspaceOf = (t: Topic, socketWid: string): string => (t.kind === 'user' ? socketWid : t.wid);
