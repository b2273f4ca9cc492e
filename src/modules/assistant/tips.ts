// GET /v1/assistant/tips (interface.md "Assistant", Tips): counts, no model, cost 0.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import type { Tip } from './schemas.js';

export async function getTips(_deps: Deps, _ctx: RequestContext): Promise<Static<typeof Tip>[]> {
  return [];
}
