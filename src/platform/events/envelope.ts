// The event envelope (docs/api.md "Events"; EventEnvelope in the OpenAPI document).

export interface EventEnvelope {
  id: string;
  seq: number;
  workspace_id: string;
  type: string;
  visibility: 'agents' | 'public';
  topics: string[];
  data: Record<string, unknown>;
  occurred_at: string;
  /** Not part of the public envelope: the private team whose members (and admins) may see it. */
  team_id?: string | null;
}

/** What a service hands to the outbox; seq, id and time are assigned at commit. */
export interface EventDraft {
  type: string;
  data: Record<string, unknown>;
  visibility?: 'agents' | 'public';
  /** Topics beyond workspace:<wid> (user:<uid>, contact:<wid>:<cid>, ...). */
  topics?: string[];
  /** A private team's record: full event only on the team topic, stand-ins elsewhere. */
  teamId?: string | null;
}

/** The public form (no team_id; topics kept for the gateway, dropped for webhooks). */
export function publicEnvelope(e: EventEnvelope): Omit<EventEnvelope, 'team_id'> {
  return {
    id: e.id,
    seq: e.seq,
    workspace_id: e.workspace_id,
    type: e.type,
    visibility: e.visibility,
    topics: e.topics,
    data: e.data,
    occurred_at: e.occurred_at,
  };
}

/** Same seq and occurred_at, type event.hidden, empty data: keeps a client's seq gapless. */
export function standIn(e: EventEnvelope): Omit<EventEnvelope, 'team_id'> {
  return {
    id: e.id,
    seq: e.seq,
    workspace_id: e.workspace_id,
    type: 'event.hidden',
    visibility: 'agents',
    topics: [`workspace:${e.workspace_id}`],
    data: {},
    occurred_at: e.occurred_at,
  };
}
