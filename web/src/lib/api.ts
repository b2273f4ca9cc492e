// The typed client of the service's public HTTP API: types generated from /v1/openapi.json
// (openapi-typescript, `npm run web:types`), calls through openapi-fetch. Every call carries the
// session's access token and the selected workspace (session.ts), and a 401 is retried once after
// a refresh. Failures become ApiError, whose message says what failed and what to do.
import createClient from 'openapi-fetch';
import type { components, paths } from '../api.gen';
import { ApiError, offline } from './errors';
import { authorize, refreshAfter401 } from './session';

export { ApiError, errorText } from './errors';

export type Schemas = components['schemas'];
export type Ticket = Schemas['Ticket'];
export type Message = Schemas['Message'];
export type Activity = Schemas['Activity'];
export type View = Schemas['View'];
export type TicketStatus = Ticket['status'];
export type TicketCounts = paths['/v1/tickets/counts']['get']['responses'][200]['content']['application/json'];
export type Me = paths['/v1/me']['get']['responses'][200]['content']['application/json'];
export type WorkspaceRef = Me['workspaces'][number];

/** fetch with the session's credentials; a 401 refreshes the session once and tries again. */
async function authFetch(request: Request): Promise<Response> {
  const retry = request.clone();
  let res: Response;
  try {
    res = await fetch(await authorize(request));
    if (res.status === 401 && (await refreshAfter401())) res = await fetch(await authorize(retry));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw offline();
  }
  return res;
}

export const api = createClient<paths>({ baseUrl: globalThis.location?.origin ?? '', fetch: authFetch });

/** The answer's data, or an ApiError. */
export async function ok<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) throw await ApiError.from(response, error);
  return data as T;
}
