// Typed errors of inbound parsing, so that the route and the job can answer without reading
// messages: too_large maps to 413 too_large; malformed means mailparser itself gave up (the
// raw original is still the caller's to keep).

export type InboundMailErrorCode = 'too_large' | 'malformed';

export class InboundMailError extends Error {
  readonly code: InboundMailErrorCode;
  constructor(code: InboundMailErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InboundMailError';
    this.code = code;
  }
}

export const isInboundMailError = (err: unknown): err is InboundMailError => err instanceof InboundMailError;
