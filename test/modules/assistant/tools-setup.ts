// Shared by the assistant tools' tests (tools-*.test.ts) and the tips' test: a ToolEnv made from a
// real signed-in member's request context, resolved from their access token and workspace the
// way the auth hook resolves it (role and private teams from the database), so a tool runs with
// exactly the permissions a request of theirs would have. No HTTP loop: the tools are called
// directly, as the assistant's loop calls them.
import { expect } from 'vitest';
import { type ToolEnv, ToolError } from '../../../src/modules/assistant/tools/types.js';
import { userResolver } from '../../../src/modules/auth/resolver.js';
import type { RequestContext } from '../../../src/platform/http/context.js';
import type { ReqOpts, Service } from '../../support/helpers.js';

export const MODEL = 'standin-model';

/** The member's request context, as the auth hook makes it for their next request. */
export async function contextOf(svc: Service, who: { as: ReqOpts } | ReqOpts): Promise<RequestContext> {
  const as = 'as' in who ? who.as : who;
  const resolved = await userResolver(svc.rt.deps)(as.token!, as.workspace ?? null, '127.0.0.1');
  if (!resolved?.member) throw new Error('not a signed-in member of that workspace');
  return resolved.member;
}

export async function envOf(svc: Service, who: { as: ReqOpts } | ReqOpts): Promise<ToolEnv> {
  return { deps: svc.rt.deps, ctx: await contextOf(svc, who), sessionId: 'test-session', model: MODEL };
}

/** The ToolError a tool's call fails with (any other failure fails the test). */
export async function toolError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the call should fail with a ToolError').toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}
