// Issue 38 in the app: "Continue with Google" / "Continue with Microsoft" in a real browser
// (test/support/app-harness.ts) against stand-in OpenID providers on loopback
// (test/support/oidc-provider.ts: real signed ID tokens, PKCE, the provider's ?error= return).
// The buttons show as GET /v1/auth/methods says; a click goes through the provider's authorize
// endpoint and the service's callback and lands signed in: an existing person matched by a
// verified email in their inbox, a new person registered and asked for a first workspace. The
// provider's error return (`/sign-in#oauth_error=<code>`) is said in words and leaves the address
// bar; two-factor after OAuth (`#mfa_token=`) shows the two-factor step and takes a TOTP code.
// The profile's linked accounts: list, link (the provider's round trip), unlink, the 409 "no way
// left to sign in" said in words, a cancelled link; by keyboard, axe-clean.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, oauthSignInEnv, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';
import { signUp } from '../../support/helpers.js';
import { type OidcProvider, startOidcProvider } from '../../support/oidc-provider.js';

const run = browserAvailable();
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const tag = () => randomBytes(4).toString('hex');
const focused = (page: Page) =>
  page.evaluate('document.activeElement && document.activeElement.textContent') as Promise<string | null>;

describe.runIf(run)('sign-in with Google and Microsoft in the app (issue 38)', () => {
  let h: AppHarness;
  let google: OidcProvider;
  let microsoft: OidcProvider;
  /** The person registered through Microsoft (no password), their browser. */
  let nora: { email: string; context: BrowserContext; page: Page };

  beforeAll(async () => {
    google = await startOidcProvider();
    microsoft = await startOidcProvider({ microsoft: true });
    h = await startAppHarness('app_oauth', {
      ...oauthSignInEnv('google', google),
      ...oauthSignInEnv('microsoft', microsoft),
    });
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await google?.close();
    await microsoft?.close();
  });

  const usersWith = (email: string) =>
    h.svc.rt.deps.database.db.selectFrom('users').select(['id', 'name']).where('email', '=', email).execute();
  const identitiesOf = (userId: string) =>
    h.svc.rt.deps.database.db
      .selectFrom('oauth_identities')
      .select(['provider', 'email'])
      .where('user_id', '=', userId)
      .orderBy('provider')
      .execute();
  const refreshCookies = async (context: BrowserContext) =>
    (await context.cookies()).filter((c) => c.name.startsWith('svc_rt_'));
  /** Failures the pages may report: signed out, the sign-in page's refresh answers 401. */
  const unexpected = () =>
    h.errors.filter(
      (e) =>
        !/401 \(Unauthorized\) \(.*\/v1\/auth\/refresh\)/.test(e) &&
        !/409 \(Conflict\) \(.*\/v1\/me\/identities\//.test(e),
    );

  it('shows both providers; an existing person, matched by the verified email, lands in their inbox', async () => {
    google.account = { sub: `g-owner-${tag()}`, email: h.tenant.owner.email, email_verified: true };
    const { context, page } = await h.newPage();
    await page.goto(`${h.svc.url}/login`);
    const others = page.getByRole('region', { name: 'Other ways to sign in' });
    await others.getByRole('button', { name: 'Continue with Google' }).waitFor();
    await others.getByRole('button', { name: 'Continue with Microsoft' }).waitFor();
    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'sign-in-oauth');
    await others.getByRole('button', { name: 'Continue with Google' }).click();
    await page.waitForURL((u) => u.pathname === '/inbox');
    await page.getByRole('button', { name: /Workspace: Acme Support/ }).waitFor();
    expect(await identitiesOf(h.tenant.owner.userId)).toEqual([{ provider: 'google', email: h.tenant.owner.email }]);
    expect(await refreshCookies(context)).toHaveLength(1);
    expect(unexpected()).toEqual([]);
  });

  it('a new person through Microsoft is registered, signed in and asked for a first workspace', async () => {
    const email = `nora-${tag()}@contoso.example`;
    microsoft.account = { sub: `ms-nora-${tag()}`, email, tid: TENANT, xms_edov: true, name: 'Nora New' };
    const { context, page } = await h.newPage();
    await page.goto(`${h.svc.url}/login`);
    const button = page.getByRole('button', { name: 'Continue with Microsoft' });
    await button.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/workspaces/new');
    await page.getByRole('heading', { name: 'Create your workspace' }).waitFor();
    expect(await usersWith(email)).toEqual([{ id: expect.any(String), name: 'Nora New' }]);
    await page.getByLabel('Workspace name').fill('Nora Co');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/inbox');
    nora = { email, context, page };
    expect(unexpected()).toEqual([]);
  });

  it('a sign-in cancelled at the provider is said in words, nobody is signed in, the fragment is gone', async () => {
    google.refuse = 'access_denied';
    const { context, page } = await h.newPage();
    try {
      await page.goto(`${h.svc.url}/login`);
      await page.getByRole('button', { name: 'Continue with Google' }).click();
      await page.getByRole('alert').filter({ hasText: 'Sign-in with Google was cancelled.' }).waitFor();
    } finally {
      google.refuse = null;
    }
    // The service sent the browser to /sign-in#oauth_error=access_denied; the app replaced it.
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(new URL(page.url()).hash).toBe('');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await refreshCookies(context)).toEqual([]);
    expect(await h.violations(page)).toBe('[]');
  });

  it('the error return opened directly: each code in words, the address bar without it', async () => {
    const { page } = await h.newPage();
    const cases: Array<[string, string]> = [
      ['access_denied', 'Sign-in with Google or Microsoft was cancelled. Sign in another way, or try again.'],
      ['oauth_failed', 'Sign-in with Google or Microsoft did not work. Try again, or sign in another way.'],
      ['temporarily_unavailable', 'Sign-in with Google or Microsoft did not work. Try again, or sign in another way.'],
    ];
    for (const [code, words] of cases) {
      await page.goto(`${h.svc.url}/sign-in#oauth_error=${code}`);
      await page.getByRole('alert').filter({ hasText: words }).waitFor();
      expect(page.url()).toBe(`${h.svc.url}/login`);
    }
    // Nor does the history: the entry before is the previous return, replaced by /login too.
    await page.goBack();
    expect(page.url()).toBe(`${h.svc.url}/login`);
    expect(unexpected()).toEqual([]);
  });

  it('two-factor after Google: the two-factor step, a TOTP code, the inbox', async () => {
    const mona = await signUp(h.svc.api, 'Mona Mfa');
    const ws = await h.svc.api.post('/v1/workspaces', { name: 'Mona Co' }, { token: mona.token });
    expect(ws.status).toBe(201);
    const start = await h.svc.api.post('/v1/me/mfa/totp', undefined, { token: mona.token });
    const totp = new TOTP({ secret: Secret.fromBase32(start.body.secret), digits: 6, period: 30 });
    // Confirmed with the previous step's code, so the current one is still unused for the sign-in.
    const confirm = await h.svc.api.post(
      '/v1/me/mfa/totp/confirm',
      { code: totp.generate({ timestamp: Date.now() - 30_000 }) },
      { token: mona.token },
    );
    expect(confirm.status, confirm.text).toBe(200);
    google.account = { sub: `g-mona-${tag()}`, email: mona.email, email_verified: true };

    const { context, page } = await h.newPage();
    await page.goto(`${h.svc.url}/login`);
    await page.getByRole('button', { name: 'Continue with Google' }).click();
    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(new URL(page.url()).hash).toBe('');
    expect(await refreshCookies(context)).toEqual([]);
    expect(await h.violations(page)).toBe('[]');
    // The code box has the focus: typed and sent by keyboard.
    await expect
      .poll(() => page.evaluate('document.activeElement && document.activeElement.id') as Promise<string | null>)
      .toBe('mfa-code');
    await page.keyboard.type(totp.generate());
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/inbox');
    await page.getByRole('button', { name: /Workspace: Mona Co/ }).waitFor();
    expect(unexpected()).toEqual([]);
  });

  describe('the profile’s linked accounts', () => {
    const section = () => nora.page.getByRole('region', { name: 'Linked accounts' });
    const noraId = async () => (await usersWith(nora.email))[0]!.id;

    it('lists the account; unlinking the only way in is refused in words, by keyboard', async () => {
      const { page } = nora;
      await page.goto(`${h.svc.url}/settings/profile`);
      await section()
        .getByRole('list', { name: 'Your linked accounts' })
        .getByText(`Microsoft: ${nora.email}`)
        .waitFor();
      await section()
        .getByRole('button', { name: `Unlink Microsoft ${nora.email}` })
        .focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('alertdialog');
      await dialog.getByRole('heading', { name: `Unlink Microsoft (${nora.email})?` }).waitFor();
      // The focus starts on Cancel; Tab reaches Unlink.
      await expect.poll(() => focused(page)).toBe('Cancel');
      await page.keyboard.press('Tab');
      await expect.poll(() => focused(page)).toBe('Unlink');
      await page.keyboard.press('Enter');
      await dialog
        .getByRole('alert')
        .filter({ hasText: 'This account is your only way to sign in, so it cannot be unlinked' })
        .waitFor();
      expect(await h.violations(page)).toBe('[]');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await identitiesOf(await noraId())).toEqual([{ provider: 'microsoft', email: nora.email }]);
    });

    it('links a Google account through the provider and comes back to the profile saying so', async () => {
      const { page } = nora;
      const gmail = `nora-${tag()}@gmail.example`;
      google.account = { sub: `g-nora-${tag()}`, email: gmail, email_verified: true };
      await section().getByRole('button', { name: 'Link a Google account' }).focus();
      await page.keyboard.press('Enter');
      // The service sends the browser to /profile?linked=1; the app shows the profile saying so.
      await section()
        .getByRole('status')
        .filter({ hasText: 'Your Google account is linked: you can sign in with it.' })
        .waitFor();
      expect(page.url()).toBe(`${h.svc.url}/settings/profile`);
      const list = section().getByRole('list', { name: 'Your linked accounts' });
      await list.getByText(`Google: ${gmail}`).waitFor();
      await list.getByText(`Microsoft: ${nora.email}`).waitFor();
      expect(await identitiesOf(await noraId())).toEqual([
        { provider: 'google', email: gmail },
        { provider: 'microsoft', email: nora.email },
      ]);
      expect(await h.violations(page)).toBe('[]');
      await docsScreenshot(page, 'profile-sign-in-methods');
    });

    it('unlinks Microsoft now that Google signs in, by keyboard', async () => {
      const { page } = nora;
      await section()
        .getByRole('button', { name: `Unlink Microsoft ${nora.email}` })
        .focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('alertdialog');
      await dialog.waitFor();
      await expect.poll(() => focused(page)).toBe('Cancel');
      await page.keyboard.press('Tab');
      await expect.poll(() => focused(page)).toBe('Unlink');
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await section()
        .getByRole('status')
        .filter({ hasText: `Microsoft (${nora.email}) is unlinked.` })
        .waitFor();
      await expect.poll(async () => (await identitiesOf(await noraId())).map((i) => i.provider)).toEqual(['google']);
      expect(await section().getByText(`Microsoft: ${nora.email}`).count()).toBe(0);
    });

    it('a link cancelled at the provider comes back to the profile saying so; nothing linked', async () => {
      const { page } = nora;
      microsoft.refuse = 'access_denied';
      try {
        await section().getByRole('button', { name: 'Link a Microsoft account' }).click();
        await section()
          .getByRole('alert')
          .filter({ hasText: 'Linking your Microsoft account was cancelled.' })
          .waitFor();
      } finally {
        microsoft.refuse = null;
      }
      // Back through /sign-in#oauth_error=access_denied: the profile's address, without it.
      expect(page.url()).toBe(`${h.svc.url}/settings/profile`);
      expect((await identitiesOf(await noraId())).map((i) => i.provider)).toEqual(['google']);
      expect(await h.violations(page)).toBe('[]');
      expect(unexpected()).toEqual([]);
    });
  });
});
