// Gateway processes talk to each other (presence, typing) on a NATS subject of their own, so
// that these frequent, unstored notices never mix with events or with the bus's control
// notices. Without NATS_URL there is one process and no peers.
import { connect, type NatsConnection } from 'nats';
import type { Meta } from './meta.js';

export const PEER_SUBJECT = 'svc.gateway';

export type PeerMessage =
  /** A node's presence changed on one topic. */
  | { t: 'diff'; node: string; topic: string; joins: Meta[]; leaves: Meta[] }
  /** A node's whole presence (answer to hello); `to` null = for everyone. */
  | { t: 'state'; node: string; to: string | null; topics: Record<string, Meta[]> }
  /** A node started or met an unknown node: the others answer with their state. */
  | { t: 'hello'; node: string }
  /** A node is alive (every few seconds); a silent node's presence is dropped. */
  | { t: 'beat'; node: string }
  /** A node stops: its presence goes at once. */
  | { t: 'bye'; node: string }
  /** A message for every socket of a topic (typing, customer_typing), except one person's. */
  | { t: 'push'; node: string; topic: string; event: string; payload: unknown; except_user: string | null };

export interface PeerLink {
  send(msg: PeerMessage): void;
  close(): Promise<void>;
}

export async function openPeers(
  natsUrl: string,
  node: string,
  onMessage: (msg: PeerMessage) => void,
  onError: (err: unknown) => void,
): Promise<PeerLink> {
  const nc: NatsConnection = await connect({
    servers: natsUrl,
    name: `helpdesk-gateway-${node.slice(0, 8)}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const sub = nc.subscribe(PEER_SUBJECT);
  (async () => {
    for await (const m of sub) {
      let msg: PeerMessage;
      try {
        msg = JSON.parse(decoder.decode(m.data)) as PeerMessage;
      } catch {
        continue;
      }
      if (!msg || typeof msg !== 'object' || msg.node === node) continue;
      try {
        onMessage(msg);
      } catch (err) {
        onError(err);
      }
    }
  })().catch(onError);
  return {
    send(msg) {
      try {
        nc.publish(PEER_SUBJECT, encoder.encode(JSON.stringify(msg)));
      } catch (err) {
        onError(err);
      }
    },
    async close() {
      await nc.drain().catch(() => {});
    },
  };
}
