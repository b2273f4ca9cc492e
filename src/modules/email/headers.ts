// Raw header access for the classifiers (classify.ts, auth.ts): header names lowercased, each
// value unfolded (RFC 5322 2.2.3) and trimmed, repeated headers kept in their order (the
// topmost first, as they appear in the message). Values are not decoded: Authentication-Results,
// Auto-Submitted and the like are ASCII by definition.

/** Lowercased header name → its values, topmost first. */
export type MailHeaders = ReadonlyMap<string, readonly string[]>;

const unfold = (value: string): string => value.replace(/\r?\n(?=[ \t])/g, '').trim();

/**
 * Builds MailHeaders from raw header lines as mailparser gives them (`headerLines`: the
 * lowercased key and the whole folded line, "Name: value"), or from a plain record (tests,
 * callers that have headers already split).
 */
export function toMailHeaders(
  input: Iterable<{ key: string; line: string }> | Record<string, string | readonly string[]>,
): MailHeaders {
  const out = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const key = name.trim().toLowerCase();
    const list = out.get(key);
    if (list) list.push(unfold(value));
    else out.set(key, [unfold(value)]);
  };
  if (Symbol.iterator in input) {
    for (const { key, line } of input as Iterable<{ key: string; line: string }>) {
      const colon = line.indexOf(':');
      add(key, colon >= 0 ? line.slice(colon + 1) : '');
    }
  } else {
    for (const [name, value] of Object.entries(input)) {
      for (const v of typeof value === 'string' ? [value] : value) add(name, v);
    }
  }
  return out;
}

/** The first (topmost) value of a header, or undefined. */
export const firstHeader = (headers: MailHeaders, name: string): string | undefined =>
  headers.get(name.toLowerCase())?.[0];
