// DELETE /v1/tickets/{id}/ai/suggestions/{field}: an agent dismisses a pending AI suggestion.
// The field is one of the five (else 422); a ticket without that suggestion answers 404. The
// removal is a change of the ticket's `custom` (one ticket.updated, by the caller). A PATCH that
// sets the field removes its suggestion in the tickets module (patch.ts dropSuggestions).
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ApiError, invalid } from '../../platform/http/errors.js';
import { applyPatch } from '../tickets/patch.js';
import { lockVisibleTicket } from '../tickets/service.js';
import { SUGGESTION_FIELDS, type SuggestionField } from './apply.js';

export async function dismissSuggestion(deps: Deps, ctx: RequestContext, param: string, field: string): Promise<void> {
  await deps.writer.run(ctx.workspaceId, async (u) => {
    // The ticket first: another workspace's ticket is 404 whatever the field.
    const before = await lockVisibleTicket(u, ctx, param);
    if (!(SUGGESTION_FIELDS as string[]).includes(field)) {
      throw invalid('path.field', `must be one of ${SUGGESTION_FIELDS.join(', ')}`);
    }
    const pending = (before.custom as Record<string, unknown> | null)?.ai_suggestions;
    if (pending === null || typeof pending !== 'object' || !(field in pending)) {
      throw new ApiError('not_found', `The ticket has no pending ${field} suggestion.`);
    }
    const left = { ...(pending as Record<string, unknown>) };
    delete left[field as SuggestionField];
    await applyPatch(
      deps,
      u,
      ctx,
      before,
      { custom: { ai_suggestions: Object.keys(left).length > 0 ? left : null } },
      { keepSuggestions: true },
    );
  });
}
