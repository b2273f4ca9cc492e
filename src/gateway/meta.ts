// One person's socket on a ticket topic, as presence lists it and as the peer link carries it
// between gateway processes (presence.ts and peers.ts both use it; neither imports the other's).
export const PRESENCE_STATES = ['viewing', 'replying', 'idle'] as const;
export type PresenceState = (typeof PRESENCE_STATES)[number];

export interface Meta {
  phx_ref: string;
  phx_ref_prev?: string;
  user_id: string;
  name: string;
  avatar: string | null;
  state: PresenceState;
  online_at: string;
}
