// Small rules for values every module's writes and lists share: the free-form `custom` object
// and ILIKE patterns taken literally.
import { invalid } from './errors.js';

const CUSTOM_MAX_BYTES = 16 * 1024;

/**
 * The stored custom object after a write: on create the input itself, on PATCH the input merged
 * into the stored object; a null value removes its key either way. 16 KB at most (422).
 */
export function mergeCustom(
  before: Record<string, unknown>,
  input: Record<string, unknown>,
  location = 'body.custom',
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...before };
  for (const [k, v] of Object.entries(input)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  if (Object.keys(out).length > 100) throw invalid(location, 'must have at most 100 keys');
  if (Buffer.byteLength(JSON.stringify(out)) > CUSTOM_MAX_BYTES) throw invalid(location, 'must be at most 16 KB');
  return out;
}

/** `%q%` for ILIKE, with the pattern characters of q taken literally. */
export const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
