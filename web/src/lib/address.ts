// This service's addresses, as the page it served says them (src/modules/web-app/routes.ts): its
// public URL (PUBLIC_URL) and the origins its agent socket accepts (CHECK_ORIGINS). An app opened
// at another address works, but the gateway refuses its socket: the sidebar then says where to go
// (docs/decisions.md "The app's address"). Vite's dev server serves a page without them: nothing
// is known, nothing is said.
const meta = (name: string): string | null =>
  globalThis.document?.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content.trim() || null;

/**
 * The service's public address (PUBLIC_URL, without a trailing slash), what other sites and mails
 * must name: the widget's snippet, links to share. The page's own origin when the page does not say.
 */
export function publicAddress(): string {
  return (meta('svc-public-url') ?? location.origin).replace(/\/+$/, '');
}

/** Whether the gateway accepts a socket from this page's origin (true when the page does not say). */
export function socketAllowedHere(): boolean {
  const origins = meta('svc-socket-origins');
  return origins === null || origins.split(/\s+/).includes(location.origin);
}

/** Where to open the app for its live updates: PUBLIC_URL when its socket is accepted there, else the first origin that is. */
export function liveAddress(): string | null {
  const publicUrl = meta('svc-public-url');
  const origins = meta('svc-socket-origins')?.split(/\s+/) ?? [];
  let publicOrigin: string | null = null;
  try {
    publicOrigin = publicUrl ? new URL(publicUrl).origin : null;
  } catch {
    publicOrigin = null;
  }
  if (publicUrl && publicOrigin && origins.includes(publicOrigin)) return publicUrl;
  return origins[0] ?? publicUrl;
}

/**
 * The path (and query) of a URL of this service, to load from this page's own origin: the API
 * writes its pictures' and attachments' URLs with PUBLIC_URL, and a page opened at another
 * spelling of the same service (127.0.0.1 for localhost) loads them from here all the same. Null
 * for another site's URL (the CSP would not load it).
 */
export function servicePath(url: string): string | null {
  try {
    const u = new URL(url, location.origin);
    const publicUrl = meta('svc-public-url');
    const ours = u.origin === location.origin || (publicUrl !== null && u.origin === new URL(publicUrl).origin);
    return ours ? u.pathname + u.search : null;
  } catch {
    return null;
  }
}
