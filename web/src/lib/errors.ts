// Failures of the API, in words a person can act on: what failed and what to do.

/** What the API answered when it said no, in words a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds until a retry may succeed (429). */
    readonly retryAfter: number | null = null,
    readonly fields: Array<{ location: string; message: string }> = [],
  ) {
    super(message);
  }

  static async from(res: Response, body: unknown): Promise<ApiError> {
    const b = (body ?? {}) as { code?: string; detail?: string; errors?: Array<{ location: string; message: string }> };
    const code = b.code ?? `http_${res.status}`;
    if (res.status === 429) {
      const after = Number(res.headers.get('retry-after') ?? res.headers.get('ratelimit-reset') ?? '');
      const s = Number.isFinite(after) && after > 0 ? Math.ceil(after) : null;
      return new ApiError(
        429,
        code,
        s ? `Too many requests: try again in ${s} seconds.` : 'Too many requests: try again in a minute.',
        s,
      );
    }
    if (res.status >= 500) {
      return new ApiError(res.status, code, `The server failed (${b.detail ?? res.statusText}). Try again.`);
    }
    return new ApiError(res.status, code, b.detail ?? `The request failed (${res.status}).`, null, b.errors ?? []);
  }
}

export const offline = () =>
  new ApiError(0, 'network', 'Could not reach the help desk server. Check the connection and try again.');

export const errorText = (err: unknown): string =>
  err instanceof ApiError ? err.message : err instanceof Error ? err.message : String(err);
