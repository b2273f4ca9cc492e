// The AI features' routes (interface.md "AI"): draft, summary and ask on a ticket, rewrite and
// translate, and an article drafted from a ticket. Access as the contract says (draft, rewrite,
// translate, article draft: agents, keys tickets:write or kb:write; summary and ask: any member,
// keys tickets:read or tickets:write). Checks in this order: access, the body (422), AI available
// (404 ai_disabled), the ticket (404), then the spend gate and the call (runAi).
//
// Idempotency-Key does not apply: these routes make answers, not records (the summary's write is
// a replaceable value, safe to repeat like a PATCH), and a stream cannot be replayed.
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.js';
import type { App } from '../../../platform/http/app-type.js';
import { access } from '../../../platform/http/context.js';
import { forbidden } from '../../../platform/http/errors.js';
import { TicketParams } from '../../tickets/schemas.js';
import { askAboutTicket } from './ask.js';
import { draftReply } from './draft.js';
import { draftArticle } from './kb-draft.js';
import { rewriteText } from './rewrite.js';
import {
  AskAnswer,
  AskBody,
  DraftAnswer,
  DraftBody,
  KbDraftAnswer,
  KbDraftBody,
  RewriteAnswer,
  RewriteBody,
  SummaryAnswer,
  TranslateAnswer,
  TranslateBody,
} from './schemas.js';
import { InFlight, respond } from './sse.js';
import { summarizeTicket } from './summary.js';
import { translateText } from './translate.js';

const STREAMS =
  ' With `Accept: text/event-stream`: `delta` events (the text as the model writes it, before it is sanitized: ' +
  'show it as text) and one `done` event carrying this JSON.';

export default async function aiFeatureRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'tickets:read', 'tickets:write');
  const write = access.member('agent', 'tickets:write');
  const tags = ['ai'];
  const inFlight = new InFlight();
  // Streams in flight end (503 in their stream) when the service shuts down, not 10 s later.
  app.addHook('preClose', async () => inFlight.abortAll());

  /** An article drafted from a ticket reads the ticket: a key needs a tickets scope besides kb:write. */
  const readsTickets = async (req: FastifyRequest) => {
    const scopes = req.ctx?.scopes;
    if (scopes && !scopes.includes('tickets:read') && !scopes.includes('tickets:write')) {
      throw forbidden('This API key needs the scope tickets:read or tickets:write as well.');
    }
  };

  app.post(
    '/v1/tickets/:id/ai/draft',
    {
      config: { access: write, idempotent: false },
      schema: {
        tags,
        summary: `Draft a reply to the customer (not sent, not saved), with the articles it cites.${STREAMS}`,
        params: TicketParams,
        body: DraftBody,
        response: { 200: DraftAnswer },
      },
    },
    async (req, reply) =>
      respond(req, reply, inFlight, true, (io) => draftReply(deps, req.ctx, req.params.id, req.body, io)),
  );

  app.post(
    '/v1/tickets/:id/ai/summary',
    {
      config: { access: read, idempotent: false },
      schema: {
        tags,
        summary: 'Summarise the ticket: stored in custom.ai_summary, published as ticket.updated',
        params: TicketParams,
        response: { 200: SummaryAnswer },
      },
    },
    async (req, reply) =>
      respond(req, reply, inFlight, false, (io) => summarizeTicket(deps, req.ctx, req.params.id, io)),
  );

  app.post(
    '/v1/tickets/:id/ai/ask',
    {
      config: { access: read, idempotent: false },
      schema: {
        tags,
        summary: `Answer a question about the ticket, with the articles it cites.${STREAMS}`,
        params: TicketParams,
        body: AskBody,
        response: { 200: AskAnswer },
      },
    },
    async (req, reply) =>
      respond(req, reply, inFlight, true, (io) => askAboutTicket(deps, req.ctx, req.params.id, req.body, io)),
  );

  app.post(
    '/v1/ai/rewrite',
    {
      config: { access: write, idempotent: false },
      schema: {
        tags,
        summary: `Rewrite HTML in one of six modes, its markup kept.${STREAMS}`,
        body: RewriteBody,
        response: { 200: RewriteAnswer },
      },
    },
    async (req, reply) => respond(req, reply, inFlight, true, (io) => rewriteText(deps, req.ctx, req.body, io)),
  );

  app.post(
    '/v1/ai/translate',
    {
      config: { access: write, idempotent: false },
      schema: {
        tags,
        summary: 'Translate html and/or text to a BCP 47 language, with the language detected',
        body: TranslateBody,
        response: { 200: TranslateAnswer },
      },
    },
    async (req, reply) => respond(req, reply, inFlight, false, (io) => translateText(deps, req.ctx, req.body, io)),
  );

  app.post(
    '/v1/kb/articles/ai/draft',
    {
      config: { access: access.member('agent', 'kb:write'), idempotent: false },
      preValidation: readsTickets,
      schema: {
        tags: ['knowledge-base', ...tags],
        summary: 'Draft a help center article from a solved or closed ticket (not saved)',
        body: KbDraftBody,
        response: { 200: KbDraftAnswer },
      },
    },
    async (req, reply) => respond(req, reply, inFlight, false, (io) => draftArticle(deps, req.ctx, req.body, io)),
  );
}
