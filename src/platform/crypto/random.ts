import { randomBytes, timingSafeEqual } from 'node:crypto';
import { v4 as uuidv4, v7 as uuidv7 } from 'uuid';

/** Random ids: v7 (time-ordered) keeps btree inserts local and sorts by creation. */
export const newId = (): string => uuidv7();
export const randomId = (): string => uuidv4();

/** `prefix` + 32 random bytes, base64url. */
export const randomSecret = (prefix: string, bytes = 32): string => prefix + randomBytes(bytes).toString('base64url');

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID_RE.test(v);
