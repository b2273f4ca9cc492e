// /csat/{token}: the page a solved ticket's customer opens from the rating request: five choices
// and a comment box, sent as a plain form (no script), saved through the same rate() as
// POST /v1/csat/{token}. `?score=N` preselects a choice. The look is the help center's (its
// stylesheet in the default colours: the page is the same whether the help center is on or
// not); personal, so never cached.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';
import { pageCsp, pageErrors, plainPage, readForms, sendPage } from '../../platform/http/pages.js';
import { stylesheetOf } from '../help-center/look.js';
import { baseStylesheet, renderPage } from '../help-center/render.js';
import { CsatTokenParams } from './schemas.js';
import { CSAT_SCALE, rate, ratingOf } from './service.js';

const DEFAULT_COLOR = '#1d4ed8';
const LABELS = ['', 'Very unhappy', 'Unhappy', 'Neutral', 'Happy', 'Very happy'];
/** The score a link or a form names, as a number: whether it is on the scale is rate()'s rule. */
const scoreOf = (v: unknown): number | null => (typeof v === 'string' && /^-?\d{1,6}$/.test(v) ? Number(v) : null);
/** A link's `?score=` preselects a choice only when it names one. */
const choiceOf = (v: unknown): number | null => {
  const n = scoreOf(v);
  return n !== null && n >= CSAT_SCALE.min && n <= CSAT_SCALE.max ? n : null;
};

export default async function csatPageRoutes(app: App, deps: Deps): Promise<void> {
  const csp = pageCsp(deps.config.publicUrl);
  const sheet = () => stylesheetOf(baseStylesheet(), DEFAULT_COLOR);
  const cssPath = () => `/csat/assets/csat.${sheet().hash}.css`;

  const send = (reply: FastifyReply, status: number, body: string) => sendPage(reply, status, body, csp);

  const form = (
    token: string,
    workspace: string,
    r: { number: number; subject: string },
    o: {
      score: number | null;
      comment: string | null;
      error?: string;
    },
  ) =>
    renderPage('csat', {
      state: 'form',
      title: 'How did we do?',
      workspace,
      css: cssPath(),
      action: `/csat/${encodeURIComponent(token)}`,
      number: r.number,
      subject: r.subject,
      comment: o.comment,
      error: o.error,
      choices: [5, 4, 3, 2, 1].map((value) => ({ value, label: LABELS[value], checked: o.score === value })),
    });
  const invalid = () =>
    renderPage('csat', {
      state: 'invalid',
      title: 'Link not valid',
      workspace: 'Customer satisfaction',
      css: cssPath(),
    });

  await app.register(async (scope: FastifyInstance) => {
    readForms(scope);
    pageErrors(scope, csp);

    scope.get(
      '/csat/assets/:file',
      {
        config: { access: access.public(), page: true },
        schema: { params: Type.Object({ file: Type.String({ maxLength: 64 }) }) },
      },
      async (req, reply) => {
        const s = sheet();
        if ((req.params as { file: string }).file !== `csat.${s.hash}.css`) return send(reply, 404, plainPage(404));
        return reply
          .header('cache-control', 'public, max-age=31536000, immutable')
          .header('x-content-type-options', 'nosniff')
          .type('text/css; charset=utf-8')
          .send(s.css);
      },
    );

    scope.get(
      '/csat/:token',
      {
        config: { access: access.public(), page: true },
        schema: {
          params: CsatTokenParams,
          // Open: a mail client or a link checker may add its own parameters.
          querystring: Type.Object(
            { score: Type.Optional(Type.String({ maxLength: 8 })) },
            { additionalProperties: true },
          ),
        },
      },
      async (req, reply) => {
        let found: Awaited<ReturnType<typeof ratingOf>>;
        try {
          found = await ratingOf(deps, (req.params as { token: string }).token);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'not_found') return send(reply, 404, invalid());
          throw err;
        }
        const { rating, workspace } = found;
        const score = choiceOf((req.query as { score?: string }).score) ?? rating.score;
        const token = (req.params as { token: string }).token;
        return send(reply, 200, form(token, workspace, rating, { score, comment: rating.comment }));
      },
    );

    scope.post(
      '/csat/:token',
      { config: { access: access.public(), page: true, idempotent: false }, schema: { params: CsatTokenParams } },
      async (req, reply) => {
        const token = (req.params as { token: string }).token;
        let found: Awaited<ReturnType<typeof ratingOf>>;
        try {
          found = await ratingOf(deps, token);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'not_found') return send(reply, 404, invalid());
          throw err;
        }
        const input = (req.body ?? {}) as Record<string, unknown>;
        const score = scoreOf(input.score);
        const comment = typeof input.comment === 'string' ? input.comment : null;
        const again = (status: number, error: string) =>
          send(reply, status, form(token, found.workspace, found.rating, { score, comment, error }));
        const offScale = 'Please choose one of the five ratings.';
        if (score === null) return again(422, offScale);
        try {
          const saved = await rate(deps, token, { score, comment });
          return send(
            reply,
            200,
            renderPage('csat', {
              state: 'thanks',
              title: 'Thank you',
              workspace: found.workspace,
              css: cssPath(),
              number: saved.number,
              subject: saved.subject,
              scoreLabel: LABELS[saved.score ?? 0],
            }),
          );
        } catch (err) {
          if (err instanceof ApiError && err.code === 'conflict') {
            return send(
              reply,
              409,
              renderPage('csat', {
                state: 'closed',
                title: 'Rating closed',
                workspace: found.workspace,
                css: cssPath(),
                number: found.rating.number,
              }),
            );
          }
          if (err instanceof ApiError && err.code === 'not_found') return send(reply, 404, invalid());
          if (err instanceof ApiError && err.code === 'validation_failed') {
            const field = err.errors?.[0]?.location;
            return again(
              422,
              field === 'body.comment' ? 'The comment is too long: at most 2,000 characters.' : offScale,
            );
          }
          throw err;
        }
      },
    );
  });
}
