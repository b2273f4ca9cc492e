// Failures of the API, in words a person can act on: what failed and what to do.

/** Seconds the answer asks to wait before trying again (Retry-After, else RateLimit-Reset), or null. */
export function retryAfterSeconds(res: Response): number | null {
  const given = res.headers.get('retry-after') ?? res.headers.get('ratelimit-reset');
  if (given === null) return null;
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(given) ? Number(given) : (Date.parse(given) - Date.now()) / 1000;
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : null;
}

/** What the API answered when it said no, in words a person can act on. */
export class ApiError extends Error {
  /** When a retry may succeed (429: now + Retry-After), in milliseconds since the epoch. */
  readonly retryAt: number | null;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds until a retry may succeed (429), as the answer said. */
    readonly retryAfter: number | null = null,
    readonly fields: Array<{ location: string; message: string }> = [],
  ) {
    super(message);
    this.retryAt = retryAfter === null ? null : Date.now() + retryAfter * 1000;
  }

  static async from(res: Response, body: unknown): Promise<ApiError> {
    const b = (body ?? {}) as { code?: string; detail?: string; errors?: Array<{ location: string; message: string }> };
    const code = b.code ?? `http_${res.status}`;
    if (res.status === 429) {
      const s = retryAfterSeconds(res);
      return new ApiError(429, code, tooMany(s), s);
    }
    if (res.status >= 500) {
      return new ApiError(res.status, code, `The server failed (${b.detail ?? res.statusText}). Try again.`);
    }
    return new ApiError(res.status, code, b.detail ?? `The request failed (${res.status}).`, null, b.errors ?? []);
  }
}

const tooMany = (seconds: number | null) =>
  seconds === null
    ? 'Too many requests: try again in a minute.'
    : `Too many requests: try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`;

export const offline = () =>
  new ApiError(0, 'network', 'Could not reach the help desk server. Check the connection and try again.');

/**
 * The error in words. A 429 says the seconds left now (not when it was answered), so a screen that
 * renders it again shows the countdown moving (ui/page.tsx ErrorNote renders it every second).
 */
export const errorText = (err: unknown): string => {
  if (err instanceof ApiError && err.status === 429 && err.retryAt !== null) {
    const left = Math.ceil((err.retryAt - Date.now()) / 1000);
    return left > 0 ? tooMany(left) : 'Too many requests: try again now.';
  }
  return err instanceof ApiError ? err.message : err instanceof Error ? err.message : String(err);
};

/** Whether the error says the server could not be reached (a request, or a screen's code file). */
export const isUnreachable = (err: unknown): boolean =>
  (err instanceof ApiError && err.status === 0) ||
  (err instanceof Error &&
    /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|Unable to preload CSS/.test(
      err.message,
    ));
