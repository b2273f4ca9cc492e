// What every browser test of the agent web app starts with (test/web/**/*.browser.test.ts): the service on a
// port of its own (its PUBLIC_URL must name it, for the socket's address and Origin), on a
// database of its own on PostgreSQL, the app built, Debian's Chromium; a workspace made over the
// API and a page signed in to it through the sign-in screen.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, seriousViolations } from './browser.js';
import { freePort } from './child-process.js';
import { newTenant, type Service, startService, type Tenant } from './helpers.js';
import { OIDC_CLIENT, type OidcProvider } from './oidc-provider.js';
import { type OwnDatabase, ownDatabase } from './own-database.js';
import { ensureWebApp } from './web-app.js';

export interface AppHarness {
  svc: Service;
  browser: Browser;
  /** A workspace ("Acme Support") and its owner, made over the API. */
  tenant: Tenant;
  /** Errors the pages reported (uncaught exceptions, console errors): a test expects none. */
  errors: string[];
  /** A new browser context (its own cookies) with one page, watched for errors. */
  newPage(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }>;
  /** Signs this person in on the page through the sign-in screen and waits for the inbox. */
  signIn(page: Page, who: { email: string; password: string }): Promise<void>;
  /** axe-core's serious and critical violations on the page now, as a string to compare with '[]'. */
  violations(page: Page): Promise<string>;
  stop(): Promise<void>;
}

export async function startAppHarness(
  tag: string,
  env: Record<string, string> = {},
  opts: Parameters<typeof startService>[1] = undefined,
): Promise<AppHarness> {
  const [port] = await Promise.all([freePort(), ensureWebApp()]);
  const own: OwnDatabase = await ownDatabase(tag);
  const svc = await startService(
    // PUBLIC_URL_HOST=localhost: WebAuthn refuses an IP address as relying party (passkey tests).
    { ...own.env, PORT: String(port), PUBLIC_URL: `http://${env.PUBLIC_URL_HOST ?? '127.0.0.1'}:${port}`, ...env },
    opts,
  );
  const browser = await launchBrowser();
  const tenant = await newTenant(svc.api);
  const errors: string[] = [];
  const contexts: BrowserContext[] = [];
  return {
    svc,
    browser,
    tenant,
    errors,
    async newPage(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        // A failed load names its address (the console's text alone does not say which request it was).
        const at = m.text().startsWith('Failed to load resource') && m.location().url ? ` (${m.location().url})` : '';
        if (m.type() === 'error') errors.push(`console: ${m.text()}${at}`);
      });
      return { context, page };
    },
    async signIn(page, who) {
      await page.goto(`${svc.url}/login`);
      await page.getByLabel('Email').fill(who.email);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((u) => u.pathname === '/inbox');
    },
    async violations(page) {
      return JSON.stringify(await seriousViolations(page), null, 2);
    },
    async stop() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
      await svc.stop();
      await own.drop();
    },
  };
}

/**
 * The settings that point the service's "Continue with Google" / "Continue with Microsoft" at a
 * stand-in OpenID provider (test/support/oidc-provider.ts; Microsoft's: startOidcProvider({
 * microsoft: true }), whose issuer is the default tenant template, as in production). Pass them
 * in startAppHarness's env; GET /v1/auth/methods then names the provider.
 */
export function oauthSignInEnv(provider: 'google' | 'microsoft', op: OidcProvider): Record<string, string> {
  const p = provider.toUpperCase();
  return {
    [`${p}_CLIENT_ID`]: OIDC_CLIENT.id,
    [`${p}_CLIENT_SECRET`]: OIDC_CLIENT.secret,
    [`${p}_AUTH_URL`]: `${op.base}/authorize`,
    [`${p}_TOKEN_URL`]: `${op.base}/token`,
    [`${p}_JWKS_URL`]: `${op.base}/keys`,
    ...(provider === 'google' ? { GOOGLE_ISSUER: op.issuer } : {}),
  };
}
