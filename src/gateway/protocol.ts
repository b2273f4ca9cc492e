// Phoenix Channels, JSON serializer version 2 (vsn=2.0.0): every message is a JSON array
// [join_ref, ref, topic, event, payload]. What the official `phoenix` client sends and expects.
import * as ws from 'ws';

/** Largest frame a client may send (bigger ones close the socket with 1009). */
export const MAX_PAYLOAD = 64 * 1024;

export type Ref = string | number | null;

export interface Frame {
  joinRef: Ref;
  ref: Ref;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
}

const isRef = (v: unknown): v is Ref =>
  v === null || (typeof v === 'string' && v.length <= 64) || (typeof v === 'number' && Number.isSafeInteger(v));

/** The frame, or null when the text is not a well-formed v2 message (the socket is then closed). */
export function decodeFrame(text: string): Frame | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 5) return null;
  const [joinRef, ref, topic, event, payload] = v as unknown[];
  if (!isRef(joinRef) || !isRef(ref)) return null;
  if (typeof topic !== 'string' || topic.length === 0 || topic.length > 200) return null;
  if (typeof event !== 'string' || event.length === 0 || event.length > 64) return null;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return null;
  return { joinRef, ref, topic, event, payload: payload as Record<string, unknown> };
}

/** One message, encoded for one socket (replies, presence_state). */
export function encodeFrame(joinRef: Ref, ref: Ref, topic: string, event: string, payload: unknown): string {
  return JSON.stringify([joinRef, ref, topic, event, payload]);
}

/**
 * A broadcast, encoded once for every socket of a topic, down to the WebSocket frame: the
 * payload is JSON already (an envelope is stringified once per variant and shared by every
 * topic it goes to), and the frame header is built once by `ws`'s own framer. A socket then
 * costs one write of the same bytes (Conn.sendWire), not a re-framing and a two-part write.
 */
export interface WireFrame {
  /** The whole unmasked text frame: header and payload. */
  readonly wire: Buffer;
}

// `ws` exports its framer (Sender.frame, public in ws's source); @types/ws does not declare it.
interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
}
type Framer = (data: Buffer, o: FrameOptions) => Buffer[];
const frameText: Framer = (() => {
  const sender = (ws as unknown as { Sender?: { frame?: Framer } }).Sender;
  if (typeof sender?.frame !== 'function') throw new Error('ws no longer exports Sender.frame');
  return sender.frame.bind(sender);
})();
const TEXT_FRAME: FrameOptions = { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false };

export function broadcastFrame(topic: string, event: string, payloadJson: string): WireFrame {
  const text = Buffer.from(`[null,null,${JSON.stringify(topic)},${JSON.stringify(event)},${payloadJson}]`);
  return { wire: Buffer.concat(frameText(text, TEXT_FRAME)) };
}

export const reply = (status: 'ok' | 'error', response: Record<string, unknown> = {}) => ({ status, response });

/** WebSocket close codes the gateway uses (docs/realtime.md lists them for client authors). */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  binary: 1003,
  badFrame: 1007,
  sessionRevoked: 4001,
  removed: 4003,
  heartbeatTimeout: 4008,
  teamsChanged: 4009,
  apiKeyDeleted: 4010,
} as const;
