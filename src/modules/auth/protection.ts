// Sign-in protection, part two: the human-verification challenge (Cloudflare Turnstile or
// hCaptcha, CHALLENGE=...). The failed-attempt limits are sign-in-guard.ts.
import type { Deps } from '../../deps.js';
import { ApiError, invalid } from '../../platform/http/errors.js';

export { accountKey, ipBucket } from './sign-in-guard.js';

// --- Human verification --------------------------------------------------------------------

const VERIFY_URLS = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
} as const;

const VERIFY_TIMEOUT_MS = 5_000;

/**
 * Checks `challenge_token` with the configured provider (nothing to do with CHALLENGE=none).
 * A missing or refused token is 422 validation_failed at `field` (body.challenge_token, or
 * query.challenge_token on the OAuth start); a provider that
 * cannot be reached is 503 unavailable (fail closed: no sign-in without a verified token).
 */
export async function verifyChallenge(
  deps: Deps,
  token: string | undefined,
  ip: string,
  field = 'body.challenge_token',
): Promise<void> {
  const { kind, secret, verifyUrl } = deps.config.challenge;
  if (kind === 'none') return;
  if (token === undefined || token === '') throw invalid(field, 'is required');
  const form = new URLSearchParams({ secret: secret ?? '', response: token, remoteip: ip });
  let outcome: { success?: unknown; 'error-codes'?: unknown };
  try {
    const r = await fetch(verifyUrl ?? VERIFY_URLS[kind], {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
      redirect: 'error',
    });
    if (!r.ok) throw new Error(`status ${r.status}`);
    outcome = (await r.json()) as typeof outcome;
  } catch (err) {
    deps.log.warn({ provider: kind, err: (err as Error).message }, 'challenge verification unavailable');
    throw new ApiError('unavailable', 'The human check could not be verified right now. Try again.');
  }
  if (outcome?.success !== true) {
    const codes = Array.isArray(outcome?.['error-codes'])
      ? (outcome['error-codes'] as unknown[]).filter((c) => typeof c === 'string').slice(0, 5)
      : [];
    deps.log.info({ provider: kind, codes }, 'challenge refused');
    throw invalid(field, 'did not pass the human check');
  }
}
