// Issue 38 in the app, in a real browser (test/support/app-harness.ts) with Chromium's virtual
// authenticator (DevTools protocol WebAuthn.enable + addVirtualAuthenticator: real attestation and
// assertion signatures): the profile adds a passkey with a name (no name: nothing sent; the prompt
// closed: said in words, nothing created), the sign-in page's "Sign in with a passkey" signs in
// without a password or a two-factor code, the passkey removed is gone from the list and the API.
// axe-core on both screens; keyboard only for the sign-in. The service runs at localhost: WebAuthn
// refuses an IP address as relying party id.
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, startAppHarness } from '../../support/app-harness.js';
import { browserAvailable, docsScreenshot } from '../../support/browser.js';

const run = browserAvailable();

describe.runIf(run)('sign-in with passkeys (issue 38)', () => {
  let h: AppHarness;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId = '';
  const passkeys = async () => (await h.svc.api.get('/v1/me/passkeys', h.tenant.as)).body.data as any[];

  beforeAll(async () => {
    h = await startAppHarness('app_signin', { PUBLIC_URL_HOST: 'localhost' });
    page = (await h.newPage()).page;
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    authenticatorId = (
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      })
    ).authenticatorId;
    // At localhost, the relying party's host (h.signIn goes to 127.0.0.1).
    await page.goto(`${h.svc.url.replace('127.0.0.1', 'localhost')}/login`);
    await page.getByLabel('Email').fill(h.tenant.owner.email);
    await page.getByLabel('Password').fill(h.tenant.owner.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/inbox');
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('adds a passkey with a name from the profile; without a name nothing is sent', async () => {
    await page.goto(`${new URL(page.url()).origin}/settings/profile`);
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByText('No passkeys yet.').waitFor();
    expect(await section.getByRole('button', { name: 'Add a passkey' }).isDisabled()).toBe(true);
    // Neither provider set up and nothing linked: once both are known, no linked accounts to show.
    await expect.poll(() => page.getByRole('region', { name: 'Linked accounts' }).count()).toBe(0);
    await section.getByLabel('Passkey name').fill('Work laptop');
    await section.getByRole('button', { name: 'Add a passkey' }).click();
    await section.getByText('Passkey added.').waitFor();
    await section.getByRole('list', { name: 'Your passkeys' }).getByText('Work laptop', { exact: true }).waitFor();
    expect((await passkeys()).map((k) => k.name)).toEqual(['Work laptop']);
    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'profile-passkeys');
  });

  it('a prompt the person does not confirm is said in words and creates nothing', async () => {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByLabel('Passkey name').fill('Refused');
    await section.getByRole('button', { name: 'Add a passkey' }).click();
    await section
      .getByRole('alert')
      .filter({ hasText: /Could not add the passkey/ })
      .waitFor();
    expect((await passkeys()).map((k) => k.name)).toEqual(['Work laptop']);
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
  });

  it('signs in with the passkey from the sign-in page, by keyboard, without a password or code', async () => {
    await page.getByRole('button', { name: /Workspace: Acme Support/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor();
    // GET /v1/auth/methods has answered: this service has no Google or Microsoft client set up.
    expect(await page.getByRole('button', { name: /Continue with/ }).count()).toBe(0);
    expect(await h.violations(page)).toBe('[]');
    await docsScreenshot(page, 'sign-in-methods');
    await button.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/inbox');
  });

  it('removes the passkey: gone from the list and from the API', async () => {
    await page.goto(`${new URL(page.url()).origin}/settings/profile`);
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByRole('button', { name: 'Remove the passkey Work laptop' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove passkey' }).click();
    await section.getByText('No passkeys yet.').waitFor();
    expect(await passkeys()).toEqual([]);
    // Signed out, the sign-in page asks /v1/auth/refresh whether an account is still signed in:
    // 401 is its answer, not a failure. Nothing else may have failed.
    expect(h.errors.filter((e) => !/401 \(Unauthorized\) \(.*\/v1\/auth\/refresh\)/.test(e))).toEqual([]);
  });
});
