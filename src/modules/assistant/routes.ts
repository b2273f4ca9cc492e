// The assistant's routes (interface.md "Assistant"): signed-in people only (an API key gets 403),
// every member from viewer up, 403 assistant_off unless AI and the assistant are on. A send
// counts towards 30 messages a minute per person (429 past it). Sends and decisions answer JSON,
// or an event stream with `Accept: text/event-stream` (stream.ts).
//
// Idempotency-Key does not apply: a run is a conversation's next turn, not a record to replay.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { overLimit } from '../../platform/http/rate-limit.js';
import { IdParams } from '../../platform/http/schemas.js';
import { InFlight } from '../ai/features/sse.js';
import { requireAssistant } from './gate.js';
import {
  CreateSessionBody,
  DecisionBody,
  RenameBody,
  RunResult,
  SendBody,
  Session,
  SessionDetail,
  SessionList,
  TipList,
} from './schemas.js';
import {
  decide,
  deleteOwnSession,
  getSessionDetail,
  listOwnSessions,
  renameOwnSession,
  sendMessage,
  startSession,
} from './service.js';
import { respondRun } from './stream.js';
import { getTips } from './tips.js';
import { TOOLS } from './tools/index.js';
import type { AssistantTool } from './tools/types.js';

/** Messages a person may send a minute, over all their conversations. */
export const MESSAGES_PER_MINUTE = 30;

const STREAMS =
  ' With `Accept: text/event-stream`: the events session, text, tool (at the start and end of each step), ' +
  'approval, done (status), or error (a problem body; the stream ends).';

export interface AssistantRouteOptions {
  /** The tools offered to the model (tests offer their own). */
  tools?: readonly AssistantTool[];
}

export default async function assistantRoutes(app: App, deps: Deps, opts: AssistantRouteOptions = {}) {
  const tools = () => opts.tools ?? TOOLS;
  const member = { access: access.usersOnly('viewer') };
  const run = { access: access.usersOnly('viewer'), idempotent: false };
  const tags = ['assistant'];
  const inFlight = new InFlight();
  app.addHook('preClose', async () => inFlight.abortAll());

  const messageLimiter = app.createRateLimit({
    max: MESSAGES_PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: (req) => `assistant-messages:${req.ctx.actor.kind === 'member' ? req.ctx.actor.userId : req.ip}`,
  });

  app.get(
    '/v1/assistant/sessions',
    {
      config: member,
      schema: { tags, summary: 'Your conversations with the assistant, newest first', response: { 200: SessionList } },
    },
    async (req) => listOwnSessions(deps, req.ctx),
  );

  app.post(
    '/v1/assistant/sessions',
    {
      config: { ...member, idempotent: false },
      schema: {
        tags,
        summary: 'Start a conversation (titled from its first message unless a title is given)',
        body: CreateSessionBody,
        response: { 201: Session },
      },
    },
    async (req, reply) => {
      const s = await startSession(deps, req.ctx, req.body ?? {});
      reply.code(201).header('location', `/v1/assistant/sessions/${s.id}`);
      return s;
    },
  );

  app.get(
    '/v1/assistant/sessions/:id',
    {
      config: member,
      schema: {
        tags,
        summary: 'A conversation: its transcript and any approval waiting for you',
        params: IdParams,
        response: { 200: SessionDetail },
      },
    },
    async (req) => getSessionDetail(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/assistant/sessions/:id',
    {
      config: member,
      schema: {
        tags,
        summary: 'Rename a conversation',
        params: IdParams,
        body: RenameBody,
        response: { 200: Session },
      },
    },
    async (req) => renameOwnSession(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/assistant/sessions/:id',
    {
      config: member,
      schema: { tags, summary: 'Delete a conversation', params: IdParams, response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await deleteOwnSession(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/assistant/sessions/:id/messages',
    {
      config: run,
      preHandler: async (req, reply) => {
        const r = await messageLimiter(req);
        if (!r.isAllowed && r.isExceeded) {
          throw overLimit(reply, r, `Too many messages to the assistant: at most ${MESSAGES_PER_MINUTE} a minute.`);
        }
      },
      schema: {
        tags,
        summary: `Send a message: the assistant answers, looking things up and proposing changes for your approval.${STREAMS}`,
        params: IdParams,
        body: SendBody,
        response: { 200: RunResult },
      },
    },
    async (req, reply) =>
      respondRun(req, reply, inFlight, (io) => sendMessage(deps, req.ctx, req.params.id, req.body, tools(), io)),
  );

  app.post(
    '/v1/assistant/actions/:id/decision',
    {
      config: run,
      schema: {
        tags,
        summary: `Approve or deny a proposed change with its token; the assistant goes on as after a message.${STREAMS}`,
        params: IdParams,
        body: DecisionBody,
        response: { 200: RunResult },
      },
    },
    async (req, reply) =>
      respondRun(req, reply, inFlight, (io) => decide(deps, req.ctx, req.params.id, req.body, tools(), io)),
  );

  app.get(
    '/v1/assistant/tips',
    {
      config: member,
      schema: { tags, summary: 'Tips for the assistant panel: counts, no model, cost 0', response: { 200: TipList } },
    },
    async (req) => {
      await requireAssistant(deps, req.ctx);
      return { tips: await getTips(deps, req.ctx) };
    },
  );
}
