// Rendering the help center's pages (and the portal's and CSAT's, which share its look): Eta
// templates (templates/, autoescaping every `<%= %>`; only the article's stored body, sanitized
// when it was written, and search snippets, escaped when they were made, are placed raw with
// `<%~ %>`). Sending them (headers, cache rules, error pages, forms) is platform/http/pages.ts.
//
// The templates and the stylesheet sit next to this module: src/modules/help-center/templates,
// or dist/templates in the build (scripts/build.mjs copies them, as it copies the migrations).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { HelpCenter } from './service.js';

export const TEMPLATES = join(dirname(fileURLToPath(import.meta.url)), 'templates');

const eta = new Eta({ views: TEMPLATES, autoEscape: true, autoTrim: [false, 'nl'], cache: true });

let baseCss: string | undefined;
/** The stylesheet's fixed part (read once). */
export const baseStylesheet = (): string => {
  baseCss ??= readFileSync(join(TEMPLATES, 'help-center.css'), 'utf8');
  return baseCss;
};

/** Everything the layout needs, whatever the page. */
export interface PageModel {
  hc: HelpCenter;
  /** <html lang>. */
  lang: string;
  /** The page's own title (the <title> adds the help center's). */
  title: string;
  description: string;
  /** Absolute; null for pages that are not to be indexed (search results, 404). */
  canonical: string | null;
  ogType: 'website' | 'article';
  /** contact and requests: the portal's contact form and customer area. */
  links: { home: string; search: string; css: string; contact: string; requests: string };
  breadcrumb?: Array<{ name: string; href: string | null }>;
  /** The search box's value. */
  q?: string;
}

/** A template's data: a page's model and what its own template shows, or the sitemap's. */
export const renderPage = (template: string, data: object): string => eta.render(template, data);
