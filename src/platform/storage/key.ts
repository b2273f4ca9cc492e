// Storage keys are made by the service (never taken from user input) and checked again by
// every backend: `/`-separated segments of letters, digits, `.`, `_` and `-`, none starting
// with a dot, so a key can never climb out of its root or name a temporary file.
const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?:\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$/;

export function checkKey(key: string): string {
  if (!KEY_RE.test(key)) throw new Error('invalid storage key');
  return key;
}
