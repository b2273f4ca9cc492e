// What the AI screens' browser tests share (assistant, ai-ticket, ai-triage, ai-settings,
// ai-search): the service and Chromium (app-harness.ts) with the instance provider on an OpenAI
// stand-in, and the owner's notice about outgoing mail put away so it stays out of screenshots.
import type { Page } from 'playwright-core';
import { type OpenAiStandIn, startOpenAiStandIn } from './ai-standin/index.js';
import { type AppHarness, startAppHarness } from './app-harness.js';

/** The key the stand-in accepts (the own-key tests type it). */
export const AI_APP_KEY = 'sk-standin-app-0000';
const KEY = AI_APP_KEY;

/** The app on a service whose AI provider is an OpenAI stand-in (`env` adds or overrides settings). */
export async function startAiApp(
  tag: string,
  env: Record<string, string> = {},
): Promise<{ ai: OpenAiStandIn; h: AppHarness }> {
  const ai = await startOpenAiStandIn({ keys: [KEY] });
  const h = await startAppHarness(
    tag,
    {
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: KEY,
      AI_MODEL: 'gpt-4.1',
      AI_FAST_MODEL: 'gpt-4.1-mini',
      ...env,
    },
    { ai: { timeoutMs: 20_000, maxRetries: 0 } },
  );
  return { ai, h };
}

/** Dismisses the owners' notice that outgoing mail is not set up (it would sit in every screenshot). */
export async function dismissMailNotice(page: Page): Promise<void> {
  await page
    .getByRole('region', { name: 'Outgoing mail is not set up' })
    .getByRole('button', { name: 'Dismiss' })
    .click();
}
