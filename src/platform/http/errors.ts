// One closed catalogue of error codes with their statuses. Handlers throw these;
// the error handler turns every failure into the spec's body {status, code, detail, errors?}.
// Every code here is sent by some path or named by interface.md for a route still to come
// (marked "Not sent yet": AI and billing); a code neither sends nor names does not belong here.

export const ERROR_CODES = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  /** Not sent yet: the AI features' routes will (interface.md names it). */
  assistant_off: 403,
  /** Not sent yet: the AI features' routes will (interface.md names it). */
  approval_invalid: 403,
  not_found: 404,
  /** An AI route without a provider, or with AI off in the workspace (src/modules/ai/service.ts requireAi). */
  ai_disabled: 404,
  /** Not sent yet: the billing routes will (interface.md names it). */
  billing_disabled: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  /** Not sent yet: the AI features and billing will (interface.md names it). */
  ai_balance_empty: 402,
  /** Not sent yet: the billing routes will (interface.md names it). */
  plan_limit: 402,
  conflict: 409,
  too_many_accounts: 409,
  /** Not sent yet: the billing routes will (interface.md names it). */
  payment_method_required: 409,
  /** Not sent yet: the AI features' routes will (interface.md names it). */
  assistant_busy: 409,
  /** Not sent yet: the AI features' routes will (interface.md names it). */
  approval_not_pending: 409,
  idempotency_in_progress: 409,
  too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  field_required: 422,
  unknown_label: 422,
  unsupported_image: 422,
  image_too_large: 422,
  /** Not sent yet: the billing routes will (interface.md names it). */
  top_up_unavailable: 422,
  /** Not sent yet: the billing routes will (interface.md names it). */
  recharge_too_small: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  /** The language model provider failed (after retries), timed out or answered malformed. */
  ai_unavailable: 502,
  /** Not sent yet: the AI features' routes will (interface.md names it). */
  ai_unsupported: 501,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  location: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.status = ERROR_CODES[code];
  }

  toBody(): ErrorBody {
    return {
      status: this.status,
      code: this.code,
      detail: this.detail,
      ...(this.errors && this.errors.length > 0 ? { errors: this.errors } : {}),
    };
  }
}

export interface ErrorBody {
  status: number;
  code: string;
  detail: string;
  errors?: FieldError[];
}

export const unauthorized = (detail = 'Missing or invalid credentials.') => new ApiError('unauthorized', detail);
export const forbidden = (detail = 'Your role or key scopes do not allow this.') => new ApiError('forbidden', detail);
export const notFound = (detail = 'Not found.') => new ApiError('not_found', detail);
export const conflict = (detail: string) => new ApiError('conflict', detail);
export const badRequest = (detail: string) => new ApiError('bad_request', detail);
export const invalid = (location: string, message: string) =>
  new ApiError('validation_failed', `${location}: ${message}`, [{ location, message }]);
export const tooLarge = (detail: string) => new ApiError('too_large', detail);
