// The setup of the portal tests (portal.test.ts, portal-sign-in.test.ts, portal-requests.test.ts):
// a service on a database of its own whose mail goes to a mail catcher, help centers, and the
// helpers that get pages, post forms and sign customers in. Each test file calls portalSuite() at
// its top level and gets its own service (the files share worker processes, so nothing here
// lives at module level).

import { afterAll, beforeAll, expect } from 'vitest';
import { formStamp } from '../../../src/modules/portal/page.js';
import { uniqueEmail } from '../../support/builders.js';
import { newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';
import { type CaughtMail, type MailCatcher, startMailCatcher } from '../../support/mail-catcher.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

export type Received = CaughtMail;

export const ORIGIN = 'https://help.acme.test';

/** A tenant on a service with CHALLENGE set: its owner passed the human check. */
export async function humanTenant(s: Service): Promise<Tenant> {
  const email = uniqueEmail('owner');
  const reg = await s.api.post('/v1/auth/register', {
    email,
    password: 'correct horse battery',
    name: 'Olivia Owner',
    challenge_token: 'good-token',
  });
  expect(reg.status).toBe(201);
  const token = reg.body.access_token as string;
  const w = await s.api.post('/v1/workspaces', { name: 'Acme Support' }, { token });
  expect(w.status).toBe(201);
  const owner = { token, userId: reg.body.user.id, email, password: 'correct horse battery' };
  return { owner, workspaceId: w.body.id, as: { token, workspace: w.body.id } };
}

export interface Center {
  t: Tenant;
  slug: string;
  base: string;
  svc: Service;
}

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export const asPage = async (r: Response): Promise<Page> => ({
  status: r.status,
  headers: r.headers,
  text: await r.text(),
  location: r.headers.get('location'),
});

export const get = (c: Center, path: string, cookie?: string) =>
  fetch(c.svc.url + path, { redirect: 'manual', headers: cookie ? { cookie } : {} }).then(asPage);

/** A urlencoded form post. */
export const postForm = (
  c: Center,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  fetch(c.svc.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  }).then(asPage);

export interface FileSpec {
  name: string;
  data: Uint8Array | string;
  type?: string;
}

/** A multipart form post (as a browser sends a form with a file input). */
export function postMultipart(
  c: Center,
  path: string,
  fields: Record<string, string>,
  files: FileSpec[] = [],
  headers: Record<string, string> = {},
) {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  for (const f of files)
    fd.append('attachments', new Blob([f.data], { type: f.type ?? 'application/octet-stream' }), f.name);
  return fetch(c.svc.url + path, { method: 'POST', redirect: 'manual', headers, body: fd }).then(asPage);
}

/** A filled contact form, with a `started` stamp old enough (a person took a few seconds). */
export const contactFields = (c: Center, o: Record<string, string> = {}) => ({
  name: 'Dana Customer',
  email: uniqueEmail('dana'),
  subject: 'My invoice is wrong',
  message: 'Hello,\n\nthe invoice of March <b>doubles</b> the seats.',
  started: formStamp(c.svc.rt.deps.config, c.t.workspaceId, Date.now() - 5000),
  ...o,
});

export const ticketsOf = async (c: Center) => (await c.svc.api.get('/v1/tickets', c.t.as)).body.data as any[];
export const messagesOf = async (c: Center, id: string) =>
  (await c.svc.api.get(`/v1/tickets/${id}/messages`, c.t.as)).body.data as any[];

export const inputOf = (html: string, name: string) =>
  new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1] ??
  new RegExp(`<input[^>]*value="([^"]*)"[^>]*name="${name}"`).exec(html)?.[1];

/** The session cookie's value from a Set-Cookie header. */
export const sessionCookie = (p: Page) => {
  const set = p.headers.getSetCookie().find((h) => h.startsWith('svc_portal='));
  return set ? set.split(';')[0]! : null;
};

export const csrfOf = (html: string) => inputOf(html, 'csrf')!;

/** One file's service and mail catcher, and the helpers that use them; registers the file's hooks. */
export function portalSuite() {
  let svc: Service;
  let db: OwnDatabase;
  let mail: MailCatcher;
  let received: Received[] = [];

  beforeAll(async () => {
    mail = await startMailCatcher();
    received = mail.received;
    // Its own database on PostgreSQL: the mail queue is the database's.
    db = await ownDatabase('portal');
    svc = await startService({
      ...db.env,
      SMTP_URL: mail.smtpUrl('Acme Help <help@acme.test>'),
      PUBLIC_URL: ORIGIN,
      // The per-address limits are tested with X-Forwarded-For.
      TRUST_PROXY: 'true',
    });
  });

  afterAll(async () => {
    await svc?.stop();
    await db?.drop();
    await mail?.close();
  });

  async function newCenter(on = true, s: Service = svc): Promise<Center> {
    const t = s === svc ? await newTenant(s.api) : await humanTenant(s);
    const r = await s.api.patch('/v1/workspace', { settings: { help_center_enabled: on } }, t.as);
    expect(r.status).toBe(200);
    return { t, slug: r.body.slug, base: `/hc/${r.body.slug}`, svc: s };
  }

  /** The sign-in link mailed to `email` (the newest one). */
  async function linkMailedTo(email: string, after: number): Promise<string> {
    let mail: Received | undefined;
    await expect
      .poll(() => (mail = received.slice(after).find((m) => m.to.includes(email) && /sign-in link/.test(m.subject))), {
        timeout: 30_000,
      })
      .toBeTruthy();
    const link = /https:\/\/help\.acme\.test(\/hc\/[a-z0-9-]+\/requests\/sign-in\/[A-Za-z0-9_-]{43})/.exec(mail!.text);
    expect(link).not.toBeNull();
    return link![1]!;
  }

  /** A customer with a ticket made through the form, signed in: their cookie. */
  async function customer(c: Center, email = uniqueEmail('cust'), subject = 'My invoice is wrong') {
    const r = await postMultipart(c, `${c.base}/new`, contactFields(c, { email, subject }));
    expect(r.status).toBe(303);
    const ticket = (await ticketsOf(c)).find((t) => t.subject === subject && t.contact.email === email);
    const before = received.length;
    const asked = await postForm(c, `${c.base}/requests/sign-in`, { email });
    expect(asked.status).toBe(200);
    const link = await linkMailedTo(email, before);
    const signedIn = await postForm(c, link, {});
    expect(signedIn.status).toBe(303);
    return { email, ticket, cookie: sessionCookie(signedIn)!, link };
  }

  return {
    get svc() {
      return svc;
    },
    get db() {
      return db;
    },
    get mail() {
      return mail;
    },
    get received() {
      return received;
    },
    newCenter,
    linkMailedTo,
    customer,
  };
}
