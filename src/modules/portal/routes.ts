// The portal's pages (docs/help-center.md "Where customers go"), part of the help center and
// only while it is on: the contact form (/hc/{slug}/new) and the customer area
// (/hc/{slug}/requests: sign-in by an emailed one-time link, the customer's own requests, a
// reply box, sign-out). Pages like the help center's: outside the API document, the help
// center's layout and look, errors as pages (never a JSON body), a strict CSP (the contact form
// may load the human check's script, nothing else does), and `Cache-Control: no-store`.
//
// Forms post application/x-www-form-urlencoded or multipart/form-data (with files). A form that
// does not pass is shown again with the values kept and the errors announced (role=alert, each
// field aria-describedby its error). Successful posts answer 303 to a page (post/redirect/get).
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { declareBodyLimit } from '../../platform/http/drain.js';
import { ApiError, tooLarge } from '../../platform/http/errors.js';
import { pageCsp, pageErrors, plainPage, readForms, seeOther, sendPage } from '../../platform/http/pages.js';
import { spoolDirOf } from '../attachments/purge.js';
import { verifyChallenge } from '../auth/protection.js';
import { stylesheetOf } from '../help-center/look.js';
import { baseStylesheet, type PageModel, renderPage } from '../help-center/render.js';
import { linksOf } from '../help-center/routes.js';
import { findHelpCenter, type HelpCenter } from '../help-center/service.js';
import { discardFiles, MAX_FILES, type ReadForm, readForm } from './form.js';
import { takeAttempt } from './limits.js';
import { queueSignInLink } from './mail.js';
import { formCsp, formStamp, fromAnotherSite, isEmail, stampFresh, statusText, when } from './page.js';
import { listRequests, loadRequest, openPortalTicket, replyToRequest } from './service.js';
import {
  clearSessionCookie,
  csrfToken,
  csrfValid,
  currentSession,
  endSession,
  linkUsable,
  type PortalSession,
  setSessionCookie,
  signInWithLink,
} from './session.js';

const LABELS = { name: 'Name', email: 'Email', subject: 'Subject', message: 'Message', attachments: 'Attachments' };
const MAX = { name: 100, email: 254, subject: 200, message: 20_000 };

type Errors = Partial<Record<keyof typeof LABELS, string>>;

/** Every page: public, hidden from the API document, its query open. */
const page = () => ({
  config: { access: access.public(), page: true, idempotent: false },
  schema: { hide: true, querystring: Type.Object({}, { additionalProperties: true }) },
});

const trimmed = (v: string | undefined, max: number) => [...(v ?? '').trim()].slice(0, max + 1).join('');

export default async function portalRoutes(app: App, deps: Deps): Promise<void> {
  const config = deps.config;
  const csp = pageCsp(config.publicUrl);
  const maxMb = config.attachmentMaxMb;
  const maxFileBytes = maxMb * 1024 * 1024;
  const filesHint = `Up to ${MAX_FILES} files, ${maxMb} MB each.`;
  const challenge = formCsp(config);
  if (config.challenge.kind !== 'none' && !config.challenge.siteKey) {
    // The API's callers bring their own challenge token; the contact form needs the site key to
    // show the check, without which every form sent would fail it.
    deps.log.warn(
      { challenge: config.challenge.kind },
      'CHALLENGE is set but CHALLENGE_SITE_KEY is not: the help center contact form cannot show the check and will refuse every request',
    );
  }

  const model = (hc: HelpCenter, m: { title: string } & Record<string, unknown>): PageModel => {
    const l = linksOf(config.publicUrl, hc.slug);
    const sheet = stylesheetOf(baseStylesheet(), hc.brandColor);
    return {
      lang: 'en',
      description: m.title,
      canonical: null,
      ogType: 'website',
      ...m,
      hc,
      links: { home: l.home, search: l.search, css: l.css(sheet.hash), contact: l.contact, requests: l.requests },
    };
  };

  const send = (reply: FastifyReply, status: number, body: string, pageCspValue = csp) =>
    sendPage(reply, status, body, pageCspValue);
  const see = seeOther;

  const notFound = (reply: FastifyReply, hc: HelpCenter | null) =>
    hc
      ? send(
          reply,
          404,
          renderPage('not-found', model(hc, { title: 'Page not found', description: 'This page does not exist.' })),
        )
      : send(reply, 404, plainPage(404));

  /** The workspace's help center, or the plain 404 already sent (null). */
  const centerOf = async (req: FastifyRequest, reply: FastifyReply): Promise<HelpCenter | null> => {
    const hc = await findHelpCenter(deps, (req.params as { workspace: string }).workspace);
    if (!hc) notFound(reply, null);
    return hc;
  };

  // --- The contact form ------------------------------------------------------------------------

  const formPage = (
    reply: FastifyReply,
    hc: HelpCenter,
    o: { status?: number; values?: Record<string, string>; errors?: Errors; formError?: string } = {},
  ) => {
    const l = linksOf(config.publicUrl, hc.slug);
    const body = renderPage(
      'portal-new',
      model(hc, {
        title: 'Contact us',
        description: `Send a request to ${hc.title}.`,
        action: l.contact,
        values: o.values ?? {},
        errors: o.errors ?? {},
        formError: o.formError ?? null,
        labels: LABELS,
        started: formStamp(config, hc.workspaceId),
        filesHint,
        challenge: challenge.widget,
      }),
    );
    return send(reply, o.status ?? 200, body, challenge.csp);
  };

  const contactErrors = (v: Record<string, string>, form: ReadForm): { errors: Errors; status: number } => {
    const errors: Errors = {};
    if (v.name!.length > MAX.name) errors.name = `Use at most ${MAX.name} characters.`;
    if (v.email === '') errors.email = 'Enter your email address.';
    else if (!isEmail(v.email!)) errors.email = 'Enter an email address like name@example.com.';
    if (v.subject === '') errors.subject = 'Enter a subject.';
    else if ([...v.subject!].length > MAX.subject) errors.subject = `Use at most ${MAX.subject} characters.`;
    if (v.message === '') errors.message = 'Enter your message.';
    else if ([...v.message!].length > MAX.message) errors.message = `Use at most ${MAX.message} characters.`;
    let status = 422;
    if (form.tooLarge.length > 0) {
      errors.attachments = `${form.tooLarge.join(', ')}: larger than ${maxMb} MB, the largest file accepted. Nothing was sent.`;
      status = 413;
    } else if (form.tooMany) {
      errors.attachments = `Attach at most ${MAX_FILES} files.`;
    }
    return { errors, status };
  };

  /** The declared body is larger than any form we take: refused before it is read (413 page). */
  const refuseHuge = (req: FastifyRequest) => {
    // What is left of a refused body is drained after the answer (platform/http/drain.ts).
    declareBodyLimit(req, MAX_FILES * maxFileBytes + 1024 * 1024);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_FILES * maxFileBytes + 1024 * 1024) {
      throw tooLarge(`The form is larger than ${MAX_FILES} files of ${maxMb} MB.`);
    }
  };

  await app.register(async (scope: FastifyInstance) => {
    await scope.register(multipart);
    readForms(scope);
    // Errors are pages (platform/http/pages.ts's policy).
    pageErrors(scope, csp);

    scope.get('/hc/:workspace/new', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      return formPage(reply, hc);
    });

    scope.get('/hc/:workspace/new/sent', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      return send(reply, 200, renderPage('portal-sent', model(hc, { title: 'Request received' })));
    });

    scope.post('/hc/:workspace/new', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const l = linksOf(config.publicUrl, hc.slug);
      refuseHuge(req);
      const form = await readForm(req, maxFileBytes, spoolDirOf(config));
      try {
        const f = form.fields;
        const values = {
          name: trimmed(f.name, MAX.name),
          email: trimmed(f.email, MAX.email),
          subject: trimmed(f.subject, MAX.subject),
          message: (f.message ?? '').trim(),
        };
        // The honeypot: people never see the field; what fills it gets the usual answer, and nothing is kept.
        if ((f.website ?? '') !== '') {
          req.log.info({ workspace: hc.workspaceId }, 'portal form: honeypot filled, dropped');
          return see(reply, `${l.contact}/sent`);
        }
        const { errors, status } = contactErrors(values, form);
        if (Object.keys(errors).length > 0) return formPage(reply, hc, { status, values, errors });
        if (!stampFresh(config, hc.workspaceId, f.started)) {
          return formPage(reply, hc, {
            status: 422,
            values,
            formError: 'Please check your request, then press Send again.',
          });
        }
        const full = await takeAttempt(deps, hc.workspaceId, 'form', req.ip, values.email);
        if (full.address || full.email) {
          reply.header('retry-after', '3600');
          return formPage(reply, hc, {
            status: 429,
            values,
            formError:
              'You have sent several requests in the last hour. Please wait before sending another, or reply to the confirmation email of an earlier one.',
          });
        }
        try {
          await verifyChallenge(deps, f['cf-turnstile-response'] || f['h-captcha-response'] || undefined, req.ip);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          const down = err.code === 'unavailable';
          return formPage(reply, hc, {
            status: down ? 503 : 422,
            values,
            formError: down
              ? 'The human check could not be verified right now. Please try again in a moment.'
              : 'The human check did not pass. Please complete it, then press Send again.',
          });
        }
        await openPortalTicket(deps, hc.workspaceId, { ...values, files: form.files });
        return see(reply, `${l.contact}/sent`);
      } finally {
        await discardFiles(form.files);
      }
    });

    // --- The customer area: signing in -------------------------------------------------------

    const signInPage = (
      reply: FastifyReply,
      hc: HelpCenter,
      o: { status?: number; email?: string; error?: string; formError?: string; notice?: string } = {},
    ) => {
      const l = linksOf(config.publicUrl, hc.slug);
      const body = renderPage(
        'portal-sign-in',
        model(hc, {
          title: 'Your requests',
          description: `Sign in to see your requests to ${hc.title}.`,
          action: `${l.requests}/sign-in`,
          values: { email: o.email ?? '' },
          errors: o.error ? { email: o.error } : {},
          formError: o.formError ?? null,
          notice: o.notice ?? null,
          labels: LABELS,
        }),
      );
      return send(reply, o.status ?? 200, body);
    };

    /** The signed-in customer of this help center, or null. */
    const sessionOf = (req: FastifyRequest, reply: FastifyReply, hc: HelpCenter) =>
      currentSession(deps, req, reply, hc.workspaceId, linksOf(config.publicUrl, hc.slug).home);

    const signedIn = (hc: HelpCenter, s: PortalSession) => ({
      csrf: csrfToken(config, s),
      email: s.contactEmail ?? '',
      signOut: linksOf(config.publicUrl, hc.slug).signOut,
    });

    scope.get('/hc/:workspace/requests', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const s = await sessionOf(req, reply, hc);
      if (!s) {
        const out = (req.query as { signed_out?: string }).signed_out !== undefined;
        return signInPage(reply, hc, out ? { notice: 'You are signed out.' } : {});
      }
      const l = linksOf(config.publicUrl, hc.slug);
      const requests = (await listRequests(deps, s)).map((r) => ({
        ...r,
        href: l.request(r.number),
        statusText: statusText(r.status),
        updatedIso: r.updatedAt.toISOString(),
        updatedText: when(r.updatedAt),
      }));
      const body = renderPage('portal-requests', model(hc, { title: 'Your requests', requests, ...signedIn(hc, s) }));
      return send(reply, 200, body);
    });

    scope.post('/hc/:workspace/requests/sign-in', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const form = await readForm(req, 1, spoolDirOf(config));
      await discardFiles(form.files);
      const email = trimmed(form.fields.email, MAX.email);
      if (email === '') return signInPage(reply, hc, { status: 422, email, error: 'Enter your email address.' });
      if (!isEmail(email)) {
        return signInPage(reply, hc, { status: 422, email, error: 'Enter an email address like name@example.com.' });
      }
      const full = await takeAttempt(deps, hc.workspaceId, 'signIn', req.ip, email);
      if (full.address) {
        reply.header('retry-after', '3600');
        return signInPage(reply, hc, {
          status: 429,
          email,
          formError:
            'Too many sign-in links were asked for from your network in the last hour. Please try again later.',
        });
      }
      // The same answer whether or not the address is a contact's (the job decides; mail.ts).
      if (!full.email) await queueSignInLink(deps, hc.workspaceId, email);
      return send(reply, 200, renderPage('portal-sign-in-sent', model(hc, { title: 'Check your email', email })));
    });

    /** The link's page: its button (200), the link spent or expired (410), or a post refused (403). */
    const linkPage = (reply: FastifyReply, hc: HelpCenter, token: string, usable: boolean, refused = false) => {
      const l = linksOf(config.publicUrl, hc.slug);
      const body = renderPage(
        'portal-link',
        model(hc, {
          title: usable ? 'Sign in' : 'Sign-in link expired',
          usable,
          action: l.signIn(token),
          formError: refused
            ? 'This sign-in was sent from another website, so it was not accepted. If you want to sign in, press the button below.'
            : null,
        }),
      );
      return send(reply, refused ? 403 : usable ? 200 : 410, body);
    };

    // Opening the link shows a button; only its POST signs in (mail scanners open links).
    scope.get('/hc/:workspace/requests/sign-in/:token', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const token = (req.params as { token: string }).token;
      return linkPage(reply, hc, token, await linkUsable(deps, hc.workspaceId, token));
    });

    scope.post('/hc/:workspace/requests/sign-in/:token', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const token = (req.params as { token: string }).token;
      // Login CSRF: a foreign page posting the attacker's own link would sign this browser in to
      // the attacker's requests. Refused before the link is spent: it still works from its page.
      if (fromAnotherSite(req, config.publicUrl)) {
        req.log.info({ workspace: hc.workspaceId }, 'portal sign-in: post from another site refused');
        return linkPage(reply, hc, token, await linkUsable(deps, hc.workspaceId, token), true);
      }
      const secret = await signInWithLink(deps, hc.workspaceId, token);
      if (!secret) return linkPage(reply, hc, token, false);
      const l = linksOf(config.publicUrl, hc.slug);
      setSessionCookie(config, reply, l.home, secret);
      return see(reply, l.requests);
    });

    /** The session and the form of a customer-area post; 403 page when the CSRF token is not the session's. */
    const checkedPost = async (req: FastifyRequest, reply: FastifyReply, hc: HelpCenter, files: boolean) => {
      const s = await sessionOf(req, reply, hc);
      // No session: refused before the body is read.
      if (!s) {
        send(reply, 403, plainPage(403));
        return null;
      }
      if (files) refuseHuge(req);
      const form = await readForm(req, files ? maxFileBytes : 1, spoolDirOf(config));
      if (!csrfValid(config, s, form.fields.csrf)) {
        await discardFiles(form.files);
        send(reply, 403, plainPage(403));
        return null;
      }
      return { s, form };
    };

    scope.post('/hc/:workspace/requests/sign-out', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const got = await checkedPost(req, reply, hc, false);
      if (!got) return reply;
      await endSession(deps, got.s);
      const l = linksOf(config.publicUrl, hc.slug);
      clearSessionCookie(config, reply, l.home);
      return see(reply, `${l.requests}?signed_out`);
    });

    // --- The customer area: a request and its reply box -------------------------------------

    const numberOf = (req: FastifyRequest): number | null => {
      const n = (req.params as { number: string }).number;
      return /^[1-9][0-9]{0,14}$/.test(n) ? Number(n) : null;
    };

    const requestPage = async (
      reply: FastifyReply,
      hc: HelpCenter,
      s: PortalSession,
      number: number,
      o: { status?: number; values?: Record<string, string>; errors?: Errors; notice?: string | null } = {},
    ) => {
      const request = await loadRequest(deps, s, number);
      if (!request) return notFound(reply, hc);
      const l = linksOf(config.publicUrl, hc.slug);
      // Merged into another of the customer's requests: the conversation goes on there.
      if (request.movedTo !== null) return see(reply, l.request(request.movedTo));
      const body = renderPage(
        'portal-request',
        model(hc, {
          title: request.subject,
          breadcrumb: [
            { name: 'Your requests', href: l.requests },
            { name: `#${request.number}`, href: null },
          ],
          request: {
            ...request,
            messages: request.messages.map((m) => ({
              ...m,
              createdIso: m.createdAt.toISOString(),
              createdText: when(m.createdAt),
              files: m.files.map((f) => ({ ...f, sizeText: sizeText(f.size_bytes) })),
            })),
          },
          statusText: statusText(request.status),
          followUpHref: request.followUpOf ? l.request(request.followUpOf) : null,
          action: l.request(request.number),
          values: o.values ?? {},
          errors: o.errors ?? {},
          formError: null,
          notice: o.notice ?? null,
          labels: LABELS,
          filesHint,
          ...signedIn(hc, s),
        }),
      );
      return send(reply, o.status ?? 200, body);
    };

    scope.get('/hc/:workspace/requests/:number', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const number = numberOf(req);
      if (number === null) return notFound(reply, hc);
      const s = await sessionOf(req, reply, hc);
      if (!s) return see(reply, linksOf(config.publicUrl, hc.slug).requests);
      const q = req.query as { sent?: string; follows?: string };
      const notice =
        q.follows !== undefined && /^\d+$/.test(q.follows)
          ? `Request #${q.follows} is closed, so your reply started this new request.`
          : q.sent !== undefined
            ? 'Your reply was sent.'
            : null;
      return requestPage(reply, hc, s, number, { notice });
    });

    scope.post('/hc/:workspace/requests/:number', page(), async (req, reply) => {
      const hc = await centerOf(req, reply);
      if (!hc) return reply;
      const number = numberOf(req);
      const got = await checkedPost(req, reply, hc, true);
      if (!got) return reply;
      const { s, form } = got;
      try {
        if (number === null) return notFound(reply, hc);
        const message = (form.fields.message ?? '').trim();
        const errors: Errors = {};
        let status = 422;
        if (message === '') errors.message = 'Enter your reply.';
        else if ([...message].length > MAX.message) errors.message = `Use at most ${MAX.message} characters.`;
        if (form.tooLarge.length > 0) {
          errors.attachments = `${form.tooLarge.join(', ')}: larger than ${maxMb} MB, the largest file accepted. Nothing was sent.`;
          status = 413;
        } else if (form.tooMany) errors.attachments = `Attach at most ${MAX_FILES} files.`;
        if (Object.keys(errors).length > 0)
          return requestPage(reply, hc, s, number, { status, values: { message }, errors });
        const done = await replyToRequest(deps, s, number, { message, files: form.files });
        if (!done) return notFound(reply, hc);
        const l = linksOf(config.publicUrl, hc.slug);
        return see(reply, `${l.request(done.number)}?${done.followUp ? `follows=${number}` : 'sent'}`);
      } finally {
        await discardFiles(form.files);
      }
    });
  });
}

const sizeText = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
      ? `${Math.round(bytes / 1024)} KB`
      : `${(bytes / 1048576).toFixed(1)} MB`;
