// A screen in a code file of its own, fetched when first opened (router.tsx). Unlike TanStack
// Router's lazyRouteComponent, which reloads the whole page when such a file cannot be fetched (and
// with the server away, the browser's own error page replaces the app), a file that cannot be
// fetched is the route's error (ui/route-error.tsx: the shell stays, with Retry), and retryScreens()
// lets the next render fetch it again.
import { type ComponentProps, type ComponentType, createElement, type ReactElement, use } from 'react';

const forgetters = new Set<() => void>();

export type LazyScreen<P extends object = object> = ((props: P) => ReactElement) & {
  /** Fetches the file (TanStack Router calls it before rendering the route, and on hover). */
  preload: () => Promise<void>;
};

/** The export `name` of the module `importer` fetches, as a component (React.lazy, but retryable). */
// biome-ignore lint/suspicious/noExplicitAny: a module's components take any props; P follows from the one named.
export function lazyScreen<M extends Record<K, ComponentType<any>>, K extends keyof M>(
  importer: () => Promise<M>,
  name: K,
): LazyScreen<ComponentProps<M[K]>> {
  type P = ComponentProps<M[K]>;
  let screen: ComponentType<P> | null = null;
  let error: unknown = null;
  let loading: Promise<void> | null = null;
  const forget = () => {
    error = null;
  };
  const load = (): Promise<void> => {
    if (screen || error) return Promise.resolve();
    loading ??= importer().then(
      (m) => {
        screen = m[name];
        loading = null;
      },
      (err: unknown) => {
        error = err;
        loading = null;
        forgetters.add(forget);
      },
    );
    return loading;
  };
  const Lazy = ((props: P) => {
    if (!screen && !error) use(load());
    if (error) throw error;
    return createElement(screen!, props);
  }) as LazyScreen<P>;
  // A preload is a fresh try (the router preloads before each visit, and on hover): a file that
  // could not be fetched earlier does not make a later visit fail.
  Lazy.preload = () => {
    error = null;
    return load();
  };
  return Lazy;
}

/**
 * Lets every screen whose file could not be fetched try again, and fetches again the stylesheets
 * that failed with them (Vite does not add a stylesheet it already added once).
 */
export function retryScreens(): void {
  for (const f of forgetters) f();
  forgetters.clear();
  for (const link of document.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]')) {
    if (!link.sheet) link.replaceWith(link.cloneNode() as HTMLLinkElement);
  }
}
