// Who may use the assistant (interface.md "Assistant"): signed-in people only (the routes declare
// access.usersOnly: an API key gets 403), in a workspace whose AI is on (a provider, the
// workspace's AI switch) and whose setting ai.assistant is on; 403 assistant_off otherwise.
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { type ReadyAi, resolveAi } from '../ai/service.js';
import { workspaceSettings } from '../workspace/service.js';

export const assistantOff = () =>
  new ApiError(
    'assistant_off',
    'The assistant is off in this workspace: it needs AI on for the instance and the workspace, and the setting ai.assistant on.',
  );

/** The person behind a request (the routes admit signed-in people only). */
export function personOf(ctx: RequestContext): { userId: string; sessionId: string } {
  if (ctx.actor.kind !== 'member') throw new ApiError('forbidden', 'The assistant is for signed-in people only.');
  return { userId: ctx.actor.userId, sessionId: ctx.actor.sessionId };
}

/** The workspace's AI, when the assistant may run; 403 assistant_off otherwise. */
export async function requireAssistant(deps: Deps, ctx: RequestContext): Promise<ReadyAi> {
  personOf(ctx);
  const [ai, settings] = await Promise.all([
    resolveAi(deps, ctx.workspaceId),
    workspaceSettings(deps, ctx.workspaceId),
  ]);
  if (!ai.target || !ai.switchedOn || !settings?.ai.assistant) throw assistantOff();
  return ai as ReadyAi;
}
