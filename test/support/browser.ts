// A real browser for the pages people see: Debian's Chromium (/usr/bin/chromium, installed by
// .ci/run from Debian's packages; Playwright's own browser download cannot be used here) driven by
// playwright-core, and axe-core's accessibility check run inside the page.
//
// Without Chromium the browser tests are skipped with a warning on a developer's machine
// (`apt-get install chromium`), and fail in CI (CI=1), where .ci/run installs it.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser tests can run here; says why not, once. */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  console.warn(`browser tests skipped: no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  return false;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container: Chromium's sandbox needs user namespaces it may not get; /dev/shm is small.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  /** CSS selectors of the elements at fault. */
  targets: string[];
}

/**
 * axe-core's check of the page as it is now (WCAG 2.1 A and AA rules and best practices),
 * answering its serious and critical violations. axe is evaluated through the DevTools protocol,
 * not a <script> tag, so the page's Content-Security-Policy stays in force.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // In the page: axe is the global its source defined; this file compiles without the DOM's types.
    const page = globalThis as unknown as { axe: { run(c: unknown, o: unknown): Promise<any> }; document: unknown };
    const result = await page.axe.run(page.document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return (
      result.violations as Array<{
        id: string;
        impact: string | null;
        help: string;
        nodes: Array<{ target: unknown[] }>;
      }>
    ).map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * A screenshot for the docs (docs/screenshots/<name>.png), written only when SCREENSHOTS=1
 * (`SCREENSHOTS=1 npx vitest run test/modules/help-center/help-center.browser.test.ts`), so that a test run leaves the
 * working tree as it found it.
 */
export async function docsScreenshot(page: Page, name: string): Promise<void> {
  if (!process.env.SCREENSHOTS) return;
  const dir = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** A computed colour (`rgb(r, g, b)`) as #rrggbb. */
export const hexColour = (c: string): string =>
  `#${(c.match(/\d+/g) ?? [])
    .slice(0, 3)
    .map((n) => Number(n).toString(16).padStart(2, '0'))
    .join('')}`;

/** The computed colour of `property` of the first element matching each selector, as #rrggbb. */
export async function coloursOf<K extends string>(
  page: Page,
  of: Record<K, [selector: string, property: string]>,
): Promise<Record<K, string>> {
  const pairs = Object.entries(of) as Array<[string, [string, string]]>;
  const raw = await page.evaluate((pairs) => {
    // In the page: this file compiles without the DOM's types.
    const g = globalThis as any;
    return pairs.map(([name, [sel, prop]]) => {
      const el = g.document.querySelector(sel);
      return [name, el ? (g.getComputedStyle(el)[prop] as string) : ''] as [string, string];
    });
  }, pairs);
  return Object.fromEntries(raw.map(([k, v]) => [k, hexColour(v)])) as Record<K, string>;
}
