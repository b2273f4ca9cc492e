// Unique violations as the API's 409: a write that races another one on a unique key (a name,
// an email, a shortcut) is refused by the index, and the caller gets `conflict` naming what
// is taken instead of a 500.
import { conflict } from '../http/errors.js';

/** PostgreSQL's unique_violation. */
export const isUniqueViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === '23505';

/** Runs work; a unique violation of one of `keys` (index name → message) becomes 409 conflict. */
export async function uniqueOrConflict<T>(keys: Record<string, string>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) {
      const e = err as { constraint?: unknown; message?: unknown };
      const text = `${String(e.constraint ?? '')} ${String(e.message ?? '')}`;
      const hit = Object.entries(keys).find(([k]) => text.includes(k));
      throw conflict(hit ? hit[1] : 'A record with these values already exists.');
    }
    throw err;
  }
}
