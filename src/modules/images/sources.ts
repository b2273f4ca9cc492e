// Automatic pictures (docs/images.md "Automatic sources"), looked up in a job:
//
// - a contact's gravatar, by the SHA-256 of the email, when the workspace's `gravatar` setting is
//   on (default off: asking Gravatar tells it who writes to the workspace);
// - a company's logo from its domain when `domain_logos` is on (default on): the icons the
//   domain's home page names (apple-touch-icon first, then the largest icon; SVG skipped), then
//   /apple-touch-icon.png and /favicon.ico (the PNG inside an ICO file);
// - a picture a widget's verified identity gives (widgetPicture; source `widget`).
//
// Every fetch goes through the webhooks' address rules (service.ts fetchPictureBytes) and every
// picture through the pool. A lookup that finds nothing, or cannot reach anything (no outside
// network), changes nothing: the picture stays as it was. An automatic picture never replaces
// an uploaded one.
//
// Lookups are queued when a contact with an email or a company with a domain is created (the
// bus's contact.created and company.created, so every way of creating one counts) and by
// POST …/avatar/refresh. The same job also removes retired pictures past the cache horizon.
import { createHash } from 'node:crypto';
import { Parser } from 'htmlparser2';
import type { Deps } from '../../deps.js';
import type { EventEnvelope } from '../../platform/events/envelope.js';
import { companyPictureFacts, setCompanyPicture } from '../companies/service.js';
import { contactPictureFacts, setContactPicture } from '../contacts/service.js';
import { workspaceSettings } from '../workspace/service.js';
import type { PictureFit } from './process.js';
import { fetchPictureBytes } from './service.js';
import { type AvatarSource, type Owner, removeRetiredPictures, storePicture } from './store.js';

export const PICTURE_LOOKUP_JOB = 'images.lookup';
export const PICTURE_REMOVAL_JOB = 'images.remove_retired';

export interface LookupJob {
  kind: 'contact' | 'company';
  workspace_id: string;
  id: string;
  /** A verified widget identity's picture (contacts only). */
  widget_url?: string;
}

/** Sources an automatic lookup may replace (an upload or a widget picture is never replaced by one). */
const AUTOMATIC: ReadonlyArray<string | null> = [null, 'gravatar', 'domain'];

/** Queues a lookup (one queued per record at a time). */
export async function queuePictureLookup(deps: Deps, job: LookupJob): Promise<void> {
  const key = `${job.kind}:${job.id}${job.widget_url ? ':widget' : ''}`;
  await deps.jobs.send(PICTURE_LOOKUP_JOB, job, { singletonKey: key, retryLimit: 0 });
}

/** Processes fetched bytes and stores them; null when they are not an acceptable picture. */
async function keep(deps: Deps, bytes: Buffer, owner: Owner, source: AvatarSource, fit: PictureFit) {
  const r = await deps.pictures.pool.process(bytes, fit);
  return r.ok ? storePicture(deps, owner, source, r) : null;
}

async function fetched(deps: Deps, url: string): Promise<Buffer | null> {
  const got = await fetchPictureBytes(deps, url);
  return got.body && got.body.length > 0 ? got.body : null;
}

/** Looks a contact's picture up (widget picture, else gravatar); whether the picture changed. */
export async function lookUpContact(deps: Deps, workspaceId: string, id: string, widgetUrl?: string): Promise<boolean> {
  const facts = await contactPictureFacts(deps, workspaceId, id);
  if (!facts) return false;
  const owner: Owner = { kind: 'contact', id, workspaceId };
  if (widgetUrl) {
    // The widget's verified identity speaks for the person: it replaces anything but an upload.
    if (facts.avatar_source === 'upload') return false;
    const bytes = await fetched(deps, widgetUrl);
    const picture = bytes ? await keep(deps, bytes, owner, 'widget', 'crop') : null;
    if (!picture) return false;
    const onlyOver = [...AUTOMATIC, 'widget'];
    return (await setContactPicture(deps, workspaceId, null, id, { picture, onlyOver })) !== null;
  }
  if (!facts.email || !AUTOMATIC.includes(facts.avatar_source)) return false;
  if (!(await workspaceSettings(deps, workspaceId))?.gravatar) return false;
  const hash = createHash('sha256').update(facts.email.trim().toLowerCase()).digest('hex');
  const bytes = await fetched(deps, deps.pictures.options.gravatarUrl(hash));
  const picture = bytes ? await keep(deps, bytes, owner, 'gravatar', 'crop') : null;
  if (!picture) return false;
  return (await setContactPicture(deps, workspaceId, null, id, { picture, onlyOver: AUTOMATIC })) !== null;
}

/** Looks a company's logo up from its domain; whether the picture changed. */
export async function lookUpCompany(deps: Deps, workspaceId: string, id: string): Promise<boolean> {
  const facts = await companyPictureFacts(deps, workspaceId, id);
  if (!facts?.domain || !AUTOMATIC.includes(facts.avatar_source)) return false;
  if (!(await workspaceSettings(deps, workspaceId))?.domain_logos) return false;
  const owner: Owner = { kind: 'company', id, workspaceId };
  for (const url of await iconCandidates(deps, facts.domain)) {
    let bytes = await fetched(deps, url);
    if (bytes && isIco(bytes)) bytes = pngInIco(bytes);
    const picture = bytes ? await keep(deps, bytes, owner, 'domain', 'fit') : null;
    if (picture) {
      return (await setCompanyPicture(deps, workspaceId, null, id, { picture, onlyOver: AUTOMATIC })) !== null;
    }
  }
  return false;
}

interface Icon {
  url: string;
  touch: boolean;
  size: number;
}

/** The icon URLs to try for a domain, best first (at most 4). */
export async function iconCandidates(deps: Deps, domain: string): Promise<string[]> {
  const home = deps.pictures.options.domainUrl(domain);
  const got = await fetchPictureBytes(deps, home);
  const icons: Icon[] = [];
  if (got.body) {
    const base = got.url;
    const parser = new Parser({
      onopentag(name, attrs) {
        if (name !== 'link' || !attrs.href) return;
        const rel = (attrs.rel ?? '').toLowerCase().split(/\s+/);
        const touch = rel.includes('apple-touch-icon') || rel.includes('apple-touch-icon-precomposed');
        if (!touch && !rel.includes('icon')) return;
        if ((attrs.type ?? '').toLowerCase().includes('svg') || /\.svgz?(?:[?#]|$)/i.test(attrs.href)) return;
        let url: string;
        try {
          url = new URL(attrs.href, base).toString();
        } catch {
          return;
        }
        if (!/^https?:$/.test(new URL(url).protocol)) return;
        const size = Math.max(0, ...(attrs.sizes ?? '').split(/\s+/).map((s) => Number(s.split(/x/i)[0]) || 0));
        icons.push({ url, touch, size });
      },
    });
    parser.write(got.body.subarray(0, 512 * 1024).toString('utf8'));
    parser.end();
  }
  icons.sort((a, b) => Number(b.touch) - Number(a.touch) || b.size - a.size);
  const origin = new URL(got.url ?? home).origin;
  const urls = [...icons.map((i) => i.url), `${origin}/apple-touch-icon.png`, `${origin}/favicon.ico`];
  return [...new Set(urls)].slice(0, 4);
}

const isIco = (b: Buffer) => b.length >= 6 && b.readUInt16LE(0) === 0 && b.readUInt16LE(2) === 1;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The largest PNG image inside an ICO file (BMP entries are not read); null when there is none. */
export function pngInIco(b: Buffer): Buffer | null {
  const count = b.readUInt16LE(4);
  let best: { size: number; data: Buffer } | null = null;
  for (let i = 0; i < count && 6 + 16 * (i + 1) <= b.length; i++) {
    const e = 6 + 16 * i;
    const side = b[e] === 0 ? 256 : b[e]!;
    const length = b.readUInt32LE(e + 8);
    const offset = b.readUInt32LE(e + 12);
    if (offset + length > b.length) continue;
    const data = b.subarray(offset, offset + length);
    if (!data.subarray(0, 8).equals(PNG_SIGNATURE)) continue;
    if (!best || side > best.size) best = { size: side, data };
  }
  return best?.data ?? null;
}

/** A verified widget identity's picture URL: looked up in a job (source `widget`). */
export async function widgetPicture(deps: Deps, workspaceId: string, contactId: string, url: string): Promise<void> {
  await queuePictureLookup(deps, { kind: 'contact', workspace_id: workspaceId, id: contactId, widget_url: url });
}

/** New contacts with an email and companies with a domain get a lookup. */
function onEvent(deps: Deps, e: EventEnvelope): void {
  let job: LookupJob | null = null;
  if (e.type === 'contact.created') {
    const c = e.data.contact as { id?: string; email?: string | null } | undefined;
    if (c?.id && c.email) job = { kind: 'contact', workspace_id: e.workspace_id, id: c.id };
  } else if (e.type === 'company.created') {
    const c = e.data.company as { id?: string; domain?: string | null } | undefined;
    if (c?.id && c.domain) job = { kind: 'company', workspace_id: e.workspace_id, id: c.id };
  }
  if (job) {
    queuePictureLookup(deps, job).catch((err) =>
      deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'picture lookup not queued'),
    );
  }
}

/** The lookup worker, the bus subscription that queues lookups, and the hourly removal. */
export async function registerPictureJobs(deps: Deps): Promise<{ stop(): void }> {
  await deps.jobs.work<LookupJob>(
    PICTURE_LOOKUP_JOB,
    async (job) => {
      try {
        if (job.kind === 'contact') await lookUpContact(deps, job.workspace_id, job.id, job.widget_url);
        else await lookUpCompany(deps, job.workspace_id, job.id);
      } catch (err) {
        // A lookup is best effort (refresh asks again): a failure is logged, not retried.
        deps.log.warn({ err: err instanceof Error ? err.message : String(err), job }, 'picture lookup failed');
      }
    },
    { concurrency: 2 },
  );
  await deps.jobs.work(PICTURE_REMOVAL_JOB, async () => {
    const removed = await removeRetiredPictures(deps);
    if (removed > 0) deps.log.info({ pictures: removed }, 'removed retired pictures');
  });
  await deps.jobs.schedule(PICTURE_REMOVAL_JOB, '23 * * * *');
  const unsubscribe = deps.bus.subscribe((e) => onEvent(deps, e));
  return { stop: unsubscribe };
}
