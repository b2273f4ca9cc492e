// The typed client of the service's public HTTP API: types generated from /v1/openapi.json
// (openapi-typescript, `npm run web:types`), calls through openapi-fetch. Every call carries the
// session's access token and the selected workspace (session.ts), and a 401 is retried once after
// a refresh; a 429 waits for its Retry-After and is sent again (rate-limit.ts). Failures become
// ApiError, whose message says what failed and what to do; whether the server answered at all is
// noted (reachable.ts), so that what failed while it was away is tried again when it is back.
import createClient from 'openapi-fetch';
import type { paths } from '../api.gen';
import { ApiError, offline } from './errors';
import { sendWithinLimit } from './rate-limit';
import { noteReachable } from './reachable';
import { authorize, refreshAfter401 } from './session';

export { ApiError, errorText } from './errors';

export type {
  Activity,
  Me,
  Message,
  Schemas,
  Ticket,
  TicketCounts,
  TicketStatus,
  View,
  WorkspaceRef,
} from './schemas';

/**
 * fetch with the session's credentials; a 401 refreshes the session once and tries again, a 429
 * waits as the answer says and tries again.
 */
async function authFetch(request: Request): Promise<Response> {
  try {
    const res = await sendWithinLimit(async () => {
      const res = await fetch(await authorize(request.clone()));
      if (res.status === 401 && (await refreshAfter401())) return fetch(await authorize(request.clone()));
      return res;
    });
    noteReachable(true);
    return res;
  } catch (err) {
    if (err instanceof ApiError) {
      if (err.status === 0) noteReachable(false); // the refresh before it could not reach the server
      throw err;
    }
    // Given up by the caller (a screen that went away): not the server's fault.
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    noteReachable(false);
    throw offline();
  }
}

export const api = createClient<paths>({ baseUrl: globalThis.location?.origin ?? '', fetch: authFetch });

/** The answer's data, or an ApiError. */
export async function ok<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) throw await ApiError.from(response, error);
  return data as T;
}
